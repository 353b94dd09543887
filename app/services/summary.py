"""Row counts of the main tables."""
from __future__ import annotations

from sqlalchemy import func, select

from app.extensions import db
from app.models import (
    Document,
    Job,
    Prediction,
    Question,
    Reference,
    Score,
    System,
    User,
)

COUNTED = {
    "documents": Document, "questions": Question, "references": Reference, "systems": System,
    "predictions": Prediction, "users": User, "scores": Score, "jobs": Job,
}


def counts() -> dict[str, int]:
    """Return {"documents": n, "questions": n, …} for the summary command and /healthz."""
    return {name: db.session.scalar(select(func.count()).select_from(model)) or 0 for name, model in COUNTED.items()}
