"""Results: human-score analysis, metrics against humans, downloads and length-instruction tools (staff only)."""
from app.web.results import analysis, exports, human, table2  # noqa: F401  (their routes)
from app.web.results.blueprint import bp

__all__ = ["bp"]
