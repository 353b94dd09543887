"""LV-Eval: level curves, its result table, the context ceiling, needle heatmaps and ablations (staff only)."""
from app.lveval import views  # noqa: F401  (their routes)
from app.lveval.blueprint import bp

__all__ = ["bp"]
