"""The jobs page and its polling endpoints."""
from flask import Blueprint

bp = Blueprint("jobs", __name__)

from . import views  # noqa: E402,F401
