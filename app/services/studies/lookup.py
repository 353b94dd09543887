"""Finding studies: by id or name, the default one, and the ones an account scores in."""
from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select

from app.extensions import db
from app.models import (
    COUNTED,
    AnnotationRound,
    Score,
    Study,
    StudyAnnotator,
    StudyAnswer,
    StudyQuestion,
    StudySystem,
    User,
)
from app.models.ids import parse_db_id
from app.services.studies.assignment import scores_in
from app.services.studies.membership import SHOWN


class NoStudy(LookupError):
    """The study asked for does not exist, or none was named where several could be meant."""


def find_study(reference: str | int | None) -> Study | None:
    """A study by id (digits) or exact name (case-insensitive); None when there is none."""
    if reference is None or reference == "":
        return None
    text = str(reference).strip()
    study_id = parse_db_id(text)
    if study_id is not None:
        found = db.session.get(Study, study_id)
        if found is not None:
            return found
    return db.session.scalars(select(Study).where(func.lower(Study.name) == text.lower())).first()


def all_studies() -> list[Study]:
    return list(db.session.scalars(select(Study).order_by(Study.created_at, Study.id)))


def default_study() -> Study | None:
    """The study meant when none is named: the only open one, else the only one."""
    studies = all_studies()
    open_ = [study for study in studies if study.status == "open"]
    if len(open_) == 1:
        return open_[0]
    return studies[0] if len(studies) == 1 else None


def require_study(reference: str | int | None) -> Study:
    """The named study, or the default one; NoStudy says what to name when it cannot tell."""
    if reference not in (None, ""):
        study = find_study(reference)
        if study is None:
            raise NoStudy(f"no study named {reference!r}")
        return study
    study = default_study()
    if study is None:
        names = ", ".join(s.name for s in all_studies()) or "none yet"
        raise NoStudy(f"name a study (studies: {names})")
    return study


def studies_for(user: User) -> list[Study]:
    """The open studies this account scores in, oldest first (assignment.scores_in: the pages' rule)."""
    stmt = select(Study).where(scores_in(Study.id, user.id)).order_by(Study.created_at, Study.id)
    return list(db.session.scalars(stmt))


@dataclass(frozen=True)
class StudyRow:
    study: Study
    questions: int
    systems: int
    answers: int
    annotators: int  # listed accounts (see study.everyone_may_score)
    scores: int


def study_rows() -> list[StudyRow]:
    """Every study with its sizes, for the list page and `study list`."""
    def counts(model, column) -> dict[int, int]:
        return dict(db.session.execute(select(column, func.count()).select_from(model).group_by(column)).all())

    questions = counts(StudyQuestion, StudyQuestion.study_id)
    systems = counts(StudySystem, StudySystem.study_id)
    annotators = counts(StudyAnnotator, StudyAnnotator.study_id)
    answers = dict(db.session.execute(select(StudyAnswer.study_id, func.count()).where(SHOWN)
                                      .group_by(StudyAnswer.study_id)).all())
    scores = dict(db.session.execute(select(AnnotationRound.study_id, func.count(Score.id))
                                     .join(Score, Score.round_id == AnnotationRound.id).where(COUNTED)
                                     .group_by(AnnotationRound.study_id)).all())
    return [StudyRow(study, questions.get(study.id, 0), systems.get(study.id, 0), answers.get(study.id, 0),
                     annotators.get(study.id, 0), scores.get(study.id, 0)) for study in all_studies()]
