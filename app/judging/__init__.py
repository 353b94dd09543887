"""Judge pages: runs, launching with a dry run, run reports, settings and prompt versions."""
from . import views, views_rater  # noqa: F401  (their routes)
from .blueprint import bp

__all__ = ["bp"]
