"""Immutable answer versions: what a study shows is pinned, and moving it on is explicit.

An upload that replaces a prediction's text changes the prediction only; the answer versions
studies pinned keep their text, and every score keeps pointing at the version it was given for.
A researcher moves a study to the newest text system by system; the scores of the old version
then become stale (kept, exported with a flag, left out of results by default).
"""
from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select

from app.core.text import sha256_text, word_count
from app.extensions import db
from app.models import (
    COUNTED,
    AnnotationRound,
    Answer,
    Prediction,
    Score,
    Study,
    StudyAnswer,
    StudyQuestion,
    StudySystem,
    System,
)
from app.models.corpus import LONG_ANSWER_HELD
from app.services.studies import twins
from app.services.studies.membership import SHOWN


def snapshot(prediction: Prediction) -> Answer:
    """Return the answer version holding the prediction's current text, writing it the first time."""
    sha = prediction.text_sha256 or sha256_text(prediction.text)
    found = db.session.scalars(
        select(Answer).where(Answer.prediction_id == prediction.id, Answer.sha256 == sha)
    ).first()
    if found is not None:
        return found
    latest = db.session.scalar(select(func.max(Answer.version)).where(Answer.prediction_id == prediction.id))
    answer = Answer(prediction_id=prediction.id, system_id=prediction.system_id, question_id=prediction.question_id,
                    version=(latest or 0) + 1, text=prediction.text, sha256=sha,
                    word_count=word_count(prediction.text))
    db.session.add(answer)
    db.session.flush()
    return answer


@dataclass
class PinReport:
    system: str
    moved: int = 0        # slots now showing a newer version
    added: int = 0        # slots that did not exist (new question or new answer)
    stale_scores: int = 0  # scores given to the versions that are no longer shown

    def describe(self) -> str:
        return (f"{self.system}: {self.moved} answer(s) move to their newest version, {self.added} added; "
                f"{self.stale_scores} score(s) become stale (kept and exported, not counted)")


def _current_predictions(study_id: int, system_id: int) -> list[Prediction]:
    """The system's predictions on the study's questions, except answers held back as too long for annotators."""
    stmt = (
        select(Prediction).join(StudyQuestion, StudyQuestion.question_id == Prediction.question_id)
        .where(StudyQuestion.study_id == study_id, Prediction.system_id == system_id,
               Prediction.long_answer != LONG_ANSWER_HELD)
        .order_by(StudyQuestion.position)
    )
    return list(db.session.scalars(stmt))


def _scores_on(study_id: int, answer_ids: list[int]) -> int:
    if not answer_ids:
        return 0
    return db.session.scalar(
        select(func.count(Score.id)).join(AnnotationRound, AnnotationRound.id == Score.round_id)
        .where(AnnotationRound.study_id == study_id, Score.answer_id.in_(answer_ids), COUNTED)
    ) or 0


def pin_latest(study_id: int, system_id: int, *, dry_run: bool = False, only_new: bool = False) -> PinReport:
    """Show the system's newest answer texts on every question of the study; say what becomes stale.

    With `dry_run` nothing is written: the report says what pinning would do. With `only_new`
    only questions without a slot get one; pinned versions stay as they are.
    """
    system = db.session.get(System, system_id)
    report = PinReport(system=system.name if system else str(system_id))
    slots = {slot.question_id: slot for slot in db.session.scalars(
        select(StudyAnswer).where(StudyAnswer.study_id == study_id, StudyAnswer.system_id == system_id)
    )}
    replaced: list[int] = []
    for prediction in _current_predictions(study_id, system_id):
        sha = prediction.text_sha256 or sha256_text(prediction.text)
        slot = slots.get(prediction.question_id)
        if slot is not None and (only_new or (slot.answer.sha256 == sha and slot.answer.prediction_id == prediction.id)):
            continue
        if slot is None:
            report.added += 1
        else:
            report.moved += 1
            replaced.append(slot.answer_id)
        if dry_run:
            continue
        answer = snapshot(prediction)
        if slot is None:
            db.session.add(StudyAnswer(study_id=study_id, question_id=prediction.question_id, system_id=system_id,
                                       answer_id=answer.id, excluded=not _in_study(study_id, system_id)))
        else:
            slot.answer_id = answer.id
    report.stale_scores = _scores_on(study_id, replaced)
    if not dry_run:
        db.session.flush()
        if report.added or report.moved:
            twins.refresh(db.session.get(Study, study_id))  # an answer joined or moved: which ones show alike
    return report


def _in_study(study_id: int, system_id: int) -> bool:
    return db.session.scalar(select(StudySystem.id).where(
        StudySystem.study_id == study_id, StudySystem.system_id == system_id)) is not None


@dataclass(frozen=True)
class Outdated:
    system_id: int
    system: str
    answers: int        # shown answers whose prediction has a newer text
    scores: int         # scores that moving on would make stale


def outdated(study_id: int) -> list[Outdated]:
    """Systems of the study with newer answer texts than the study shows, and what moving on costs."""
    rows = db.session.execute(
        select(StudyAnswer.system_id, System.name, StudyAnswer.answer_id)
        .join(Answer, Answer.id == StudyAnswer.answer_id)
        .join(Prediction, Prediction.id == Answer.prediction_id)
        .join(System, System.id == StudyAnswer.system_id)
        .where(StudyAnswer.study_id == study_id, SHOWN,
               Prediction.text_sha256 != Answer.sha256, Prediction.long_answer != LONG_ANSWER_HELD)
    ).all()
    by_system: dict[int, tuple[str, list[int]]] = {}
    for system_id, name, answer_id in rows:
        by_system.setdefault(system_id, (name, []))[1].append(answer_id)
    return [Outdated(system_id, name, len(ids), _scores_on(study_id, ids))
            for system_id, (name, ids) in sorted(by_system.items(), key=lambda item: item[1][0])]
