"""Results: the metric leaderboard and drill-down, human-score analysis, downloads and length-instruction tools (staff only)."""
from flask import Blueprint

bp = Blueprint("results", __name__)

from . import views_analysis, views_exports, views_human, views_leaderboard  # noqa: E402,F401
