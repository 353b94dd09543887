"""The shipped demo data set: fictional, marked as demo, and its own study (kept apart: services.demo_scope)."""
from __future__ import annotations

from sqlalchemy import select

from app.config import REPO_ROOT
from app.extensions import db
from app.models import Document, Study, System
from app.services.importers import ImportReport, import_path

DEMO_PATH = REPO_ROOT / "data" / "demo"
DEMO_STUDY = "Demo"
def load_demo() -> ImportReport:
    """Import data/demo as demo data (L-Eval files and the LV-Eval model folders) and open its study; safe to
    run again."""
    from app.services.system_keys import apply_keys_file

    report = import_path(DEMO_PATH, demo=True)
    if not report.failed:
        ensure_demo_study()
    # The LV-Eval demo's leaderboard keys and ablation tags (never over a researcher's edits).
    apply_keys_file(DEMO_PATH / "lveval" / "systems.json")
    return report


def ensure_demo_study() -> Study | None:
    """Create the "Demo" study over the demo's human-evaluation questions and systems, once."""
    from app.services.studies.setup import (
        StudySpec,
        answering_systems,
        create_study,
        subset_questions,
    )

    existing = db.session.scalars(select(Study).where(Study.is_demo.is_(True))).first()
    if existing is not None:
        return existing
    questions = subset_questions(demo=True)
    if not questions:
        return None
    systems = [sid for sid in answering_systems(questions)
               if db.session.get(System, sid).is_demo]
    name = DEMO_STUDY if db.session.scalar(select(Study.id).where(Study.name == DEMO_STUDY)) is None else "Demo (shipped)"
    return create_study(StudySpec(
        name=name, description="The fictional demo data set shipped with LEval Studio; delete it when you are done.",
        question_ids=questions, system_ids=systems, status="open", is_demo=True,
    ))


def database_is_empty() -> bool:
    """True when nothing was ever imported: the only database the demo is loaded into."""
    return db.session.scalar(select(Document.id).limit(1)) is None
