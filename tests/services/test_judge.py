"""Pairwise LLM judge: runs against a local OpenAI-compatible stub through the real client."""
from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import replace

import pytest

from app.core.judge import (
    DEFAULT_TEMPLATE,
    InMemoryJudgeCache,
    JudgmentResult,
    PairItem,
    aggregate,
    bootstrap_ci,
    cache_key,
    cost_usd,
    estimate,
    leval_win_rate,
    make_client,
    parse_verdict,
    render,
    run_judgments,
    system_outcome,
)
from tests.support.openai_stub import ALWAYS_A_MARKER, Fault, StubOpenAIServer

SECRET_KEY = "sk-test-DO-NOT-LEAK-0123456789abcdef"
MODEL = "gpt-4"


def _item(pair_id: int, system_score: int, baseline_score: int, *, biased: bool = False) -> PairItem:
    bias = f" {ALWAYS_A_MARKER}" if biased else ""
    return PairItem(
        pair_id=pair_id,
        question=f"Question number {pair_id}?",
        reference=f"The reference answer for question {pair_id}.",
        system_answer=f"System answer {pair_id} <score:{system_score}>{bias}",
        baseline_answer=f"Baseline answer {pair_id} <score:{baseline_score}>{bias}",
    )


# Expected per pair from the marker policy: system better -> 2 wins, worse -> 2 losses,
# equal -> 2 ties, position-biased judge (always "A") -> AB win + BA loss (inconsistent).
MIXED_ITEMS = [
    _item(1, 3, 1),
    _item(2, 2, 1),
    _item(3, 1, 3),
    _item(4, 2, 2),
    _item(5, 1, 1, biased=True),
    _item(6, 3, 2),
]


def _client(stub: StubOpenAIServer, *, max_retries: int = 2, timeout: float = 5.0):
    return make_client(stub.base_url, SECRET_KEY, max_retries=max_retries, timeout=timeout)


def _run(stub: StubOpenAIServer, items, cache=None, *, client=None, **kwargs):
    kwargs.setdefault("concurrency", 1)
    return run_judgments(
        client or _client(stub),
        items,
        model=kwargs.pop("model", MODEL),
        template=DEFAULT_TEMPLATE,
        cache=cache if cache is not None else InMemoryJudgeCache(),
        **kwargs,
    )


def test_deterministic_verdicts_give_exact_counts_and_win_rates(stub):
    summary = _run(stub, MIXED_ITEMS, concurrency=4)
    agg = summary.aggregate()

    # Pairs 1, 2, 6 win twice, pair 3 loses twice, pair 4 ties twice, pair 5 splits.
    assert (agg.wins, agg.losses, agg.ties, agg.errors) == (7, 3, 2, 0)
    assert agg.inconsistent == 1
    assert agg.win_rate == pytest.approx(100 * (7 + 0.5 * 2) / 12)
    # FastChat: wins 1, 2, 6; loss 3; ties 4 and 5 (inconsistent) -> (3 + 1) / 6.
    assert agg.win_rate_fastchat == pytest.approx(100 * 4 / 6)
    assert agg.consistency == pytest.approx(5 / 6)
    assert agg.ci_low <= agg.win_rate <= agg.ci_high
    assert summary.api_calls == stub.calls == 12
    assert summary.cached == 0 and summary.stopped is None and summary.skipped == 0


def test_each_pair_is_judged_in_both_orders_at_temperature_zero_without_the_document(stub):
    item = _item(1, 2, 1)
    summary = _run(stub, [item])

    bodies = [request.body for request in stub.requests]
    assert {body["temperature"] for body in bodies} == {0.0}
    users = [body["messages"][-1]["content"] for body in bodies]
    # In AB the system's answer comes first, in BA the baseline's.
    assert users[0].index(item.system_answer) < users[0].index(item.baseline_answer)
    assert users[1].index(item.baseline_answer) < users[1].index(item.system_answer)
    assert all(item.question in user and item.reference in user for user in users)
    by_order = {result.order: result for result in summary.results}
    assert (by_order["AB"].verdict, by_order["BA"].verdict) == ("A", "B")
    assert {result.outcome for result in summary.results} == {"win"}


