"""The metric leaderboard: one row per system or per task, and the per-question drill-down (staff only)."""
from app.leaderboard import views  # noqa: F401  (their routes)
from app.leaderboard.blueprint import bp

__all__ = ["bp"]
