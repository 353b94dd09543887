"""Creating and editing studies: questions, systems, references, annotators, overlap and status."""
from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from sqlalchemy import delete, func, select

from app.extensions import db
from app.models import (
    AnnotationRound,
    Document,
    Prediction,
    Question,
    Score,
    Study,
    StudyAnnotator,
    StudyAnswer,
    StudyQuestion,
    StudySystem,
    System,
    User,
)
from app.models.corpus import REFERENCE_KINDS
from app.models.studies import ALLOCATIONS, REFERENCE_POLICIES, STUDY_STATUSES
from app.services import question_sets as sets
from app.services.demo_scope import questions_are_demo
from app.services.input_rules import study_name_problem, text_problem
from app.services.planner_statistics import STUDY_TABLES, analyze
from app.services.question_sets import subset_questions  # noqa: F401  (re-exported: callers create the demo study with it)
from app.services.studies import assignment, references, twins
from app.services.studies.answers import pin_latest
from app.services.studies.lookup import find_study

TRANSITIONS = {"draft": ("open",), "open": ("closed",), "closed": ("open",)}


class StudyError(ValueError):
    """A study request that cannot be honoured; the message says why, and `field` names the field when one is at fault."""

    def __init__(self, message: str, *, field: str | None = None):
        super().__init__(message)
        self.field = field


@dataclass
class StudySpec:
    name: str
    description: str = ""
    question_ids: list[int] | None = None       # None: the human-evaluation subset (demo left out)
    system_ids: list[int] | None = None         # None: every system that answers those questions
    reference_kinds: list[str] = field(default_factory=lambda: list(REFERENCE_KINDS))
    reference_policy: str = "hide"
    overlap: int | None = None
    # None: every account may score (an explicit choice); a list: only these accounts, at least one.
    annotator_ids: list[int] | None = None
    status: str = "draft"
    is_demo: bool = False
    # "fixed" (overlap k, as above) or "adaptive" (services/studies/allocation.py): then a budget.
    allocation: str = "fixed"
    budget_documents: int | None = None
    budget_answers: int | None = None
    budget_hours: float | None = None
    min_per_answer: int | None = None
    tie_margin: float | None = None
    # Identical answers of one question shown once, the score recorded for each system (services/studies/twins.py).
    merge_identical: bool = True
    # Adaptive: documents every annotator reads first (None: 1), the start window in hours, a cap per annotator.
    calibration_documents: int | None = None
    start_window_hours: float | None = None
    max_documents_per_annotator: int | None = None


def answering_systems(question_ids: list[int]) -> list[int]:
    """Systems with at least one prediction on these questions, by name."""
    if not question_ids:
        return []
    return list(db.session.scalars(
        select(System.id).where(System.id.in_(
            select(Prediction.system_id).where(Prediction.question_id.in_(question_ids))
        )).order_by(System.name)
    ))


def _check_name(name: str, study_id: int | None = None) -> str:
    name = (name or "").strip()
    problem = study_name_problem(name)
    if problem:
        raise StudyError(f"{problem[0].upper()}{problem[1:]}.", field="name")
    taken = find_study(name=name)
    if taken is not None and taken.id != study_id:
        raise StudyError(f"A study named '{name}' already exists.", field="name")
    return name


def _check_references(kinds: list[str], policy: str) -> None:
    unknown = [kind for kind in kinds if kind not in REFERENCE_KINDS]
    if unknown:
        raise StudyError(f"Unknown reference kind(s): {', '.join(unknown)}; choose from {', '.join(REFERENCE_KINDS)}.")
    if policy not in REFERENCE_POLICIES:
        raise StudyError(f"Reference policy must be one of {', '.join(REFERENCE_POLICIES)}.")


EMPTY_LIST = ("Check at least one annotator, or choose that every account may score: a study restricted to "
              "its annotators needs one. Nothing was changed.")


def _check_annotators(user_ids: list[int] | None) -> list[int] | None:
    """The listed accounts without repeats (None: every account may score); an empty list is refused."""
    if user_ids is None:
        return None
    wanted = list(dict.fromkeys(user_ids))
    if not wanted:
        raise StudyError(EMPTY_LIST)
    found = set(db.session.scalars(select(User.id).where(User.id.in_(wanted))))
    if len(found) != len(wanted):
        raise StudyError("No such user in the annotator list.")
    return wanted


