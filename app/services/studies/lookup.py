"""Finding studies: by id or by name, the default one, and the ones an account scores in.

A study is addressed by its id or by its name as the caller says, never as the text looks: the API's
paths and the pages take ids (`/api/v1/studies/{id}`, `?study=<id>`), names are asked for by name
(`GET /api/v1/studies?name=`, `--study NAME`, a new study's name), so a study named "1" is the study
named "1" and never the one whose id is 1.
"""
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
from app.models.ids import MAX_DB_ID
from app.services.studies.assignment import scores_in
from app.services.studies.membership import SHOWN


class NoStudy(LookupError):
    """The study asked for does not exist, or none was named where several could be meant."""


def find_study(*, study_id: int | None = None, name: str | None = None) -> Study | None:
    """The study with this id, or with this name (case-insensitive, as names are unique), whichever the caller
    gives; None when there is none. The one resolver of the API, the pages, the commands and new names."""
    if (study_id is None) == (name is None):
        raise TypeError("find_study takes either study_id or name")
    if study_id is not None:
        return db.session.get(Study, study_id) if 0 <= study_id <= MAX_DB_ID else None
    name = name.strip()
    if not name:
        return None
    return db.session.scalars(select(Study).where(func.lower(Study.name) == func.lower(name))
                              .order_by(Study.id)).first()


def all_studies() -> list[Study]:
    return list(db.session.scalars(select(Study).order_by(Study.created_at, Study.id)))


def default_study() -> Study | None:
    """The study meant when none is named: the only open one, else the only one."""
    studies = all_studies()
    open_ = [study for study in studies if study.status == "open"]
    if len(open_) == 1:
        return open_[0]
    return studies[0] if len(studies) == 1 else None


def require_study(*, study_id: int | None = None, name: str | None = None) -> Study:
    """The study with this id or name, or (given neither) the default one; NoStudy says what to name."""
    if study_id is not None or name:
        study = find_study(study_id=study_id) if study_id is not None else find_study(name=name)
        if study is None:
            raise NoStudy(f"no study with id {study_id}" if study_id is not None else f"no study named {name!r}")
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
