"""Question sets: the one owner of which questions a named set holds, and in what order.

Studies and generation runs both pick their questions here, by name:

- ``human_eval``: the human-evaluation subset (85 questions with L-Eval's data; the demo's when only
  the demo is imported);
- ``demo``: the demo's human-evaluation questions;
- ``gpt4``: open-ended task-file questions on lines marked ``evaluation: LLM`` (L-Eval's 96-question
  GPT-4 judge subset, ``--metric llm_gpt4_eval``);
- ``gpt35``: lines marked ``human`` or ``LLM`` (the 181-question GPT-3.5 subset, ``llm_turbo_eval``);
- ``task:<name>``: every question of an imported task file, as ``--task_name`` runs it;
- ``auto:<name>``: the task's questions scored by its automatic metric: lines marked ``human`` or
  ``LLM`` are left to the subsets, as L-Eval's default ngram/exam run (and its published
  ``<task>.pred.jsonl`` files) take them;
- ``study:<id>``: a study's questions, in the study's order (by id: `study list` shows them);
- ``authored``: the questions made from researchers' authored pairs;
- ``ids:<id,id,…>``: these questions, in this order;
- ``<benchmark>:<task>``: every question of another benchmark's task, in import order (its data file's), for
  each plugin (app.services.benchmarks): ``lveval:<dataset>_<level>``, ``longbench:<dataset>``,
  ``longbench:<dataset>_e`` (LongBench-E), ``longbench:v2``.

The subsets follow L-Eval's task order, then the file's line order, then the instruction order
(question ids keep the order questions were imported in).
"""
from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select

from app.core.metrics.files import OPEN_TASKS
from app.extensions import db
from app.models import Document, Question, Study, StudyQuestion
from app.models.corpus import HUMAN_EVAL, TASKS
from app.models.ids import parse_db_id
from app.services.authoring import authored_question_ids
from app.services.benchmarks import PLUGINS, plugin

FIXED_SETS = {
    "human_eval": ("Human-evaluation subset", 85),
    "demo": ("The demo's human-evaluation questions", None),
    "gpt4": ("GPT-4 judge subset (evaluation: LLM)", 96),
    "gpt35": ("GPT-3.5 judge subset (evaluation: human or LLM)", 181),
    "authored": ("Researchers' authored pairs", None),
}
JUDGE_SUBSETS = {"gpt4": ("LLM",), "gpt35": ("human", "LLM")}
PREFIXES = ("task:", "auto:", "study:", "ids:")
USAGE = ("use human_eval, demo, gpt4, gpt35, authored, task:<name>, auto:<name>, study:<id>, ids:<id,id,…> or "
         + ", ".join(f"{p.key}:<task>" for p in PLUGINS))
MAX_IDS = 10_000


class QuestionSetError(ValueError):
    """A question set that does not exist, or holds no question where one is required."""


@dataclass(frozen=True)
class SetQuestion:
    question_id: int
    document_id: int
    task: str
    evaluation: str
    instruction: str
    reference: str


def subset_questions(*, demo: bool = False) -> list[int]:
    """The human-evaluation subset's questions in document order (the demo's, or the real ones)."""
    return list(db.session.scalars(
        select(Question.id).join(Document, Document.id == Question.document_id)
        .where(Document.collection == HUMAN_EVAL, Document.is_demo.is_(demo))
        .order_by(Document.id, Question.position)
    ))


def _task_rank(task: str) -> int:
    return OPEN_TASKS.index(task) if task in OPEN_TASKS else len(OPEN_TASKS)


def _base():
    return (select(Question.id, Document.id, Document.task, Question.evaluation, Question.instruction,
                   Question.reference)
            .join(Document, Question.document_id == Document.id))


def _rows(statement) -> list[SetQuestion]:
    return [SetQuestion(*row) for row in db.session.execute(statement).all()]


def _by_ids(ids: list[int]) -> list[SetQuestion]:
    if not ids:
        return []
    found = {q.question_id: q for q in _rows(_base().where(Question.id.in_(ids)))}
    return [found[i] for i in ids if i in found]


def _parse_ids(text: str) -> list[int]:
    parts = [parse_db_id(part) for part in text.split(",") if part.strip()]
    if not parts or len(parts) > MAX_IDS or None in parts:
        raise QuestionSetError("ids: takes question ids separated by commas, e.g. ids:3,4,9")
    ids = list(dict.fromkeys(parts))
    known = set(db.session.scalars(select(Question.id).where(Question.id.in_(ids))))
    unknown = [str(i) for i in ids if i not in known]
    if unknown:
        raise QuestionSetError(f"no such question: {', '.join(unknown[:20])}")
    return ids


def _study_ids(ref: str) -> list[int]:
    """A study's questions by its id: `study:12` (a name is never read as an id, nor an id as a name)."""
    study_id = parse_db_id(ref)
    if study_id is None:
        raise QuestionSetError(f"study: takes a study's id, e.g. study:3 (python run.py study list shows them), "
                               f"not {ref[:60]!r}")
    study = db.session.get(Study, study_id)
    if study is None:
        raise QuestionSetError(f"no study with id {study_id}")
    return list(db.session.scalars(select(StudyQuestion.question_id).where(StudyQuestion.study_id == study.id)
                                   .order_by(StudyQuestion.position)))


