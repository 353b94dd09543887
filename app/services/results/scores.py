"""Load a study's human scores from the database as the plain records the analysis expects.

"Current" scores are each annotator's latest round in the study: starting a round again
supersedes the earlier one. Only scores of the answer versions the study shows count
(services/studies/membership), unless stale ones are asked for.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from sqlalchemy import func, select

from app.extensions import db
from app.models import (
    AnnotationRound,
    Document,
    Question,
    Score,
    Study,
    StudyAnswer,
    System,
    User,
)
from app.services.studies.assignment import shares
from app.services.studies.membership import in_latest_round, latest_rounds, shown_answers, study_scores

VIEWS = ("all", "finished")
VIEW_LABELS = {"all": "All scores", "finished": "Annotators who finished"}


@dataclass(frozen=True)
class AnnotatorProgress:
    """How far an annotator's latest round covers the included answers."""

    name: str
    active: bool
    round_number: int | None
    scored: int
    total: int

    @property
    def finished(self) -> bool:
        return self.total > 0 and self.scored >= self.total

    def to_dict(self) -> dict:
        return {"annotator": self.name, "active": self.active, "round": self.round_number,
                "scored": self.scored, "total": self.total, "finished": self.finished}


@dataclass(frozen=True)
class CurrentScores:
    """Every current score on an included answer, and each annotator's progress."""

    records: list[dict]
    progress: list[AnnotatorProgress]
    n_included: int

    @property
    def finished_annotators(self) -> list[str]:
        return [p.name for p in self.progress if p.finished]

    def for_view(self, view: str) -> list[dict]:
        """Return the records of the 'all' view, or only those of annotators who finished."""
        if view == "finished":
            finished = set(self.finished_annotators)
            return [record for record in self.records if record["annotator"] in finished]
        return self.records


def load_current_scores(study_id: int, *, include_stale: bool = False) -> CurrentScores:
    """Read the study's current scores in one query, plus each annotator's progress against their share."""
    study = db.session.get(Study, study_id)
    latest = latest_rounds(study_id)
    stmt = in_latest_round(
        study_scores(study_id, User.username, System.name, Document.id, Question.id, Document.task, Document.source,
                     Score.value, Score.answer_id, include_stale=include_stale), study_id,
    ).join(User, User.id == AnnotationRound.annotator_id)
    shown = set(db.session.scalars(shown_answers(study_id, StudyAnswer.answer_id)))
    # One string object per distinct name or id (a study repeats each thousands of times): the records are
    # kept in the analysis cache, and this halves them (14 to 8 MB at 20,000 scores).
    same: dict = {}
    one = lambda value: same.setdefault(value, value)  # noqa: E731
    records = [
        {"annotator": one(annotator), "system": one(system), "document_id": one(str(document_id)),
         "question_id": one(str(question_id)), "task": one(task), "source": one(source), "score": value,
         **({"stale": answer_id not in shown} if include_stale else {})}
        for annotator, system, document_id, question_id, task, source, value, answer_id in db.session.execute(stmt)
    ]
    sizes = dict(db.session.execute(shown_answers(study_id, StudyAnswer.question_id, func.count(StudyAnswer.id))
                                    .group_by(StudyAnswer.question_id)).all())
    total = sum(sizes.values())
    scored = Counter(record["annotator"] for record in records if not record.get("stale"))
    rounds = db.session.execute(
        select(User.id, User.username, User.active, latest.c.number).join(latest, latest.c.annotator_id == User.id)
    ).all()
    progress = []
    assigned_to = shares(study, [row[0] for row in rounds]) if study is not None else {}
    for user_id, name, active, number in sorted(rounds, key=lambda row: row[1]):
        if study is None:
            share = total
        else:
            assigned = assigned_to[user_id]
            share = sum(n for q, n in sizes.items() if q in assigned)
        progress.append(AnnotatorProgress(name, bool(active), number, scored.get(name, 0), share))
    return CurrentScores(records, progress, total)
