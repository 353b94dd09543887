"""Home page and health check."""
from app.core import views  # noqa: F401  (their routes)
from app.core.blueprint import bp

__all__ = ["bp"]