def _task(name: str, *, automatic_only: bool) -> list[SetQuestion]:
    statement = _base().where(Document.collection == TASKS, Document.task == name)
    if automatic_only:
        statement = statement.where(Question.evaluation.not_in(("human", "LLM")))
    # Question ids follow the file's line order (a line that repeats an earlier line's document adds
    # its questions to that document, so the document's id would misplace them).
    return _rows(statement.order_by(Question.id))


def _plugin_task(name: str) -> tuple[str, str] | None:
    """(collection, task) of a `<benchmark>:<task>` set of a plugin's questions, else None."""
    key, colon, task = name.partition(":")
    found = plugin(key) if colon and task else None
    return None if found is None else (found.collection, task)


def select_questions(name: str, *, required: bool = False) -> list[SetQuestion]:
    """Return the questions of a set, in run order.

    QuestionSetError for an unknown set, or (with `required`) for a set that holds no question.
    """
    name = (name or "").strip()
    if name == "human_eval":
        found = _by_ids(subset_questions() or subset_questions(demo=True))
    elif name == "demo":
        found = _by_ids(subset_questions(demo=True))
    elif name in JUDGE_SUBSETS:
        rows = _rows(_base().where(Document.collection == TASKS, Document.task.in_(OPEN_TASKS),
                                   Question.evaluation.in_(JUDGE_SUBSETS[name])))
        found = sorted(rows, key=lambda q: (_task_rank(q.task), q.task, q.question_id))
    elif name == "authored":
        found = _by_ids(authored_question_ids())
    elif name.startswith("task:") or name.startswith("auto:"):
        found = _task(name[5:], automatic_only=name.startswith("auto:"))
    elif name.startswith("study:"):
        found = _by_ids(_study_ids(name[6:].strip()))
    elif name.startswith("ids:"):
        found = _by_ids(_parse_ids(name[4:]))
    elif (where := _plugin_task(name)) is not None:
        # Question ids follow the order the rows were imported in: the benchmark's own file order.
        found = _rows(_base().where(Document.collection == where[0], Document.task == where[1])
                      .order_by(Question.id))
    else:
        raise QuestionSetError(f"unknown question set {name!r}: {USAGE}")
    if required and not found:
        raise QuestionSetError(_empty_reason(name))
    return found


def question_ids(name: str, *, required: bool = False) -> list[int]:
    """Return the question ids of a set, in run order (see select_questions)."""
    return [q.question_id for q in select_questions(name, required=required)]


def _empty_reason(name: str) -> str:
    if name.startswith(("task:", "auto:")):
        return f"the set {name!r} holds no question: no imported task named {name[5:]!r} has any"
    if (where := _plugin_task(name)) is not None:
        return (f"the set {name!r} holds no question: no {plugin(name.partition(':')[0]).label} question of "
                f"{where[1]!r} is imported")
    if name == "authored":
        return "the set 'authored' holds no question: no authored pairs yet (write some on Author pairs)"
    if name == "human_eval":
        return "the set 'human_eval' holds no question: import L-Eval's human-evaluation subset or the demo"
    return f"the set {name!r} holds no question (import its data first)"


def task_of(name: str) -> str | None:
    """The task a per-task set runs (its `.pred.jsonl` is named after it), else None."""
    return name[5:] if name.startswith(("task:", "auto:")) else None


def available_sets() -> list[dict]:
    """Return every non-empty set with its question count (and L-Eval's full count where there is one)."""
    out = []
    for name, (label, expected) in FIXED_SETS.items():
        out.append({"name": name, "label": label, "count": len(select_questions(name)), "expected": expected})
    tasks = db.session.scalars(select(Document.task).where(Document.collection == TASKS).distinct()
                               .order_by(Document.task))
    for task in tasks:
        every = len(select_questions(f"task:{task}"))
        automatic = len(select_questions(f"auto:{task}"))
        out.append({"name": f"task:{task}", "label": f"Task {task}", "count": every, "expected": None})
        if automatic != every:
            out.append({"name": f"auto:{task}", "label": f"Task {task}, automatic-metric lines only",
                        "count": automatic, "expected": None})
    for benchmark in PLUGINS:
        counts = db.session.execute(
            select(Document.task, func.count(Question.id)).join(Question, Question.document_id == Document.id)
            .where(Document.collection == benchmark.collection).group_by(Document.task).order_by(Document.task))
        out += [{"name": f"{benchmark.key}:{task}", "label": f"{benchmark.label} {task}", "count": count,
                 "expected": None} for task, count in counts]
    for study_id, study_name in db.session.execute(select(Study.id, Study.name).order_by(Study.id)):
        out.append({"name": f"study:{study_id}", "label": f"Study {study_name}",
                    "count": len(_study_ids(str(study_id))), "expected": None})
    return [entry for entry in out if entry["count"]]


def documents_for(questions: list[SetQuestion]) -> dict[int, Document]:
    """Load the documents the questions are on, once each."""
    ids = sorted({q.document_id for q in questions})
    return {d.id: d for d in db.session.scalars(select(Document).where(Document.id.in_(ids)))} if ids else {}