def test_results_keep_raw_reply_tokens_and_latency(stub):
    stub.latency_s = 0.05
    summary = _run(stub, [_item(1, 2, 1)])

    for result in summary.results:
        # The stub's reply has a decoy [[C]] before the final verdict: the last one counts.
        assert "[[C]]" in result.raw_reply and result.verdict != "C"
        assert result.prompt_tokens > 0 and result.completion_tokens > 0
        assert result.latency_ms >= 50
    assert summary.prompt_tokens == sum(r.prompt_tokens for r in summary.results)
    assert summary.cost_usd == pytest.approx(
        (summary.prompt_tokens * 30 + summary.completion_tokens * 60) / 1e6
    )


def test_concurrency_is_bounded_and_parallel(stub):
    stub.latency_s = 0.1
    _run(stub, [_item(i, 2, 1) for i in range(6)], concurrency=3)
    assert stub.max_active == 3


def test_429_retry_after_is_honoured_then_the_call_succeeds(stub):
    stub.add_faults(Fault.rate_limit(retry_after="1"))
    summary = _run(stub, [_item(1, 2, 1)], client=_client(stub, max_retries=2))

    first, retried = stub.requests[0], stub.requests[1]
    assert first.status == 429 and retried.status == 200
    # Without the header the client's first backoff is at most 0.5 s.
    assert retried.received_at - first.received_at >= 0.95
    assert summary.errors == 0 and summary.api_calls == 2 and stub.calls == 3


def test_500s_are_retried_by_the_client(stub):
    stub.add_faults(Fault.server_error(500, retry_after_ms=20), Fault.server_error(503, retry_after_ms=20))
    summary = _run(stub, [_item(1, 2, 1)], client=_client(stub, max_retries=2))

    assert [request.status for request in stub.requests] == [500, 503, 200, 200]
    assert summary.errors == 0 and {r.outcome for r in summary.results} == {"win"}


def test_exhausted_retries_become_error_rows_and_are_retried_on_resume(stub):
    cache = InMemoryJudgeCache()
    client = _client(stub, max_retries=1)
    stub.add_faults(*[Fault.server_error(500, retry_after_ms=10)] * 2)
    seen: list[JudgmentResult] = []
    first = _run(stub, [_item(1, 2, 1)], cache, client=client, on_result=seen.append)

    errors = [r for r in first.results if not r.ok]
    assert len(errors) == 1 and errors[0].order == "AB"
    assert "InternalServerError" in errors[0].error and errors[0].verdict is None
    assert seen == first.results  # the error row is reported, not dropped
    assert len(cache) == 1  # only the success was cached

    resumed = _run(stub, [_item(1, 2, 1)], cache, client=client)
    assert resumed.api_calls == 1 and resumed.cached == 1 and resumed.errors == 0
    assert resumed.aggregate().wins == 2


def test_a_timeout_becomes_an_error_row(stub):
    stub.add_faults(Fault.hang(3.0))
    started = time.perf_counter()
    summary = _run(stub, [_item(1, 2, 1)], client=_client(stub, max_retries=0, timeout=0.3))

    assert time.perf_counter() - started < 2.0
    errors = [r for r in summary.results if not r.ok]
    assert len(errors) == 1 and "Timeout" in errors[0].error
    assert summary.aggregate().errors == 1


def test_a_reply_without_verdict_is_an_error_row_that_is_not_cached(stub):
    cache = InMemoryJudgeCache()
    stub.add_faults(Fault.no_verdict())
    summary = _run(stub, [_item(1, 2, 1)], cache)

    bad = [r for r in summary.results if not r.ok]
    assert len(bad) == 1 and bad[0].raw_reply.startswith("I cannot decide")
    assert "no verdict" in bad[0].error
    assert summary.aggregate().errors == 1 and summary.aggregate().wins == 1
    assert _run(stub, [_item(1, 2, 1)], cache).api_calls == 1


def test_a_rerun_makes_zero_api_calls_and_gives_the_same_aggregation(stub):
    cache = InMemoryJudgeCache()
    first = _run(stub, MIXED_ITEMS, cache, concurrency=4)
    calls_after_first = stub.calls

    again = _run(stub, MIXED_ITEMS, cache, concurrency=4)
    assert stub.calls == calls_after_first
    assert again.api_calls == 0 and again.cached == 12
    assert again.prompt_tokens == again.completion_tokens == 0 and again.cost_usd == 0.0
    assert all(result.cached for result in again.results)
    assert again.aggregate() == first.aggregate()


