"""The generation blueprint; its routes live in this package's view modules."""
from flask import Blueprint

bp = Blueprint("generation", __name__)
