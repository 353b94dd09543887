"""Run pairwise judgments through an OpenAI-compatible client: both orders, cached,
bounded concurrency, budget cap and cancellation (the calls go through app.core.llm.batch).
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from app.core.llm.batch import DEFAULT_CONCURRENCY, Call, Reply, Usage, UsageLedger, run_calls
from app.core.llm.client import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_S, make_client, mask_api_key
from app.core.llm.pricing import PriceTable
from app.core.judge.aggregate import Aggregation, aggregate
from app.core.judge.cache import JudgeCache, pair_key
from app.core.judge.profiles import DEFAULT, PROFILES, JudgeProfile
from app.core.judge.prompt import ORDERS, PairItem, PromptTemplate, render_pair
from app.core.judge.verdict import JudgmentResult

if TYPE_CHECKING:
    import openai

__all__ = [
    "DEFAULT_CONCURRENCY", "DEFAULT_MAX_RETRIES", "DEFAULT_TIMEOUT_S", "RunSummary", "make_client", "mask_api_key",
    "run_judgments",
]
NO_VERDICT = "no verdict token ([[A]], [[B]] or [[C]]) in the reply"
IDENTICAL_NOTE = "(no call: the two answers are identical once whitespace is folded, a tie in both orders)"


@dataclass
class RunSummary(Usage):
    """What a run did: API usage, cost, why it stopped early (if it did) and every result.

    Every judgment asked for is counted once: `api_calls` (answered by a call made now),
    `cached` (a verdict found in the cache, or shared with a call made now for the same prompt),
    `reused_errors` (shared with a call made now for the same prompt that gave no verdict),
    `no_call` (tied by the profile without a call) or `skipped` (not made: budget or cancel).
    """

    results: list[JudgmentResult] = field(default_factory=list)
    reused_errors: int = 0
    no_call: int = 0

    @property
    def judgments(self) -> int:
        """The judgments this run was asked for: two per pair."""
        return len(self.results) + self.skipped

    def aggregate(self, *, bootstrap_iterations: int = 1000, seed: int = 0) -> Aggregation:
        """Aggregate this run's results (one per pair and order)."""
        return aggregate(self.results, bootstrap_iterations=bootstrap_iterations, seed=seed)

    def to_cli_json(self, aggregation: Aggregation | None = None) -> dict[str, Any]:
        """Return the judge CLI's --json object."""
        agg = self.aggregate() if aggregation is None else aggregation
        return {
            "wins": agg.wins,
            "losses": agg.losses,
            "ties": agg.ties,
            "errors": agg.errors,
            "inconsistent": agg.inconsistent,
            "win_rate": agg.win_rate,
            "win_rate_fastchat": agg.win_rate_fastchat,
            "judgments": self.judgments,
            "api_calls": self.api_calls,
            "cached": self.cached,
            "reused_errors": self.reused_errors,
            "no_call": self.no_call,
            "skipped": self.skipped,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": self.cost_usd,
        }


def _check_items(items: list[PairItem]) -> None:
    seen: set[Any] = set()
    for item in items:
        if item.pair_id in seen:
            raise ValueError(f"duplicate pair id {item.pair_id!r}")
        seen.add(item.pair_id)


def run_judgments(
    client: "openai.OpenAI",
    items: Iterable[PairItem],
    *,
    model: str,
    template: PromptTemplate,
    cache: JudgeCache,
    temperature: float = 0.0,
    concurrency: int = DEFAULT_CONCURRENCY,
    budget_usd: float | None = None,
    prices: PriceTable | None = None,
    cancel: threading.Event | None = None,
    on_result: Callable[[JudgmentResult], None] | None = None,
    prompt_key: str | int | None = None,
    max_tokens: int | None = None,
    profile: JudgeProfile = PROFILES[DEFAULT],
    ledger: UsageLedger | None = None,
) -> RunSummary:
    """Judge every item in both orders, cache first, and return what was done.

    Cached pairs make no API call. Failed calls (after the client's retries) and replies
    without a verdict are reported as error rows and not cached, so running again resumes
    them. Once the spent cost reaches `budget_usd` no new call is launched (calls already
    in flight finish, so the cap can be overshot by at most concurrency - 1 calls); cached
    pairs are still reported. Setting `cancel` stops launching anything new.
    `prompt_key` identifies the prompt version in cache keys (default: the profile's key for it).
    The `profile` reads the verdicts, sets max_tokens and n, and may tie identical answers
    without a call (such ties are stored in the cache like any judgment).
    `ledger` records each call's usage durably before it is sent (see app.core.llm.batch.run_calls).
    """
    items = list(items)
    _check_items(items)
    prompt_version = profile.prompt_key(template) if prompt_key is None else prompt_key
    if max_tokens is None:
        max_tokens = profile.max_tokens

    def no_verdict(reply: str) -> str | None:
        return None if profile.parse(reply) else NO_VERDICT
    results: list[JudgmentResult] = []

    def emit(result: JudgmentResult) -> None:
        results.append(result)
        if on_result is not None:
            on_result(result)

    def calls():
        for item in items:
            for order in ORDERS:
                key = pair_key(model, prompt_version, item, order, temperature)
                call = Call(key, render_pair(template, item, order, profile.max_quotes), (item, order))
                if profile.skips(item):
                    # Stored like a judgment, so reports and exports find it; it costs nothing to redo.
                    tie = JudgmentResult(pair_id=item.pair_id, order=order, verdict="C", raw_reply=IDENTICAL_NOTE,
                                         prompt_tokens=0, completion_tokens=0, latency_ms=0.0, error=None,
                                         model=model, cache_key=key, no_call=True)
                    cache.put(key, tie)
                    emit(tie)
                    continue
                yield call

    def from_cache(call: Call) -> bool:
        hit = cache.get(call.key)
        if hit is None or not hit.ok:
            return False
        item, order = call.tag
        emit(replace(hit, pair_id=item.pair_id, order=order, cached=True))
        return True

    shared_without_verdict: list[bool] = []

    def on_reply(call: Call, reply: Reply, reused: bool) -> None:
        item, order = call.tag
        if reused:
            shared_without_verdict.append(not reply.ok)
        result = JudgmentResult(
            pair_id=item.pair_id, order=order, verdict=profile.parse(reply.text) if reply.ok else None,
            raw_reply=reply.text, prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens,
            latency_ms=reply.latency_ms, error=reply.error, model=model, cache_key=call.key,
            cached=reused and reply.ok, quotes=profile.quotes(reply.text) if reply.ok else (),
        )
        if result.ok and not reused:
            cache.put(call.key, result)
        emit(result)

    usage = run_calls(client, calls(), model=model, on_reply=on_reply, from_cache=from_cache, check=no_verdict,
                      temperature=temperature, max_tokens=max_tokens, n=profile.n, concurrency=concurrency,
                      budget_usd=budget_usd, prices=prices, cancel=cancel, ledger=ledger,
                      response_format=profile.response_format)
    summary = RunSummary(**vars(usage), results=results)
    summary.cached = sum(result.cached for result in results)
    summary.errors = sum(not result.ok for result in results)
    summary.no_call = sum(result.no_call for result in results)
    # A repeat of a prompt sent in this run shares its one call: with a verdict it is counted as cached.
    summary.reused_errors = sum(shared_without_verdict)
    # Whatever was neither judged nor found in the cache is left for a later run.
    summary.skipped = 2 * len(items) - len(results)
    return summary
