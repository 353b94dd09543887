"""The researchers' view of a study: its systems, answers and references, each annotator's progress, and each
question's scores against k (`study_overview` gathers everything the study page shows)."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import datetime

from sqlalchemy import func, select

from app.extensions import db
from app.models import (
    COUNTED,
    AnnotationRound,
    Answer,
    Prediction,
    Question,
    QuestionView,
    Score,
    Study,
    StudyAllocation,
    StudyAnswer,
    StudyQuestion,
    StudySystem,
    System,
    User,
)
from app.models.corpus import REFERENCE_KINDS, REFERENCE_LABELS
from app.services.annotation.rounds import OPEN, RoundSummary, rounds_of
from app.services.cache import cached
from app.services.studies.allocation import AllocationStatus, allocation_status
from app.services.studies.answers import Outdated, outdated
from app.services.studies.assignment import annotator_ids, shares
from app.services.studies.membership import ON_PAGE, SHOWN, study_scores
from app.services.studies.references import Detection, detect, hidden_counts, record


@dataclass
class AnnotatorProgress:
    user_id: int
    username: str
    role: str
    active: bool
    round_number: int | None
    done: int
    total: int
    last_activity: datetime | None
    earlier_rounds: list[RoundSummary] = field(default_factory=list)
    documents: int = 0   # documents to read: of the questions in their share (fixed), or given so far (adaptive)
    round_id: int | None = None  # the open round's

    @property
    def percent(self) -> float:
        return 100.0 * self.done / self.total if self.total else 0.0


def _answers_per_question(study_id: int) -> dict[int, int]:
    return dict(db.session.execute(
        select(StudyAnswer.question_id, func.count(StudyAnswer.id))
        .where(StudyAnswer.study_id == study_id, ON_PAGE).group_by(StudyAnswer.question_id)
    ).all())


def _done_by_round(study_id: int, round_ids: list[int]) -> dict[int, int]:
    if not round_ids:
        return {}
    stmt = (study_scores(study_id, Score.round_id, func.count(Score.id), on_page=True)
            .where(Score.round_id.in_(round_ids)).group_by(Score.round_id))
    return dict(db.session.execute(stmt).all())


def _last_activity_by_round(round_ids: list[int]) -> dict[int, datetime]:
    if not round_ids:
        return {}
    scored = dict(db.session.execute(
        select(Score.round_id, func.max(Score.updated_at)).where(Score.round_id.in_(round_ids)).group_by(Score.round_id)
    ).all())
    viewed = dict(db.session.execute(
        select(QuestionView.round_id, func.max(QuestionView.first_viewed_at))
        .where(QuestionView.round_id.in_(round_ids)).group_by(QuestionView.round_id)
    ).all())
    return {rid: max(t for t in (scored.get(rid), viewed.get(rid)) if t is not None)
            for rid in set(scored) | set(viewed)}


def study_annotators(study: Study) -> list[User]:
    """The study's listed annotators; for an open-to-all study, every annotator and anyone who scored in it."""
    if not study.everyone_may_score:
        stmt = select(User).where(User.id.in_(annotator_ids(study.id)))
    else:
        with_rounds = select(AnnotationRound.annotator_id).where(AnnotationRound.study_id == study.id)
        stmt = select(User).where((User.role == "annotator") | User.id.in_(with_rounds))
    return list(db.session.scalars(stmt.order_by(User.username)))


def annotator_progress(study: Study) -> list[AnnotatorProgress]:
    """One row per annotator of the study, by username: scores in the open round against their share.

    The counts are cached until the study's data change; the last activity is read each time, as it
    includes the questions an annotator opened (question views change no analysis, so no counter).
    """
    rows = cached(("annotator-progress", study.id), lambda: _progress_rows(study), study=study.id)
    activity = _last_activity_by_round([row.round_id for row in rows if row.round_id is not None])
    return [replace(row, last_activity=activity.get(row.round_id)) for row in rows]


def _progress_rows(study: Study) -> list[AnnotatorProgress]:
    users = study_annotators(study)
    rounds = rounds_of(study.id, [u.id for u in users])
    open_ids = [r.id for rs in rounds.values() for r in rs if r.status == OPEN]
    done = _done_by_round(study.id, open_ids)
    sizes = _answers_per_question(study.id)
    assigned_to = shares(study, [user.id for user in users])
    given = _given_answers(study.id) if study.adaptive else {}
    document_of = dict(db.session.execute(
        select(StudyQuestion.question_id, Question.document_id).join(Question, Question.id == StudyQuestion.question_id)
        .where(StudyQuestion.study_id == study.id)).all())
    rows = []
    for user in users:
        own = rounds.get(user.id, [])
        current = next((r for r in own if r.status == OPEN), None)
        assigned = assigned_to[user.id]
        # An adaptive study counts the answers given to the annotator, never every answer of their questions.
        total = given.get(user.id, 0) if study.adaptive else sum(n for q, n in sizes.items() if q in assigned)
        rows.append(AnnotatorProgress(
            user_id=user.id, username=user.username, role=user.role, active=user.active,
            round_number=current.number if current else None,
            done=done.get(current.id, 0) if current else 0, total=total, last_activity=None,
            earlier_rounds=[r for r in own if r.status != OPEN],
            documents=len({document_of[q] for q in assigned if q in document_of}),
            round_id=current.id if current else None,
        ))
    return rows


