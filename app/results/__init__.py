"""Results: human-score analysis, metrics against humans, downloads and length-instruction tools (staff only)."""
from app.results import views_analysis, views_exports, views_human, views_table2  # noqa: F401  (their routes)
from app.results.blueprint import bp

__all__ = ["bp"]