def test_an_overlapping_job_only_calls_for_new_pairs(stub):
    cache = InMemoryJudgeCache()
    _run(stub, MIXED_ITEMS[:4], cache)
    # Same content under other pair ids (another job) plus two new pairs.
    renumbered = [replace(item, pair_id=100 + i) for i, item in enumerate(MIXED_ITEMS)]
    overlap = _run(stub, renumbered, cache)
    assert overlap.cached == 8 and overlap.api_calls == 4
    assert {r.pair_id for r in overlap.results} == {100 + i for i in range(6)}


def test_identical_content_within_one_run_is_called_once(stub):
    twins = [_item(1, 2, 1), replace(_item(1, 2, 1), pair_id=2)]
    summary = _run(stub, twins, concurrency=4)
    assert summary.api_calls == 2 and summary.cached == 2
    assert {(r.pair_id, r.outcome) for r in summary.results} == {(1, "win"), (2, "win")}


def test_budget_stops_launching_calls_and_resume_finishes(stub):
    stub.usage = (100, 50)
    prices = {"judge-test": (2000.0, 1000.0)}  # 0.20 + 0.05 = 0.25 USD per call, exact in binary
    cache = InMemoryJudgeCache()
    stopped = _run(stub, MIXED_ITEMS, cache, model="judge-test", prices=prices, budget_usd=0.75)

    assert stopped.stopped == "budget"
    assert stopped.api_calls == 3 and stopped.cost_usd == pytest.approx(0.75)
    assert stopped.skipped == 9 and len(stopped.results) == 3

    resumed = _run(stub, MIXED_ITEMS, cache, model="judge-test", prices=prices)
    assert resumed.stopped is None
    assert resumed.api_calls == 9 and resumed.cached == 3
    assert resumed.aggregate().wins == 7


def test_budget_needs_a_price(stub):
    with pytest.raises(ValueError, match="no price"):
        _run(stub, MIXED_ITEMS, model="local-llama", budget_usd=1.0)
    assert stub.calls == 0


def test_unknown_model_reports_tokens_only(stub):
    summary = _run(stub, [_item(1, 2, 1)], model="local-llama")
    assert summary.cost_usd is None and summary.prompt_tokens > 0


def test_cancel_stops_cleanly_and_resume_judges_only_what_is_missing(stub):
    cache = InMemoryJudgeCache()
    cancel = threading.Event()
    seen: list[JudgmentResult] = []

    def on_result(result: JudgmentResult) -> None:
        seen.append(result)
        if len(seen) == 5:
            cancel.set()

    cancelled = _run(stub, MIXED_ITEMS, cache, cancel=cancel, on_result=on_result)
    assert cancelled.stopped == "cancelled"
    assert cancelled.api_calls == 5 == stub.calls and cancelled.skipped == 7

    resumed = _run(stub, MIXED_ITEMS, cache)
    assert resumed.api_calls == 7 and resumed.cached == 5 and stub.calls == 12
    assert resumed.to_cli_json()["wins"] == 7


def test_cancel_before_start_makes_no_calls(stub):
    cancel = threading.Event()
    cancel.set()
    summary = _run(stub, MIXED_ITEMS, cancel=cancel, concurrency=4)
    assert summary.stopped == "cancelled" and stub.calls == 0 and summary.results == []


def test_the_key_reaches_the_server_but_no_result_or_log(stub, caplog):
    caplog.set_level(logging.DEBUG)
    stub.add_faults(*[Fault.server_error(500, retry_after_ms=10)] * 3)
    summary = _run(stub, [_item(1, 2, 1)], client=_client(stub, max_retries=2))

    assert stub.requests[0].authorization == f"Bearer {SECRET_KEY}"
    assert summary.errors == 1
    exported = json.dumps([r.to_dict() for r in summary.results]) + json.dumps(summary.to_cli_json())
    assert SECRET_KEY not in exported
    assert SECRET_KEY not in caplog.text


def test_cli_json_has_the_documented_keys(stub):
    report = _run(stub, MIXED_ITEMS, concurrency=4).to_cli_json()
    assert set(report) == {
        "wins", "losses", "ties", "errors", "inconsistent", "win_rate", "win_rate_fastchat",
        "judgments", "api_calls", "cached", "reused_errors", "no_call", "skipped", "prompt_tokens",
        "completion_tokens", "cost_usd",
    }
    assert report["wins"] + report["losses"] + report["ties"] + report["errors"] == 12
    assert sum(report[k] for k in ("api_calls", "cached", "reused_errors", "no_call", "skipped")) == 12


