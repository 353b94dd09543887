"""Prediction uploads: upload, preview, confirm; and the metric jobs they start."""
from flask import Blueprint

bp = Blueprint("predictions", __name__)

from . import views  # noqa: E402,F401