def _given_answers(study_id: int) -> dict[int, int]:
    """Answers an adaptive study has given each annotator."""
    return dict(db.session.execute(select(StudyAllocation.user_id, func.count(StudyAllocation.id))
                                   .where(StudyAllocation.study_id == study_id).group_by(StudyAllocation.user_id)).all())


@dataclass(frozen=True)
class QuestionCoverage:
    question_id: int
    position: int
    instruction: str
    answers: int
    annotators: int      # how many annotators this question is given to (k, or everyone)
    min_scores: int      # the fewest scores any of its answers has (latest rounds)
    max_scores: int

    @property
    def complete(self) -> bool:
        return self.min_scores >= self.annotators


def question_coverage(study: Study) -> list[QuestionCoverage]:
    """Per question, how many scores its answers have (each annotator's latest round) against k."""
    latest = (select(AnnotationRound.annotator_id, func.max(AnnotationRound.number).label("number"))
              .where(AnnotationRound.study_id == study.id).group_by(AnnotationRound.annotator_id).subquery())
    counts: dict[int, int] = dict(db.session.execute(
        study_scores(study.id, Score.answer_id, func.count(Score.id))
        .join(latest, (latest.c.annotator_id == AnnotationRound.annotator_id)
              & (latest.c.number == AnnotationRound.number))
        .group_by(Score.answer_id)
    ).all())
    per_question: dict[int, list[int]] = defaultdict(list)
    for question_id, answer_id in db.session.execute(
        select(StudyAnswer.question_id, StudyAnswer.answer_id).where(StudyAnswer.study_id == study.id, SHOWN)
    ):
        per_question[question_id].append(counts.get(answer_id, 0))
    everyone = len(study_annotators(study))
    k = study.overlap if study.overlap is not None else everyone
    rows = []
    for question_id, position, instruction in db.session.execute(
        select(StudyQuestion.question_id, StudyQuestion.position, Question.instruction)
        .join(Question, Question.id == StudyQuestion.question_id)
        .where(StudyQuestion.study_id == study.id).order_by(StudyQuestion.position)
    ):
        scores = per_question.get(question_id, [])
        rows.append(QuestionCoverage(question_id, position, instruction, len(scores), k,
                                     min(scores, default=0), max(scores, default=0)))
    return rows


# -- the study page -------------------------------------------------------------------------------


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
    allocation: AllocationStatus | None = None  # an adaptive study's stopping rule, now


def _system_rows(study: Study) -> list[SystemRow]:
    members = set(db.session.scalars(select(StudySystem.system_id).where(StudySystem.study_id == study.id)))
    shown = dict(db.session.execute(
        select(StudyAnswer.system_id, func.count()).where(StudyAnswer.study_id == study.id,
                                                          SHOWN)
        .group_by(StudyAnswer.system_id)).all())
    current_answers = select(StudyAnswer.answer_id).where(StudyAnswer.study_id == study.id, SHOWN)
    scored = db.session.execute(
        select(Answer.system_id, Score.answer_id.in_(current_answers), func.count(Score.id))
        .join(Score, Score.answer_id == Answer.id).join(AnnotationRound, AnnotationRound.id == Score.round_id)
        .where(AnnotationRound.study_id == study.id, COUNTED)
        .group_by(Answer.system_id, Score.answer_id.in_(current_answers))
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


@dataclass(frozen=True)
class _StudyFigures:
    """What the study page counts and checks, cached until the study's data change."""

    questions: int
    systems: list[SystemRow]
    outdated: list[Outdated]
    detection: Detection
    hidden: dict[str, int]
    coverage: list[QuestionCoverage]


def _study_figures(study: Study) -> _StudyFigures:
    detection = detect(study)
    record(detection)  # the pairs compared for the first time (answers of systems that left, older studies)
    return _StudyFigures(
        questions=db.session.scalar(select(func.count()).select_from(StudyQuestion)
                                    .where(StudyQuestion.study_id == study.id)) or 0,
        systems=_system_rows(study), outdated=outdated(study.id), detection=detection,
        hidden=hidden_counts(study.id), coverage=question_coverage(study),
    )


def study_overview(study: Study) -> StudyOverview:
    figures = cached(("study-figures", study.id), lambda: _study_figures(study), study=study.id)
    listed = annotator_ids(study.id)
    # Deactivated accounts still on the list stay in the form, so saving it does not drop them unseen.
    candidates = list(db.session.scalars(select(User).where(User.active.is_(True) | User.id.in_(listed))
                                         .order_by(User.username)))
    return StudyOverview(
        study=study, questions=figures.questions, systems=figures.systems, outdated=figures.outdated,
        detection=figures.detection, hidden=figures.hidden,
        annotators=[u for u in candidates if u.id in listed] or [],
        candidates=candidates, progress=annotator_progress(study), coverage=figures.coverage,
        reference_labels=REFERENCE_LABELS,
        allocation=allocation_status(study) if study.adaptive else None,
    )
