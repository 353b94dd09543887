"""Everything the study page shows, gathered in one place for the view to render."""
from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select

from app.extensions import db
from app.models import AnnotationRound, Answer, Prediction, Score, Study, StudyAnswer, StudyQuestion, StudySystem, System, User
from app.models.corpus import REFERENCE_KINDS, REFERENCE_LABELS
from app.services.annotation.oversight import AnnotatorProgress, QuestionCoverage, annotator_progress, question_coverage
from app.services.studies.answers import Outdated, outdated
from app.services.studies.assignment import annotator_ids
from app.services.studies.references import Detection, detect, hidden_counts


@dataclass(frozen=True)
class SystemRow:
    id: int
    name: str
    in_study: bool
    answers: int      # answers the study shows
    scores: int       # scores on them, all rounds
    stale: int        # scores on versions the study no longer shows


@dataclass
class StudyOverview:
    study: Study
    questions: int
    systems: list[SystemRow]
    outdated: list[Outdated]
    detection: Detection
    hidden: dict[str, int]
    annotators: list[User]
    candidates: list[User]
    progress: list[AnnotatorProgress]
    coverage: list[QuestionCoverage]
    reference_kinds: tuple[str, ...] = REFERENCE_KINDS
    reference_labels: dict[str, str] | None = None


def _system_rows(study: Study) -> list[SystemRow]:
    members = set(db.session.scalars(select(StudySystem.system_id).where(StudySystem.study_id == study.id)))
    shown = dict(db.session.execute(
        select(StudyAnswer.system_id, func.count()).where(StudyAnswer.study_id == study.id,
                                                          StudyAnswer.excluded.is_(False))
        .group_by(StudyAnswer.system_id)).all())
    current_answers = select(StudyAnswer.answer_id).where(StudyAnswer.study_id == study.id,
                                                          StudyAnswer.excluded.is_(False))
    scored = db.session.execute(
        select(Answer.system_id, Score.answer_id.in_(current_answers), func.count(Score.id))
        .join(Score, Score.answer_id == Answer.id).join(AnnotationRound, AnnotationRound.id == Score.round_id)
        .where(AnnotationRound.study_id == study.id).group_by(Answer.system_id, Score.answer_id.in_(current_answers))
    ).all()
    scores: dict[int, int] = {}
    stale: dict[int, int] = {}
    for system_id, current, n in scored:
        (scores if current else stale)[system_id] = (scores if current else stale).get(system_id, 0) + n
    answering = set(db.session.scalars(select(Prediction.system_id).join(
        StudyQuestion, StudyQuestion.question_id == Prediction.question_id).where(StudyQuestion.study_id == study.id)))
    ids = members | answering | set(scores) | set(stale)
    systems = db.session.scalars(select(System).where(System.id.in_(ids)).order_by(System.name))
    return [SystemRow(s.id, s.name, s.id in members, shown.get(s.id, 0), scores.get(s.id, 0), stale.get(s.id, 0))
            for s in systems]


def study_overview(study: Study) -> StudyOverview:
    listed = annotator_ids(study.id)
    candidates = list(db.session.scalars(select(User).where(User.active.is_(True)).order_by(User.username)))
    return StudyOverview(
        study=study,
        questions=db.session.scalar(select(func.count()).select_from(StudyQuestion)
                                    .where(StudyQuestion.study_id == study.id)) or 0,
        systems=_system_rows(study), outdated=outdated(study.id), detection=detect(study),
        hidden=hidden_counts(study.id),
        annotators=[u for u in candidates if u.id in listed] or [],
        candidates=candidates, progress=annotator_progress(study), coverage=question_coverage(study),
        reference_labels=REFERENCE_LABELS,
    )
