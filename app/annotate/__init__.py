"""Annotator scoring: choosing a study, the question page, autosave and the document panel."""
from app.annotate import api, views  # noqa: F401  (their routes)
from app.annotate.blueprint import bp

__all__ = ["bp"]
