"""Sign-in and sign-out."""
from app.auth import views  # noqa: F401  (their routes)
from app.auth.blueprint import bp

__all__ = ["bp"]