def test_dry_run_estimate_counts_calls_and_skips_cached_pairs(stub):
    cache = InMemoryJudgeCache()
    before = estimate(MIXED_ITEMS, DEFAULT_TEMPLATE, MODEL, cache=cache)
    assert before["calls"] == 12 and before["cached"] == 0
    assert before["cost_usd_est"] > 0 and "approximate" in before["method"]

    _run(stub, MIXED_ITEMS[:2], cache)
    after = estimate(MIXED_ITEMS, DEFAULT_TEMPLATE, MODEL, cache=cache)
    assert after["calls"] == 8 and after["cached"] == 4
    assert after["prompt_tokens_est"] < before["prompt_tokens_est"]
    assert estimate(MIXED_ITEMS, DEFAULT_TEMPLATE, "local-llama")["cost_usd_est"] is None


def test_make_client_reads_the_environment(monkeypatch, stub):
    monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    client = make_client()
    assert str(client.base_url).rstrip("/") == stub.base_url
    summary = _run(stub, [_item(1, 2, 1)], client=client)
    assert summary.errors == 0


def test_make_client_without_any_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="no API key"):
        make_client()
    # A local server needs no key; the client still gets a placeholder.
    assert make_client("http://127.0.0.1:9/v1").api_key


def test_duplicate_pair_ids_are_rejected(stub):
    with pytest.raises(ValueError, match="duplicate pair id"):
        _run(stub, [_item(1, 2, 1), _item(1, 1, 2)])


