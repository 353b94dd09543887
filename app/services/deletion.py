"""Deleting a study, a system, an upload or the demo: say what goes, keep every human score safe.

Deleting anything that holds human scores needs `force`, and those scores are first written to
`<instance>/deleted/<what>-<time>.jsonl` (the jsonl export's rows, per study). Nothing else is
lost: other studies, systems and uploads are untouched.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy import delete, func, select

from app.extensions import db
from app.models import (
    AnnotationRound,
    Answer,
    Document,
    Prediction,
    PredictionFile,
    Question,
    Score,
    Study,
    System,
)
from app.services.demo_scope import both_sides
from app.services.folders import deleted_folder


class DeletionRefused(ValueError):
    """Deleting would lose human scores and `force` was not given."""


@dataclass
class DeletionPlan:
    what: str                     # e.g. "system 'gpt4-32k'"
    counts: dict[str, int] = field(default_factory=dict)
    score_ids: list[int] = field(default_factory=list)

    @property
    def scores(self) -> int:
        return len(self.score_ids)

    def describe(self) -> str:
        parts = [f"{n} {name}" for name, n in self.counts.items() if n]
        goes = ", ".join(parts) if parts else "nothing else"
        return f"Deleting {self.what} removes {goes}; {self.scores} human score(s)."


def _scores_where(*conditions) -> list[int]:
    stmt = (select(Score.id).join(AnnotationRound, AnnotationRound.id == Score.round_id)
            .join(Answer, Answer.id == Score.answer_id).where(*conditions))
    return list(db.session.scalars(stmt))


def _count(model, *conditions) -> int:
    return db.session.scalar(select(func.count()).select_from(model).where(*conditions)) or 0


def plan_study(study: Study) -> DeletionPlan:
    return DeletionPlan(
        what=f"study '{study.name}'",
        counts={"annotation rounds": _count(AnnotationRound, AnnotationRound.study_id == study.id)},
        score_ids=_scores_where(AnnotationRound.study_id == study.id),
    )


def plan_system(system: System) -> DeletionPlan:
    return DeletionPlan(
        what=f"system '{system.name}'",
        counts={"predictions": _count(Prediction, Prediction.system_id == system.id),
                "prediction files": _count(PredictionFile, PredictionFile.system_id == system.id)},
        score_ids=_scores_where(Answer.system_id == system.id),
    )


def plan_upload(file: PredictionFile) -> DeletionPlan:
    predictions = select(Prediction.id).where(Prediction.file_id == file.id)
    return DeletionPlan(
        what=f"upload '{file.filename}' of system '{file.system.name}'",
        counts={"predictions": _count(Prediction, Prediction.file_id == file.id)},
        score_ids=_scores_where(Answer.prediction_id.in_(predictions)),
    )


def plan_demo() -> DeletionPlan:
    with both_sides():  # the demo's rows, whichever side the page shows
        return _plan_demo()


def _plan_demo() -> DeletionPlan:
    demo_docs = select(Document.id).where(Document.is_demo.is_(True))
    demo_questions = select(Question.id).where(Question.document_id.in_(demo_docs))
    demo_studies = select(Study.id).where(Study.is_demo.is_(True))
    return DeletionPlan(
        what="the demo data set",
        counts={"studies": _count(Study, Study.is_demo.is_(True)),
                "systems": _count(System, System.is_demo.is_(True)),
                "documents": _count(Document, Document.is_demo.is_(True))},
        score_ids=_scores_where(AnnotationRound.study_id.in_(demo_studies) | Answer.question_id.in_(demo_questions)
                                | Answer.system_id.in_(select(System.id).where(System.is_demo.is_(True)))),
    )


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")[:60] or "item"


def export_before_deleting(plan: DeletionPlan) -> Path | None:
    """Write the plan's scores, per study, as jsonl rows into <instance>/deleted/; return the file."""
    if not plan.score_ids:
        return None
    from app.services.exports.rows import score_rows

    study_ids = sorted(set(db.session.scalars(
        select(AnnotationRound.study_id).join(Score, Score.round_id == AnnotationRound.id)
        .where(Score.id.in_(plan.score_ids))
    )))
    folder = deleted_folder()
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    path = folder / f"{_slug(plan.what)}-{stamp}.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for study_id in study_ids:
            for row in score_rows(study_id, "all", score_ids=plan.score_ids):
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def _carry_out(plan: DeletionPlan, force: bool, delete_rows) -> Path | None:
    if plan.scores and not force:
        raise DeletionRefused(f"{plan.describe()} Those scores would be lost: confirm with force (--force), and "
                              "they are exported first.")
    saved = export_before_deleting(plan)
    delete_rows()
    db.session.commit()
    return saved


def delete_study(study: Study, *, force: bool = False) -> Path | None:
    study_id = study.id
    return _carry_out(plan_study(study), force, lambda: db.session.execute(delete(Study).where(Study.id == study_id)))


def delete_system(system: System, *, force: bool = False) -> Path | None:
    system_id = system.id
    return _carry_out(plan_system(system), force,
                      lambda: db.session.execute(delete(System).where(System.id == system_id)))


def delete_upload(file: PredictionFile, *, force: bool = False) -> Path | None:
    file_id = file.id

    def rows() -> None:
        db.session.execute(delete(Prediction).where(Prediction.file_id == file_id))
        db.session.execute(delete(PredictionFile).where(PredictionFile.id == file_id))

    return _carry_out(plan_upload(file), force, rows)


def delete_demo(*, force: bool = False) -> Path | None:
    def rows() -> None:
        db.session.execute(delete(Study).where(Study.is_demo.is_(True)))
        db.session.execute(delete(System).where(System.is_demo.is_(True)))
        db.session.execute(delete(Document).where(Document.is_demo.is_(True)))

    with both_sides():
        return _carry_out(_plan_demo(), force, rows)
