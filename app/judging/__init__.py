"""Judge pages: runs, launching with a dry run, run reports, settings and prompt versions."""
from app.judging import views, views_rater  # noqa: F401  (their routes)
from app.judging.blueprint import bp

__all__ = ["bp"]