# -- pure parts: verdict parsing, orientation, aggregation, keys, prices, prompt ------------


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Assistant A is more accurate. [[A]]", "A"),
        ('Use "[[A]]" if A is better, "[[B]]" if B is better... My verdict: [[B]]', "B"),
        ("[[A]] at first sight, but on reflection it is a tie: [[C]]", "C"),
        ("Final verdict: [[ B ]]", "B"),
        ("Final verdict: [[b]]", None),
        ("Final verdict: [[D]]", None),
        ("Final verdict: [A]", None),
        ("Assistant A is better.", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_verdict_takes_the_last_token(reply, expected):
    assert parse_verdict(reply) == expected


@pytest.mark.parametrize(
    ("order", "verdict", "outcome"),
    [("AB", "A", "win"), ("AB", "B", "loss"), ("BA", "B", "win"), ("BA", "A", "loss"),
     ("AB", "C", "tie"), ("BA", "C", "tie"), ("BA", None, "error")],
)
def test_outcome_is_seen_from_the_system_under_test(order, verdict, outcome):
    assert system_outcome(order, verdict) == outcome


def _verdicts(table: dict[int, tuple[str | None, str | None]]) -> list[JudgmentResult]:
    rows = []
    for pair_id, (ab, ba) in table.items():
        for order, verdict in (("AB", ab), ("BA", ba)):
            rows.append(JudgmentResult(pair_id, order, verdict, "", 0, 0, 0.0, None if verdict else "x", MODEL, ""))
    return rows


HAND_TABLE = {
    1: ("A", "B"),  # win, win
    2: ("A", "A"),  # win, loss: position bias -> FastChat tie
    3: ("C", "C"),  # tie, tie
    4: ("B", None),  # loss, error -> FastChat drops the pair
    5: ("A", "B"),  # win, win
}


def test_aggregations_on_a_hand_counted_table():
    agg = aggregate(_verdicts(HAND_TABLE))
    assert (agg.wins, agg.losses, agg.ties, agg.errors, agg.inconsistent) == (5, 2, 2, 1, 1)
    assert agg.win_rate == pytest.approx(100 * 6 / 9)  # 100 * (5 + 0.5 * 2) / (5 + 2 + 2)
    assert agg.win_rate_fastchat == pytest.approx(75.0)  # pairs 1, 5 win; 2, 3 tie
    assert agg.consistency == pytest.approx(0.75)
    assert (agg.pairs, agg.complete_pairs) == (5, 4)
    assert leval_win_rate(_verdicts({1: (None, None)})) is None


def test_aggregation_refuses_two_judgments_for_one_slot():
    rows = _verdicts({1: ("A", "B")})
    with pytest.raises(ValueError, match="two judgments"):
        aggregate(rows + rows[:1])


def test_bootstrap_interval_is_seeded_and_brackets_the_estimate():
    rows = _verdicts({i: (("A", "B"), ("B", "A"), ("C", "B"), ("A", "A"))[i % 4] for i in range(40)})
    first = bootstrap_ci(rows, seed=7)
    assert first == bootstrap_ci(rows, seed=7)
    assert first != bootstrap_ci(rows, seed=8)
    assert first[0] < leval_win_rate(rows) < first[1]
    assert bootstrap_ci(_verdicts({i: ("A", "B") for i in range(5)})) == (100.0, 100.0)


def test_cache_key_covers_every_input():
    base = (MODEL, "v1", "q", "ref", "a", "b", 0.0)
    key = cache_key(*base)
    assert len(key) == 64 and key == cache_key(MODEL, "v1", "q", "ref", "a", "b", 0)
    for position in range(6):
        changed = list(base)
        changed[position] = changed[position] + "x"
        assert cache_key(*changed) != key
    assert cache_key(*base[:6], 0.7) != key
    assert cache_key(MODEL, "v1", "q", "ref", "b", "a", 0.0) != key  # order matters


def test_prices_cover_snapshots_and_unknown_models():
    assert cost_usd("gpt-4", 1_000_000, 1_000_000) == pytest.approx(90.0)
    assert cost_usd("gpt-4-0613", 1000, 0) == cost_usd("gpt-4", 1000, 0)
    assert cost_usd("gpt-4o-2024-08-06", 1000, 0) == cost_usd("gpt-4o", 1000, 0) != cost_usd("gpt-4", 1000, 0)
    assert cost_usd("llama3:8b", 1000, 1000) is None
    assert cost_usd("llama3:8b", 2_000_000, 0, prices={"llama3:8b": (0.5, 1.0)}) == pytest.approx(1.0)


def test_default_prompt_carries_the_leval_rules():
    sentence = (
        "Additional details or information that are not mentioned in the reference answer "
        "cannot be considered as advantages and do not let them sway your judgment."
    )
    prompt_text = DEFAULT_TEMPLATE.system + DEFAULT_TEMPLATE.user_template
    assert sentence in prompt_text
    assert all(token in prompt_text for token in ("[[A]]", "[[B]]", "[[C]]"))
    assert "factual errors" in prompt_text
    messages = render(DEFAULT_TEMPLATE, "Q {answer_b}?", "R", "first {x}", "second")
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    assert "Q {answer_b}?" in user and "first {x}" in user and user.index("first") < user.index("second")


def test_editing_a_prompt_makes_a_new_version_and_a_new_cache_identity():
    edited = DEFAULT_TEMPLATE.with_edits(system=DEFAULT_TEMPLATE.system + " Be concise.")
    assert edited.version == DEFAULT_TEMPLATE.version + 1
    assert edited.fingerprint() != DEFAULT_TEMPLATE.fingerprint()
    with pytest.raises(ValueError, match="answer_b"):
        DEFAULT_TEMPLATE.with_edits(user_template="{question} {reference} {answer_a}")


class _Ledger:
    """Records what run_calls reserves and settles, and what the stub had received at each reservation."""

    def __init__(self, stub):
        self.stub, self.events, self.open = stub, [], 0

    def reserve(self, call, held):
        assert self.stub.calls == sum(1 for kind, *_ in self.events if kind == "reserve")  # not sent yet
        self.open += 1
        self.events.append(("reserve", held))

    def settle(self, call, held, reply, cost):
        self.open -= 1
        assert reply.prompt_tokens <= held.prompt_tokens and reply.completion_tokens <= held.completion_tokens
        assert cost is not None and cost <= held.cost_usd
        self.events.append(("settle", held, cost))


def test_every_call_is_reserved_before_it_is_sent_and_settled_after(stub):
    ledger = _Ledger(stub)
    summary = _run(stub, MIXED_ITEMS, concurrency=1, ledger=ledger)
    reserved = [event for event in ledger.events if event[0] == "reserve"]
    settled = [event for event in ledger.events if event[0] == "settle"]
    assert len(reserved) == len(settled) == summary.api_calls == stub.calls == 12 and ledger.open == 0
    assert sum(cost for _, _, cost in settled) == pytest.approx(summary.cost_usd)


def test_no_call_starts_while_reservations_in_flight_cover_the_budget(stub):
    stub.usage, stub.latency_s = (100, 50), 0.2
    prices = {"judge-test": (2000.0, 1000.0)}  # 0.25 USD a call; a reservation is several USD
    summary = _run(stub, MIXED_ITEMS, model="judge-test", prices=prices, budget_usd=0.75, concurrency=4)
    # Without reservations four calls would start at once and overshoot; here each waits for the last to settle.
    assert summary.stopped == "budget" and summary.api_calls == 3 == stub.calls
    assert summary.cost_usd == pytest.approx(0.75) and stub.max_active == 1
