"""The results blueprint; its routes live in this package's view modules."""
from flask import Blueprint

bp = Blueprint("results", __name__)
