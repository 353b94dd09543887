"""The jobs page and its polling endpoints."""
from app.jobs import views  # noqa: F401  (their routes)
from app.jobs.blueprint import bp

__all__ = ["bp"]
