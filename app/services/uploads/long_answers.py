"""Answers too long for human evaluation: held out of studies until a researcher decides to show them.

The metrics score every answer; only what annotators are shown is capped (MAX_HUMAN_ANSWER_CHARS,
docs/uploads.md, "Limits"), because one huge answer makes every annotator's question page huge and slow.
"""
from __future__ import annotations

from sqlalchemy import func, select, update

from app.extensions import db
from app.models import Prediction, StudySystem, System
from app.models.corpus import LONG_ANSWER_HELD, LONG_ANSWER_SHOWN
from app.services.input_rules import MAX_HUMAN_ANSWER_CHARS

__all__ = ["MAX_HUMAN_ANSWER_CHARS", "long_answer_counts", "set_long_answers"]


def long_answer_counts() -> dict[int, dict[str, int]]:
    """{system id: {"held": n, "shown": m}} for systems with answers over the cap."""
    counts: dict[int, dict[str, int]] = {}
    for system_id, flag, number in db.session.execute(
        select(Prediction.system_id, Prediction.long_answer, func.count())
        .where(Prediction.long_answer != "").group_by(Prediction.system_id, Prediction.long_answer)
    ):
        counts.setdefault(system_id, {LONG_ANSWER_HELD: 0, LONG_ANSWER_SHOWN: 0})[flag] = number
    return counts


def set_long_answers(system: System, *, show: bool) -> int:
    """Show the system's over-long answers to annotators, or hold them back; return how many changed.

    Shown answers join the system's studies at once (on questions they have no slot for yet);
    holding them back again keeps slots already pinned, so no score loses its answer.
    """
    from app.services.studies.answers import pin_latest

    old, new = (LONG_ANSWER_HELD, LONG_ANSWER_SHOWN) if show else (LONG_ANSWER_SHOWN, LONG_ANSWER_HELD)
    changed = db.session.execute(
        update(Prediction).where(Prediction.system_id == system.id, Prediction.long_answer == old)
        .values(long_answer=new)
    ).rowcount or 0
    if show and changed:
        for study_id in db.session.scalars(select(StudySystem.study_id).where(StudySystem.system_id == system.id)):
            pin_latest(study_id, system.id, only_new=True)
    db.session.commit()
    return changed
