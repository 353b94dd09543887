"""The API blueprint; its routes live in this package's view modules, its document in spec.py."""
from flask import Blueprint

from app.web.api.auth import access
from app.web.api.spec import openapi

bp = Blueprint("api", __name__)
bp.add_url_rule("/openapi.json", "openapi", access(write=False, roles=None)(openapi), methods=["GET"])
