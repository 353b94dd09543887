"""Home page and health check."""
from flask import Blueprint

bp = Blueprint("core", __name__)

from . import views  # noqa: E402,F401