def _check_overlap(overlap: int | None, annotator_ids: list[int] | None) -> None:
    if overlap is None:
        return
    if not annotator_ids:
        raise StudyError("An overlap needs the study's annotators listed: who shares the answers?")
    if not 1 <= overlap <= len(annotator_ids):
        raise StudyError(f"Overlap must be between 1 and the number of annotators ({len(annotator_ids)}).")


def _check_allocation(spec: StudySpec) -> None:
    if spec.allocation not in ALLOCATIONS:
        raise StudyError(f"Allocation must be one of {', '.join(ALLOCATIONS)}.")
    budget = (spec.budget_documents, spec.budget_answers, spec.budget_hours, spec.min_per_answer, spec.tie_margin,
              spec.calibration_documents, spec.start_window_hours, spec.max_documents_per_annotator)
    if spec.allocation == "fixed":
        if any(value is not None for value in budget):
            raise StudyError("A budget, a minimum per answer, a tie margin, calibration documents, a start window "
                             "and a cap per annotator belong to an adaptive study (allocation adaptive).")
        return
    if spec.overlap is not None:
        raise StudyError("An adaptive study chooses how many annotators score each answer: leave the overlap out "
                         "(set a minimum per answer instead).")
    if spec.budget_documents is None and spec.budget_answers is None and spec.budget_hours is None:
        raise StudyError("An adaptive study needs a budget: documents read, answers scored or annotator-hours.")
    for name, value in (("budget of documents", spec.budget_documents), ("budget of answers", spec.budget_answers),
                        ("minimum per answer", spec.min_per_answer),
                        ("cap of documents per annotator", spec.max_documents_per_annotator)):
        if value is not None and value < 1:
            raise StudyError(f"The {name} must be at least 1.")
    if spec.calibration_documents is not None and spec.calibration_documents not in (1, 2):
        raise StudyError("The calibration documents must be 1 or 2.")
    for name, value in (("budget of hours", spec.budget_hours), ("tie margin", spec.tie_margin),
                        ("start window", spec.start_window_hours)):
        if value is not None and not (value > 0 and value < 1e6):
            raise StudyError(f"The {name} must be a positive number.")


def create_study(spec: StudySpec, *, by_user_id: int | None = None) -> Study:
    """Create a study, pin every system's current answers and check them against the references."""
    name = _check_name(spec.name)
    questions = (sets.question_ids("human_eval") if spec.question_ids is None
                 else list(dict.fromkeys(spec.question_ids)))
    if not questions:
        raise StudyError("The study has no questions: import L-Eval's human-evaluation subset, or choose questions.")
    known = set(db.session.scalars(select(Question.id).where(Question.id.in_(questions))))
    if len(known) != len(questions):
        raise StudyError(f"No such question: {', '.join(str(q) for q in questions if q not in known)}.")
    systems = answering_systems(questions) if spec.system_ids is None else list(dict.fromkeys(spec.system_ids))
    _check_references(spec.reference_kinds, spec.reference_policy)
    if spec.status not in STUDY_STATUSES:
        raise StudyError(f"Status must be one of {', '.join(STUDY_STATUSES)}.")
    problem = text_problem(spec.description)
    if problem:
        raise StudyError(f"The description {problem}.")
    annotators = _check_annotators(spec.annotator_ids)
    _check_allocation(spec)  # first: an adaptive study refuses any overlap, whoever the annotators are
    _check_overlap(spec.overlap, annotators)
    # A study over the demo's documents belongs to the demo (shown and deleted with it), never beside real data.
    over_demo = questions_are_demo(questions)
    if not over_demo and db.session.scalar(select(Question.id).join(Document, Document.id == Question.document_id)
                                           .where(Question.id.in_(questions), Document.is_demo.is_(True)).limit(1)):
        raise StudyError("A study takes either the demo's questions or real ones, not both.")
    study = Study(name=name, description=spec.description.strip(), status=spec.status, overlap=spec.overlap,
                  reference_kinds=list(spec.reference_kinds), reference_policy=spec.reference_policy,
                  is_demo=spec.is_demo or over_demo, everyone_may_score=annotators is None, created_by_id=by_user_id,
                  allocation=spec.allocation, budget_documents=spec.budget_documents,
                  budget_answers=spec.budget_answers, budget_hours=spec.budget_hours,
                  min_per_answer=spec.min_per_answer, tie_margin=spec.tie_margin, allocation_seed=secrets.token_hex(16),
                  calibration_documents=spec.calibration_documents, start_window_hours=spec.start_window_hours,
                  max_documents_per_annotator=spec.max_documents_per_annotator, included_annotators=[],
                  shared_by_document=True, merge_identical=spec.merge_identical)
    db.session.add(study)
    db.session.flush()
    for position, question_id in enumerate(questions):
        db.session.add(StudyQuestion(study_id=study.id, question_id=question_id, position=position))
    for user_id in annotators or []:
        db.session.add(StudyAnnotator(study_id=study.id, user_id=user_id))
    db.session.flush()
    set_systems(study, systems)
    assignment.rebalance(study)
    db.session.commit()
    analyze(*STUDY_TABLES)  # thousands of pinned answers at once: more than autovacuum sees for a minute
    return study


