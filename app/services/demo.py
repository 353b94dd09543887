"""The shipped demo data set."""
from __future__ import annotations

from sqlalchemy import select

from ..config import REPO_ROOT
from ..extensions import db
from ..models import Document
from .importers import ImportReport, import_path

DEMO_PATH = REPO_ROOT / "data" / "demo"


def load_demo() -> ImportReport:
    """Import data/demo; safe to run again."""
    return import_path(DEMO_PATH)


def database_is_empty() -> bool:
    return db.session.scalar(select(Document.id).limit(1)) is None
