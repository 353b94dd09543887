"""Admin pages: user accounts."""
from app.admin import views  # noqa: F401  (their routes)
from app.admin.blueprint import bp

__all__ = ["bp"]
