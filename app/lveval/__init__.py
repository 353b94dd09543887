"""LV-Eval: level curves, its result table, the context ceiling, needle heatmaps and ablations (staff only)."""
from . import views  # noqa: F401  (their routes)
from .blueprint import bp

__all__ = ["bp"]