def set_systems(study: Study, system_ids: list[int]) -> list[str]:
    """Make exactly these systems the study's (their current answers pinned); return what was said."""
    wanted = list(dict.fromkeys(system_ids))
    found = set(db.session.scalars(select(System.id).where(System.id.in_(wanted))))
    if len(found) != len(wanted):
        raise StudyError(f"No such system id: {', '.join(str(s) for s in wanted if s not in found)}.")
    current = set(db.session.scalars(select(StudySystem.system_id).where(StudySystem.study_id == study.id)))
    notes = []
    for system_id in current - set(wanted):
        db.session.execute(delete(StudySystem).where(StudySystem.study_id == study.id,
                                                     StudySystem.system_id == system_id))
        for slot in db.session.scalars(select(StudyAnswer).where(StudyAnswer.study_id == study.id,
                                                                 StudyAnswer.system_id == system_id)):
            slot.excluded = True  # its scores are kept; labels of the other answers do not move
    for system_id in wanted:
        if system_id not in current:
            db.session.add(StudySystem(study_id=study.id, system_id=system_id))
            db.session.flush()
            for slot in db.session.scalars(select(StudyAnswer).where(StudyAnswer.study_id == study.id,
                                                                     StudyAnswer.system_id == system_id)):
                slot.excluded = False
            report = pin_latest(study.id, system_id, only_new=True)
            notes.append(f"{report.system}: {report.added} answer(s) added")
    db.session.flush()
    references.refresh(study)
    return notes


def set_questions(study: Study, question_ids: list[int]) -> None:
    """Make exactly these questions the study's, in this order; answers of the study's systems are pinned."""
    wanted = list(dict.fromkeys(question_ids))
    if not wanted:
        raise StudyError("A study needs at least one question.")
    known = set(db.session.scalars(select(Question.id).where(Question.id.in_(wanted))))
    if len(known) != len(wanted):
        raise StudyError(f"No such question: {', '.join(str(q) for q in wanted if q not in known)}.")
    db.session.execute(delete(StudyQuestion).where(StudyQuestion.study_id == study.id))
    for position, question_id in enumerate(wanted):
        db.session.add(StudyQuestion(study_id=study.id, question_id=question_id, position=position))
    for slot in db.session.scalars(select(StudyAnswer).where(StudyAnswer.study_id == study.id)):
        if slot.question_id not in known:
            slot.excluded = True
    db.session.flush()
    members = set(db.session.scalars(select(StudySystem.system_id).where(StudySystem.study_id == study.id)))
    for slot in db.session.scalars(select(StudyAnswer).where(StudyAnswer.study_id == study.id)):
        if slot.question_id in known and slot.system_id in members:
            slot.excluded = False
    for system_id in members:
        pin_latest(study.id, system_id, only_new=True)
    db.session.flush()
    references.refresh(study)
    assignment.rebalance(study)


