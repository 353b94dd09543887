"""Prediction uploads: upload, preview, confirm; and the metric jobs they start."""
from app.predictions import views  # noqa: F401  (their routes)
from app.predictions.blueprint import bp

__all__ = ["bp"]
