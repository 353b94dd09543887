"""The API blueprint; its routes live in this package's view modules, its document in spec.py."""
from flask import Blueprint

from app.web.api.spec import register

bp = Blueprint("api", __name__)
register(bp)
