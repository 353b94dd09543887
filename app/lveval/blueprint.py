"""The LV-Eval blueprint; its routes live in this package's view modules."""
from flask import Blueprint

bp = Blueprint("lveval", __name__)
