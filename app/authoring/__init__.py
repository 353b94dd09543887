"""Authoring pages: write new instruction/answer pairs with evidence on a long document."""
from app.authoring import views  # noqa: F401  (their routes)
from app.authoring.blueprint import bp

__all__ = ["bp"]
