"""Verdict parsing and the record of one judge call."""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Literal

from app.core.judge.prompt import Order

Verdict = Literal["A", "B", "C"]
Outcome = Literal["win", "loss", "tie", "error"]

# Tolerate inner spaces ("[[ A ]]") but not other letters: "[[D]]" is no verdict.
_VERDICT_TOKEN = re.compile(r"\[\[\s*([ABC])\s*\]\]")


def parse_verdict(reply: str | None) -> Verdict | None:
    """Return the last verdict token in the reply ("A", "B" or "C"), or None if there is none."""
    if not reply:
        return None
    # The last token wins: judges often quote the format ("[[A]] if A is better...")
    # or discuss alternatives before committing to a final verdict.
    matches = _VERDICT_TOKEN.findall(reply)
    return matches[-1] if matches else None  # type: ignore[return-value]


def parse_verdict_leval(reply: str | None) -> Verdict | None:
    """Read the verdict as L-Eval's llm_eval.py does: "[[A]]" anywhere, else "[[B]]", else "[[C]]".

    Exact substrings, tested in that order: "[[ B ]]" is no verdict, and a reply quoting the
    format before its final "[[B]]" reads as A.
    """
    if not reply:
        return None
    for token, verdict in (("[[A]]", "A"), ("[[B]]", "B"), ("[[C]]", "C")):
        if token in reply:
            return verdict  # type: ignore[return-value]
    return None


def system_outcome(order: Order, verdict: Verdict | None) -> Outcome:
    """Return the outcome for the system under test, which is A in order "AB" and B in "BA"."""
    if order not in ("AB", "BA"):
        raise ValueError(f"order must be 'AB' or 'BA', not {order!r}")
    if verdict is None:
        return "error"
    if verdict == "C":
        return "tie"
    system_position = "A" if order == "AB" else "B"
    return "win" if verdict == system_position else "loss"


@dataclass(frozen=True)
class JudgmentResult:
    """One judge call (or cache hit) for one pair in one order; verdict None means an error."""

    pair_id: str | int
    order: Order
    verdict: Verdict | None
    raw_reply: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    error: str | None
    model: str
    cache_key: str
    cached: bool = False
    no_call: bool = False  # decided by a rule without calling the judge (identical answers)
    quotes: tuple = ()  # the `evidence` profile's quotes (app.core.evidence.Quote), as the reply gave them

    @property
    def ok(self) -> bool:
        """Return True when the judge produced a verdict."""
        return self.verdict is not None

    @property
    def outcome(self) -> Outcome:
        """Return win/loss/tie/error from the system under test's point of view."""
        return system_outcome(self.order, self.verdict)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dict, e.g. for a DB row or an export."""
        return {**asdict(self), "outcome": self.outcome}
