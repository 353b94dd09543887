"""Score records as the analyses take them, and JSON-safe numbers."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, TypedDict

from app.core.rubric import SCALE as SCORE_VALUES  # noqa: F401 (the analyses import it from here)

QuestionKey = tuple[str, str]
ItemKey = tuple[str, str, str]


class ScoreRecord(TypedDict, total=False):
    """One human score, as the analysis functions expect it."""

    annotator: str
    system: str
    document_id: str
    question_id: str
    task: str
    score: int


def score_of(record: Mapping[str, Any]) -> int:
    """Return the record's score as an int in 1..5, or raise ValueError."""
    raw = record["score"]
    score = int(raw)
    if score != raw or score not in SCORE_VALUES:
        raise ValueError(f"score must be an integer from 1 to 5, got {raw!r}")
    return score


def question_key(record: Mapping[str, Any]) -> QuestionKey:
    """Identify a question; document_id is part of it because L-Eval numbers questions per document."""
    return (str(record.get("document_id", "")), str(record["question_id"]))


def item_key(record: Mapping[str, Any]) -> ItemKey:
    """Identify a rated item: one system's prediction for one question."""
    document_id, question_id = question_key(record)
    return (str(record["system"]), document_id, question_id)


def index_of(values: Iterable[Any]) -> dict[Any, int]:
    """Map each distinct value to a dense index, in sorted order so results are deterministic."""
    return {value: position for position, value in enumerate(sorted(set(values)))}


def clean(value: Any) -> float | None:
    """Turn NaN/inf/numpy scalars into plain floats or None so results serialise to JSON."""
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def on_common_questions(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Keep the records of the questions on which every system in the records was scored.

    An adaptive study gives answers where the ranking is uncertain, so each system is scored on
    different questions; means and correlations over the questions all of them share stay valid
    (a complete block: no system's mean carries easier or harder questions than another's).
    """
    rows = list(records)
    systems = {str(r["system"]) for r in rows}
    seen: dict[QuestionKey, set[str]] = {}
    for r in rows:
        seen.setdefault(question_key(r), set()).add(str(r["system"]))
    complete = {q for q, got in seen.items() if got == systems}
    return [r for r in rows if question_key(r) in complete]
