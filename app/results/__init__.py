"""Results: the metric leaderboard and its drill-down."""
from flask import Blueprint

bp = Blueprint("results", __name__)

from . import views_leaderboard  # noqa: E402,F401
