"""Content-addressed judgment cache: the key and the storage protocol."""
from __future__ import annotations

import hashlib
import json
import threading
from typing import Protocol

from app.core.judge.prompt import Order, PairItem, answers_in_order
from app.core.judge.verdict import JudgmentResult

CACHE_KEY_SCHEMA = 1  # bump if the key's inputs or canonical form ever change


def cache_key(
    judge_model: str,
    prompt_version: str | int,
    question: str,
    reference: str,
    answer_a: str,
    answer_b: str,
    temperature: float,
    document_key: str = "",
) -> str:
    """Return the sha256 hex digest addressing one judge call's content.

    `document_key` (the `evidence` profile: the document's fingerprint and its cut's) is part of the key
    when given; every other key stays as it always was.
    """
    # Canonical JSON (sorted keys, fixed separators, float temperature) so that equal
    # content always hashes alike, e.g. temperature 0 and 0.0 share entries.
    content = {
        "schema": CACHE_KEY_SCHEMA,
        "judge_model": judge_model,
        "prompt_version": str(prompt_version),
        "question": question,
        "reference": reference,
        "answer_a": answer_a,
        "answer_b": answer_b,
        "temperature": float(temperature),
    }
    if document_key:
        content["document"] = document_key
    canonical = json.dumps(
        content,
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def pair_key(model: str, prompt_version: str | int, item: PairItem, order: Order, temperature: float) -> str:
    """The cache key of one pair in one order: the one rule every caller (runner, dry run, reports) keys by."""
    answer_a, answer_b = answers_in_order(item, order)
    return cache_key(model, prompt_version, item.question, item.reference, answer_a, answer_b, temperature,
                     item.document_key)


class JudgeCache(Protocol):
    """Storage for successful judgments; the app implements it on its DB table.

    `get` should return only results with a verdict: errors are not cache entries,
    so a resumed run retries them. (The runner also ignores a hit without a verdict.)
    """

    def get(self, key: str) -> JudgmentResult | None: ...

    def put(self, key: str, result: JudgmentResult) -> None: ...


class InMemoryJudgeCache:
    """A thread-safe dict-backed JudgeCache, for tests and one-off runs."""

    def __init__(self) -> None:
        self._entries: dict[str, JudgmentResult] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> JudgmentResult | None:
        """Return the stored result for `key`, or None."""
        with self._lock:
            return self._entries.get(key)

    def put(self, key: str, result: JudgmentResult) -> None:
        """Store `result` under `key`, replacing any earlier entry."""
        with self._lock:
            self._entries[key] = result

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
