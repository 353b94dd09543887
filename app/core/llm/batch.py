"""Run many chat-completion calls: cache first, bounded concurrency, a USD budget, cancellation.

Threading model: API calls run on a thread pool, while cache look-ups, bookkeeping and the
caller's callbacks run on the calling thread only. That lets the app look answers up in its
database and store replies from a callback without sharing a session across threads, and
makes cancel and budget checks exact at concurrency 1.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from app.core.llm.client import redact
from app.core.llm.pricing import PriceTable, cost_usd, price_for, reserved_tokens

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__name__)

DEFAULT_CONCURRENCY = 8
StopReason = Literal["budget", "cancelled"]


@dataclass(frozen=True)
class Call:
    """One call to make: its content address, its messages, and the caller's handle for it."""

    key: str
    messages: list[dict[str, str]]
    tag: Any = None


@dataclass(frozen=True)
class Reply:
    """What one call gave: the text, usage and latency, or why it failed (never an exception)."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    error: str | None
    model: str = ""  # the model the server says answered
    finish_reason: str | None = None
    schema_refused: bool = False  # the server refused response_format (400): asked again without it, text format

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class Usage:
    """What a run spent and did: calls, cache hits, failures, tokens, cost, why it stopped early."""

    api_calls: int = 0
    cached: int = 0
    errors: int = 0
    skipped: int = 0
    schema_fallbacks: int = 0  # calls whose response_format the server refused: sent again without it (text format)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    stopped: StopReason | None = None


@dataclass(frozen=True)
class Reservation:
    """What a call is counted at before it is sent: more tokens (and cost) than it can use."""

    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None


class UsageLedger(Protocol):
    """Durable usage accounting: count each call before it is sent, correct it when its reply arrives.

    Both methods run on the calling thread. `reserve` must have recorded the reservation durably
    when it returns (the call is sent right after); `settle` replaces it with the reply's usage.
    A call whose reply never arrives (the process died) stays counted at its reservation.
    """

    def reserve(self, call: Call, held: Reservation) -> None: ...

    def settle(self, call: Call, held: Reservation, reply: Reply, cost: float | None) -> None: ...


@dataclass
class _State:
    usage: Usage
    spent: float = 0.0
    reserved: float = 0.0  # reservations of the calls in flight
    in_flight: dict[Future, Call] = field(default_factory=dict)
    held: dict[Future, Reservation] = field(default_factory=dict)
    followers: dict[str, list[Call]] = field(default_factory=dict)


def call_chat(client: "openai.OpenAI", model: str, messages: list[dict[str, str]], *, temperature: float,
              max_tokens: int | None = None, seed: int | None = None, n: int | None = None,
              check: Callable[[str], str | None] | None = None, response_format: dict | None = None) -> Reply:
    """Make one chat completion call; a failure (after the client's retries) becomes an error Reply.

    `check(text)` may name a problem with a reply that arrived (e.g. no verdict in it).
    `response_format` (a JSON schema) is sent where the server takes it: a server that refuses the
    request with 400 gets it once more without, and the prompt's text format applies (the reply says
    `schema_refused`, and the run's usage counts it in `schema_fallbacks`).
    """
    extra: dict[str, Any] = {}
    if max_tokens is not None:
        extra["max_tokens"] = max_tokens
    if seed is not None:
        extra["seed"] = seed
    if n is not None:  # sent only when a caller reproduces a script that sends it (L-Eval's judge: n=1)
        extra["n"] = n
    started = time.perf_counter()
    refused = False
    try:
        try:
            response = client.chat.completions.create(
                model=model, messages=messages, temperature=temperature,  # type: ignore[arg-type]
                **extra, **({"response_format": response_format} if response_format else {}),
            )
        except Exception as exc:
            if not response_format or getattr(exc, "status_code", None) != 400:
                raise
            refused = True  # recorded on the run: its replies were read in the text format
            response = client.chat.completions.create(
                model=model, messages=messages, temperature=temperature, **extra  # type: ignore[arg-type]
            )
    except Exception as exc:  # noqa: BLE001 - a failed call must become an error row, not kill the job
        latency_ms = (time.perf_counter() - started) * 1000.0
        message = redact(f"{type(exc).__name__}: {exc}", getattr(client, "api_key", None))
        log.warning("call failed after retries: %s", message)
        return Reply("", 0, 0, latency_ms, message, schema_refused=refused)
    latency_ms = (time.perf_counter() - started) * 1000.0
    choices = getattr(response, "choices", None) or []
    text = (choices[0].message.content or "") if choices else ""
    finish = getattr(choices[0], "finish_reason", None) if choices else None
    usage = getattr(response, "usage", None)
    prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
    error = check(text) if check is not None else None
    return Reply(text, prompt_tokens, completion_tokens, latency_ms, error,
                 model=str(getattr(response, "model", "") or ""), finish_reason=finish, schema_refused=refused)


def run_calls(
    client: "openai.OpenAI",
    calls: Iterable[Call],
    *,
    model: str,
    on_reply: Callable[[Call, Reply, bool], None],
    from_cache: Callable[[Call], bool] = lambda call: False,
    check: Callable[[str], str | None] | None = None,
    temperature: float = 0.0,
    max_tokens: int | None = None,
    seed: int | None = None,
    n: int | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    budget_usd: float | None = None,
    prices: PriceTable | None = None,
    cancel: threading.Event | None = None,
    ledger: UsageLedger | None = None,
    response_format: dict | None = None,
) -> Usage:
    """Make every call not answered from the cache, and hand each reply to `on_reply`.

    `from_cache(call)` answers a call from the caller's cache (it reports the cached result
    itself) and returns True; then no API call is made. `on_reply(call, reply, reused)` gets each
    reply; `reused` is True for a call whose key repeats one already in flight in this run
    (it waits for that call instead of making its own). Every call is reserved before it is
    sent (its prompt's bytes and max_tokens, see pricing.reserved_tokens) and settled when it
    returns; `ledger` records both, so usage recorded before a crash can only be too high.
    While the spent cost plus the reservations in flight reach `budget_usd`, no new call starts
    until the calls in flight have settled; once the spent cost alone reaches it, none starts
    at all (calls already in flight finish, so the cap can be overshot by at most
    concurrency - 1 calls) and later calls are still looked up in the cache; `cancel` stops
    starting anything new.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    priced = price_for(model, prices) is not None
    if budget_usd is not None and not priced:
        raise ValueError(f"cannot enforce a USD budget: no price for model {model!r}")
    state = _State(Usage(cost_usd=0.0 if priced else None))
    usage = state.usage

    def reserve(call: Call) -> Reservation:
        prompt_tokens, completion_tokens = reserved_tokens(call.messages, max_tokens)
        held = Reservation(prompt_tokens, completion_tokens, cost_usd(model, prompt_tokens, completion_tokens, prices))
        if ledger is not None:
            ledger.reserve(call, held)
        state.reserved += held.cost_usd or 0.0
        return held

    def finish(future: Future) -> None:
        call = state.in_flight.pop(future)
        held = state.held.pop(future)
        state.reserved -= held.cost_usd or 0.0
        reply: Reply = future.result()
        usage.api_calls += 1
        usage.prompt_tokens += reply.prompt_tokens
        usage.completion_tokens += reply.completion_tokens
        call_cost = cost_usd(model, reply.prompt_tokens, reply.completion_tokens, prices)
        if call_cost is not None:
            state.spent += call_cost
            usage.cost_usd = state.spent
        usage.errors += not reply.ok
        usage.schema_fallbacks += reply.schema_refused
        if ledger is not None:
            ledger.settle(call, held, reply, call_cost)
        on_reply(call, reply, False)
        for follower in state.followers.pop(call.key, []):
            usage.cached += reply.ok
            usage.errors += not reply.ok
            on_reply(follower, reply, True)

    def drain(until: int) -> None:
        while len(state.in_flight) > until:
            done, _ = wait(state.in_flight, return_when=FIRST_COMPLETED)
            for future in done:
                finish(future)

    def cancelled() -> bool:
        return cancel is not None and cancel.is_set()

    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="llm") as pool:
        for call in calls:
            if cancelled():
                usage.stopped = "cancelled"
                break
            if from_cache(call):
                usage.cached += 1
                continue
            if call.key in state.followers:
                state.followers[call.key].append(call)
                continue
            drain(concurrency - 1)
            if budget_usd is not None:
                # The reservations in flight may already cover the budget: see what they really cost first.
                while state.in_flight and state.spent + state.reserved >= budget_usd:
                    drain(len(state.in_flight) - 1)
            # Checked after draining: the replies just handled may have spent the budget,
            # or a callback may have set the cancel event.
            if cancelled():
                usage.stopped = "cancelled"
                break
            if budget_usd is not None and state.spent >= budget_usd:
                usage.stopped = "budget"
                usage.skipped += 1
                continue  # keep walking: later calls may still be cache hits
            state.followers[call.key] = []
            held = reserve(call)
            future = pool.submit(call_chat, client, model, call.messages, temperature=temperature,
                                 max_tokens=max_tokens, seed=seed, n=n, check=check,
                                 response_format=response_format)
            state.in_flight[future] = call
            state.held[future] = held
        drain(0)
    return usage
