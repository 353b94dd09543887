"""The authoring blueprint; its routes live in this package's view modules."""
from flask import Blueprint

bp = Blueprint("authoring", __name__)