def set_annotators(study: Study, user_ids: list[int] | None, overlap: int | None) -> None:
    """Set who scores (None: every account may score; else exactly these accounts, at least one) and how
    many annotators score each answer (overlap None: all of them). Refused requests change nothing."""
    wanted = _check_annotators(user_ids)
    _check_overlap(overlap, wanted)
    if study.adaptive and overlap is not None:
        raise StudyError("An adaptive study chooses how many annotators score each answer: leave the overlap out.")
    db.session.execute(delete(StudyAnnotator).where(StudyAnnotator.study_id == study.id))
    for user_id in wanted or []:
        db.session.add(StudyAnnotator(study_id=study.id, user_id=user_id))
    study.everyone_may_score = wanted is None
    study.overlap = overlap
    db.session.flush()
    assignment.rebalance(study)


def set_references(study: Study, kinds: list[str], policy: str) -> references.Detection:
    """Choose which references annotators see and what to do when an answer repeats one."""
    _check_references(kinds, policy)
    study.reference_kinds, study.reference_policy = list(kinds), policy
    return references.refresh(study)


def set_merge_identical(study: Study, on: bool) -> int:
    """Show identical answers once (on) or apart; return how many answers are now shown through another.

    Changed only before the study's first score: after it, scores given both ways would mix."""
    if on == study.merge_identical:
        return len([slot for slots in twins.twin_groups(study.id).values() for slot in slots])
    if db.session.scalar(select(Score.id).join(AnnotationRound, AnnotationRound.id == Score.round_id)
                         .where(AnnotationRound.study_id == study.id).limit(1)) is not None:
        raise StudyError("The study has scores: whether identical answers are shown once can be changed only "
                         "before the first one. Nothing was changed.")
    study.merge_identical = on
    return twins.refresh(study)


def set_status(study: Study, status: str) -> None:
    """Open, close or reopen a study (a draft opens; annotators see open studies only)."""
    if status == study.status:
        return
    if status not in TRANSITIONS.get(study.status, ()):
        raise StudyError(f"A {study.status} study cannot become {status}.")
    if status == "open" and not study.references_checked:
        references.refresh(study)
    study.status = status


@dataclass(frozen=True)
class SystemChoice:
    id: int
    name: str
    predictions: int


def system_choices() -> list[SystemChoice]:
    """Every system with answers, for the new-study form's checkboxes (by name)."""
    return [SystemChoice(*row) for row in db.session.execute(
        select(System.id, System.name, func.count(Prediction.id)).join(Prediction, Prediction.system_id == System.id)
        .group_by(System.id, System.name).order_by(System.name))]


def chosen_systems(checked: list[int], question_ids: list[int]) -> list[int]:
    """The checked systems that answer these questions; none of them is refused by name."""
    answering = set(answering_systems(question_ids))
    chosen = [s for s in dict.fromkeys(checked) if s in answering]
    if not chosen:
        raise StudyError("Systems: check at least one system that answers these questions. Nothing was created.")
    return chosen


@dataclass(frozen=True)
class ReadingPlan:
    """What reading a question set costs, for the new-study form: fixed k = 3's readings, and what an adaptive
    study's most reliable annotator would read after calibration (the readings a cap can move to others)."""
    documents: int
    fixed_k3: int
    beyond_calibration: int

    @property
    def cap_cost_share(self) -> str:
        return f"{self.beyond_calibration / self.fixed_k3:.0%}" if self.fixed_k3 else "0%"


def reading_plan(choice: str) -> ReadingPlan | None:
    try:
        questions = questions_for(choice)
    except StudyError:
        return None
    documents = db.session.scalar(select(func.count(func.distinct(Question.document_id)))
                                  .where(Question.id.in_(questions))) or 0
    return ReadingPlan(documents, 3 * documents, max(documents - 1, 0)) if documents else None


def active_users() -> list[User]:
    """Accounts that can be listed as a study's annotators."""
    return list(db.session.scalars(select(User).where(User.active.is_(True)).order_by(User.username)))


def question_sets() -> list[tuple[str, str, int]]:
    """(choice, label, questions) for the question sets a study can start from."""
    return [(entry["name"], entry["label"], entry["count"]) for entry in sets.available_sets()]


def questions_for(choice: str) -> list[int]:
    """The questions of a named set (see services.question_sets); an empty choice is `human_eval`."""
    try:
        return sets.question_ids((choice or "").strip() or "human_eval", required=True)
    except sets.QuestionSetError as exc:
        raise StudyError(f"Questions: {exc}.") from None
