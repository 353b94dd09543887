"""Pairs to judge from the database: a system and a baseline on the questions both answered."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from sqlalchemy import or_, select
from sqlalchemy.orm import aliased

from app.core.judge import ORDERS, PairItem, PromptTemplate
from app.core.judge.cache import pair_key
from app.core.judge.profiles import DEFAULT as DEFAULT_PROFILE
from app.core.judge.profiles import LEVAL, get_profile
from app.extensions import db
from app.models import Document, Prediction, Question, System
from app.models.corpus import HUMAN_EVAL
from app.services.judge.settings import LEVAL_BASELINE, load_settings

# Which questions a run covers. L-Eval's judge set is the human-evaluation subset (85 questions);
# "llm" is the task questions L-Eval marks for GPT-4 judging; "all" is every question both answered.
SCOPES = {
    "human_eval": "Human-evaluation subset",
    "llm": "Questions marked for LLM judging",
    "all": "Every question both systems answered",
}
DEFAULT_SCOPE = "human_eval"
# llm_eval.py: when a file holds rows with these evaluations (exact spelling), only they are judged.
LEVAL_JUDGED_WHEN_PRESENT = ("f1", "rouge")


class PairError(ValueError):
    """Systems or a scope that do not make a judge run."""


@dataclass(frozen=True)
class JudgePair:
    """A PairItem whose pair_id is the question id, with where it came from."""

    item: PairItem
    question_id: int | None
    task: str = ""

    def keys(self, model: str, prompt_key: str, temperature: float) -> dict[str, str]:
        """Return the cache key of each order."""
        return {order: pair_key(model, prompt_key, self.item, order, temperature) for order in ORDERS}


def system_named(name: str) -> System:
    """Return the system with this name, or raise PairError."""
    system = db.session.scalars(select(System).where(System.name == name)).first()
    if system is None:
        raise PairError(f"no system named {name!r}")
    return system


def default_baseline() -> str | None:
    """Return the configured baseline, else L-Eval's turbo-16k-0613 if imported, else None."""
    names = set(db.session.scalars(select(System.name)))
    configured = load_settings().baseline
    for candidate in (configured, LEVAL_BASELINE):
        if candidate and candidate in names:
            return candidate
    return None


def _judged_by_leval(prediction) -> object:
    """llm_eval.py's row selection, per imported file: a file with any "f1" or "rouge" row is judged on those only."""
    ngram_files = (select(Prediction.file_id)
                   .where(Prediction.file_id.is_not(None), Prediction.evaluation.in_(LEVAL_JUDGED_WHEN_PRESENT)))
    return or_(prediction.file_id.is_(None), prediction.file_id.not_in(ngram_files),
               prediction.evaluation.in_(LEVAL_JUDGED_WHEN_PRESENT))


def build_pairs(system: System, baseline: System, scope: str = DEFAULT_SCOPE,
                profile: str = DEFAULT_PROFILE) -> list[JudgePair]:
    """Pair the two systems' predictions on the questions in `scope` that both answered.

    The reference is the question's human reference (`Question.reference`, L-Eval's `gt`).
    Under the `leval` profile each side also keeps only the rows llm_eval.py would read from
    its file (see _judged_by_leval).
    """
    if scope not in SCOPES:
        raise PairError(f"unknown scope {scope!r}; choose one of {', '.join(SCOPES)}")
    if system.id == baseline.id:
        raise PairError("a system cannot be judged against itself")
    mine, theirs = aliased(Prediction), aliased(Prediction)
    stmt = (
        select(Question, Document.task, mine.text, theirs.text)
        .join(Document, Question.document_id == Document.id)
        .join(mine, (mine.question_id == Question.id) & (mine.system_id == system.id))
        .join(theirs, (theirs.question_id == Question.id) & (theirs.system_id == baseline.id))
        .order_by(Document.id, Question.position)
    )
    if scope == "human_eval":
        stmt = stmt.where(Document.collection == HUMAN_EVAL)
    elif scope == "llm":
        stmt = stmt.where(Question.evaluation == "LLM")
    if get_profile(profile).name == LEVAL:
        stmt = stmt.where(_judged_by_leval(mine), _judged_by_leval(theirs))
    return [
        JudgePair(PairItem(question.id, question.instruction, question.reference, mine_text, theirs_text),
                  question.id, task)
        for question, task, mine_text, theirs_text in db.session.execute(stmt)
    ]


def inputs_fingerprint(pairs: list[JudgePair], template: PromptTemplate) -> str:
    """Hash every judged text and the prompt, so changed inputs make a different job."""
    digest = hashlib.sha256(template.fingerprint().encode())
    for pair in pairs:
        item = pair.item
        texts = [item.pair_id, item.question, item.reference, item.system_answer, item.baseline_answer]
        if item.document_key:  # the evidence profile: a changed document (or cut) is a changed input
            texts.append(item.document_key)
        digest.update(json.dumps(texts, ensure_ascii=False).encode())
    return digest.hexdigest()
