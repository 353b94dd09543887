"""Authoring pages: write new instruction/answer pairs with evidence on a long document."""
from . import views  # noqa: F401  (their routes)
from .blueprint import bp

__all__ = ["bp"]
