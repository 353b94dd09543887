"""Rate answers through an OpenAI-compatible client: cached by content, bounded concurrency, budget, cancel.

The calls go through app.core.llm.batch (the judge's layer): the same client, retries, budget cap
and threading model. A reply without a rating is an error, never cached, so a re-run retries it.
"""
from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from app.core.evidence import (
    DEFAULT_MAX_QUOTES,
    NO_DECISION,
    PROFILE,
    REPLY_TOKENS,
    EvidenceReply,
    Quote,
    parse_reply,
    rating_format,
    read_score,
)
from app.core.llm.batch import (
    DEFAULT_CONCURRENCY,
    Call,
    Reply,
    Usage,
    UsageLedger,
    run_calls,
)
from app.core.llm.pricing import PriceTable
from app.core.rater.prompt import RaterTemplate, RatingItem, render
from app.core.rubric import SCALE_MAX, SCALE_MIN

if TYPE_CHECKING:
    import openai

CACHE_KEY_SCHEMA = 1
NO_SCORE = "no rating token ([[1]] to [[5]]) in the reply"
_SCORE_TOKEN = re.compile(rf"\[\[\s*([{SCALE_MIN}-{SCALE_MAX}])\s*\]\]")


def parse_score(reply: str | None) -> int | None:
    """The last [[N]] token with N from 1 to 5, or None."""
    if not reply:
        return None
    found = _SCORE_TOKEN.findall(reply)
    return int(found[-1]) if found else None


def rating_key(model: str, temperature: float, messages: list[dict[str, str]], extra: dict | None = None) -> str:
    """sha256 of what is sent: any change of prompt, rubric, references or answer makes a new rating.

    `extra` (the `evidence` profile: the document's fingerprint, the quote limit, the reply format) is
    part of the key when given; reference-only keys stay as they always were.
    """
    content = {"schema": CACHE_KEY_SCHEMA, "model": model, "temperature": float(temperature), "messages": messages}
    if extra:
        content["extra"] = extra
    canonical = json.dumps(content, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class RatingResult:
    item_id: object
    score: int | None
    raw_reply: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    error: str | None
    model: str
    cache_key: str
    cached: bool = False
    quotes: tuple[Quote, ...] = ()  # the `evidence` profile's quotes, as the reply gave them (unchecked)

    @property
    def ok(self) -> bool:
        return self.score is not None


class RatingCache(Protocol):
    def get(self, key: str) -> RatingResult | None: ...

    def put(self, key: str, result: RatingResult) -> None: ...


class InMemoryRatingCache:
    """A thread-safe dict-backed RatingCache, for tests and benchmarks."""

    def __init__(self) -> None:
        self._entries: dict[str, RatingResult] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> RatingResult | None:
        with self._lock:
            return self._entries.get(key)

    def put(self, key: str, result: RatingResult) -> None:
        with self._lock:
            self._entries[key] = result

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


@dataclass
class RatingSummary(Usage):
    results: list[RatingResult] = field(default_factory=list)


def _no_score(reply: str) -> str | None:
    return None if parse_score(reply) is not None else NO_SCORE


@dataclass(frozen=True)
class EvidenceOptions:
    """The `evidence` profile of a run: how many quotes per answer, and whether to send the JSON schema."""

    max_quotes: int = DEFAULT_MAX_QUOTES
    json_schema: bool = True

    def key_part(self, item: RatingItem) -> dict:
        return {"profile": PROFILE, "document": item.document_sha, "max_quotes": self.max_quotes,
                "json_schema": self.json_schema, "max_tokens": REPLY_TOKENS}

    def parse(self, reply: str | None) -> EvidenceReply | None:
        return parse_reply(reply, decision="score", read_decision=read_score, read_text_decision=parse_score,
                           max_quotes=self.max_quotes)

    def check(self, reply: str) -> str | None:
        return None if self.parse(reply) is not None else NO_DECISION


def messages_and_key(item: RatingItem, *, model: str, temperature: float, template: RaterTemplate,
                     rubric: Sequence[tuple[int, str, str]], evidence: EvidenceOptions | None = None):
    """What one rating sends, and its content address."""
    messages = render(template, item, rubric, evidence.max_quotes if evidence else DEFAULT_MAX_QUOTES)
    return messages, rating_key(model, temperature, messages, evidence.key_part(item) if evidence else None)


def run_ratings(
    client: "openai.OpenAI",
    items: Iterable[RatingItem],
    *,
    model: str,
    template: RaterTemplate,
    rubric: Sequence[tuple[int, str, str]],
    cache: RatingCache,
    temperature: float = 0.0,
    concurrency: int = DEFAULT_CONCURRENCY,
    budget_usd: float | None = None,
    prices: PriceTable | None = None,
    cancel: threading.Event | None = None,
    on_result: Callable[[RatingResult], None] | None = None,
    max_tokens: int | None = None,
    evidence: EvidenceOptions | None = None,
    ledger: UsageLedger | None = None,
) -> RatingSummary:
    """Rate every item, cache first; return what was done (cached items make no call).

    With `evidence` the reply is read as the `evidence` profile's (a score and quotes); a reply without
    a score in either form is an error row, retried on resume.
    """
    items = list(items)
    results: list[RatingResult] = []

    def emit(result: RatingResult) -> None:
        results.append(result)
        if on_result is not None:
            on_result(result)

    def calls():
        for item in items:
            messages, key = messages_and_key(item, model=model, temperature=temperature, template=template,
                                             rubric=rubric, evidence=evidence)
            yield Call(key, messages, item)

    def from_cache(call: Call) -> bool:
        hit = cache.get(call.key)
        if hit is None or not hit.ok:
            return False
        emit(replace(hit, item_id=call.tag.item_id, cached=True))
        return True

    def on_reply(call: Call, reply: Reply, reused: bool) -> None:
        score, quotes = (parse_score(reply.text) if reply.ok else None), ()
        if evidence is not None and reply.ok:
            parsed = evidence.parse(reply.text)
            score, quotes = (parsed.decision, parsed.quotes) if parsed else (None, ())
        result = RatingResult(call.tag.item_id, score, reply.text,
                              reply.prompt_tokens, reply.completion_tokens, reply.latency_ms, reply.error, model,
                              call.key, cached=reused and reply.ok, quotes=quotes)
        if result.ok and not reused:
            cache.put(call.key, result)
        emit(result)

    usage = run_calls(client, calls(), model=model, on_reply=on_reply, from_cache=from_cache,
                      check=evidence.check if evidence else _no_score, temperature=temperature,
                      max_tokens=REPLY_TOKENS if evidence and max_tokens is None else max_tokens,
                      concurrency=concurrency, budget_usd=budget_usd, prices=prices, cancel=cancel, ledger=ledger,
                      response_format=rating_format(evidence.max_quotes) if evidence and evidence.json_schema else None)
    summary = RatingSummary(**vars(usage), results=results)
    summary.errors = sum(not r.ok for r in results)
    summary.cached = sum(r.cached for r in results)
    summary.skipped = len(items) - len(results)
    return summary
