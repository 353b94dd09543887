"""The `leval` judge profile equals L-Eval's llm_eval.py (tests/support/leval_judge_reference.py) on scripted replies.

A real `openai` client talks to the local stub server; the same scripted policy (a function of
the messages, tricky replies included) answers the oracle, so every count must agree.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from app.core.judge import parse_verdict
from app.core.judge.profiles import (
    DIFFERENCES, LEVAL_SYSTEM_PROMPT, LEVAL_USER_TEMPLATE, PROFILES, QUIRKS as JUDGE_QUIRKS, SHARED_DEVIATIONS,
)
from app.core.judge.verdict import parse_verdict_leval
from tests.support import leval_judge_reference as oracle
from tests.conftest import require_shared
from tests.support.baselines_layout import build_layout
from tests.support.openai_stub import StubOpenAIServer
from tests.support.tricky_replies import TRICKY_REPLIES

PLAIN = ["Assistant A is closer to the reference. [[A]]", "B is better. [[B]]", "Equally good. [[C]]"]
REPLIES = [t.reply for t in TRICKY_REPLIES] + PLAIN


def scripted(messages: list[dict]) -> str:
    """A deterministic judge: the reply depends on the messages only."""
    digest = hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()).digest()
    return REPLIES[int.from_bytes(digest[:4], "big") % len(REPLIES)]


@pytest.fixture
def judge_stub(monkeypatch):
    with StubOpenAIServer(policy=lambda body: scripted(body["messages"])) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-fidelity-test-0123456789")
        yield server


def run_leval(runner, pred: Path, battle: Path, *extra: str) -> tuple[dict, str]:
    result = runner.invoke(args=["judge", str(pred), "--battle-with", str(battle), "--profile", "leval", "--json",
                                 *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout.strip().splitlines()[-1]), result.stderr


def _verdicts(run: oracle.ReferenceRun) -> list[str]:
    """Each call's outcome in call order ("error" for a reply without a verdict)."""
    return [winner for pair in run.pairs for winner in (pair.g1_winner, pair.g2_winner)]


def assert_equals_llm_eval(report: dict, expected: oracle.ReferenceRun, stub: StubOpenAIServer) -> None:
    assert report["profile"] == "leval"
    assert report["leval"]["statistics"] == expected.statistics
    assert report["leval"]["win_rates"] == pytest.approx({k: 100 * v for k, v in expected.win_rates.items()})
    assert report["ties"] == expected.ties and report["errors"] == expected.errors
    sent = {json.dumps(r.body["messages"], sort_keys=True) for r in stub.requests}
    assert sent == {json.dumps(m, sort_keys=True) for m in expected.calls}  # each distinct prompt, as upstream
    for request in stub.requests:
        body = request.body
        assert (body["max_tokens"], body["n"], body["temperature"]) == (2048, 1, 0)


# --- the profile's parts ------------------------------------------------------------------------

def test_the_leval_prompt_is_llm_eval_verbatim():
    assert LEVAL_SYSTEM_PROMPT == oracle.SYSTEM_PROMPT
    assert LEVAL_USER_TEMPLATE == oracle.PROMPT_TEMPLATE
    leval = PROFILES["leval"]
    assert (leval.max_tokens, leval.n, leval.temperature, leval.tie_identical) == (2048, 1, 0.0, False)
    assert {d["topic"] for d in DIFFERENCES} >= {"Prompt", "Verdict", "Identical answers", "Same model on both sides"}


def test_quirks_list_every_departure_from_llm_eval():
    ids = [q["id"] for q in JUDGE_QUIRKS]
    assert len(ids) == len(set(ids)) == len(DIFFERENCES) + len(SHARED_DEVIATIONS)
    assert all(q["official"] and q["fixed"] and q["metric"] == "judge" for q in JUDGE_QUIRKS)
    # Between the profiles: each point the issue names, and where neither profile is llm_eval.py.
    assert {"judge_prompt", "judge_verdict", "judge_call", "judge_identical_answers", "judge_rows_of_a_file",
            "judge_pairing", "judge_same_model_on_both_sides", "judge_errors", "judge_cache"} <= set(ids)
    assert {"judge_client", "judge_failed_calls", "judge_order_of_calls", "judge_win_rate"} <= set(ids)
    assert [q["changed"] for q in JUDGE_QUIRKS].count(False) == len(SHARED_DEVIATIONS)


@pytest.mark.parametrize("tricky", TRICKY_REPLIES, ids=lambda t: t.name)
def test_verdict_rules_on_tricky_replies(tricky):
    assert parse_verdict_leval(tricky.reply) == tricky.leval
    assert parse_verdict(tricky.reply) == tricky.last_token


# --- whole runs against the oracle -----------------------------------------------------------------

def test_published_human_eval_files(runner, judge_stub, shared_leval):
    folder = shared_leval / "Predictions" / "human_eval"
    pred, battle = folder / "claude-100k.pred.jsonl", folder / "turbo-16k-0613.pred.jsonl"
    expected = oracle.run_llm_eval(pred, battle, scripted)
    report, _ = run_leval(runner, pred, battle)
    assert_equals_llm_eval(report, expected, judge_stub)
    assert report["wins"] == expected.wins("claude-100k") and report["losses"] == expected.wins("turbo-16k-0613")
    # The identical pair is judged under leval, as upstream does: 85 pairs, every prompt sent once.
    assert report["wins"] + report["losses"] + report["ties"] + report["errors"] == 170
    again, _ = run_leval(runner, pred, battle)
    # Verdicts are cached; replies without one are errors, retried on the next run (and still errors here).
    assert again["api_calls"] == len({json.dumps(m) for m, run in zip(expected.calls, _verdicts(expected))
                                      if run == "error"})
    assert again["leval"] == report["leval"]


def test_baselines_layout_files_judge_only_their_f1_rows(runner, judge_stub, tmp_path):
    layout = build_layout(require_shared(), tmp_path, tasks=["financial_qa"],
                          models=["turbo-16k-0613", "llama2-13b-chat-4k"])
    pred = layout.file("llama2-13b-chat-4k", "financial_qa").path
    battle = layout.file("turbo-16k-0613", "financial_qa").path
    expected = oracle.run_llm_eval(pred, battle, scripted)
    assert len(expected.pairs) == 52
    report, notes = run_leval(runner, pred, battle)
    assert_equals_llm_eval(report, expected, judge_stub)
    assert "16 rows not judged" in notes


def _write(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def test_raw_pairing_duplicates_bad_lines_and_one_name_on_both_sides(runner, judge_stub, tmp_path):
    pred = _write(tmp_path / "sys.pred.jsonl", [
        {"query": "ab", "gt": "c", "same_pred": "first answer", "evaluation": "LLM"},
        "{broken",
        {"query": "q2", "gt": "g2", "same_pred": "second answer", "evaluation": "LLM"},
        {"query": "q2", "gt": "g2", "same_pred": "second answer again", "evaluation": "LLM"},
        {"query": "q3 ", "gt": "g3", "same_pred": "no partner", "evaluation": "human"},
    ])
    battle = _write(tmp_path / "base.pred.jsonl", [
        {"query": "a", "gt": "bc", "same_pred": "battle one", "evaluation": "LLM"},
        {"query": "q2", "gt": "g2", "same_pred": "battle two", "evaluation": "LLM"},
        {"query": "q2", "gt": "g2", "same_pred": "battle two, later", "evaluation": "LLM"},
        {"query": "q3", "gt": "g3", "same_pred": "battle three", "evaluation": "human"},
    ])
    expected = oracle.run_llm_eval(pred, battle, scripted)
    report, notes = run_leval(runner, pred, battle)
    assert_equals_llm_eval(report, expected, judge_stub)
    assert list(report["leval"]["statistics"]) [:2] == ["tie", "error"]
    assert "line 2" in notes and "same" in notes and "1 rows of sys.pred.jsonl have no query + gt" in notes
    if "same" in report["leval"]["win_rates"]:
        assert report["win_rate"] == report["leval"]["win_rates"]["same"]


def test_files_llm_eval_refuses_are_refused(runner, judge_stub, tmp_path):
    pred = _write(tmp_path / "a.pred.jsonl", [{"query": "q", "gt": "g", "a_pred": "x", "evaluation": "LLM"}])
    battle = _write(tmp_path / "b.pred.jsonl", [{"query": "q", "gt": "g", "b_pred": "y", "evaluation": "LLM"}] * 2)
    result = runner.invoke(args=["judge", str(pred), "--battle-with", str(battle), "--profile", "leval"])
    assert result.exit_code != 0 and "llm_eval.py asserts they are equal" in result.output
    assert judge_stub.calls == 0
    result = runner.invoke(args=["judge", str(pred), "--battle-with", str(pred), "--profile", "leval",
                                 "--temperature", "0.5"])
    assert result.exit_code != 0 and "temperature 0 only" in result.output


def test_systems_in_the_database_under_leval_are_a_recorded_run(app, runner, judge_stub, tmp_path):
    from sqlalchemy import select

    from app.extensions import db
    from app.models import Job
    from app.services.importers import import_path
    from app.services.judge import win_rates

    shared = require_shared()
    layout = build_layout(shared, tmp_path / "layout", tasks=["financial_qa"],
                          models=["turbo-16k-0613", "llama2-13b-chat-4k"])
    data = tmp_path / "data" / "Open-ended-tasks"
    data.mkdir(parents=True)
    (data / "financial_qa.jsonl").write_bytes((shared / "LEval-data" / "Open-ended-tasks" / "financial_qa.jsonl")
                                              .read_bytes())
    with app.app_context():
        assert not import_path(data.parent).failed and not import_path(layout.root).failed
    pred = layout.file("llama2-13b-chat-4k", "financial_qa").path
    battle = layout.file("turbo-16k-0613", "financial_qa").path
    expected = oracle.run_llm_eval(pred, battle, scripted)
    result = runner.invoke(args=["judge", "llama2-13b-chat-4k", "--battle-with", "turbo-16k-0613", "--profile",
                                 "leval", "--scope", "all", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["leval"]["statistics"] == expected.statistics  # 52 f1 rows, as llm_eval.py selects them
    with app.app_context():
        job = db.session.scalars(select(Job).where(Job.kind == "judge")).one()
        assert job.params["profile"] == "leval"
        [entry] = win_rates(["llama2-13b-chat-4k"])["llama2-13b-chat-4k"]
        assert entry["profile"] == "leval" and entry["n_pairs"] == 52
        assert entry["wins"] == expected.wins("llama2-13b-chat-4k")


# --- identical answers (default profile) ----------------------------------------------------------

def test_the_published_identical_pair_costs_no_call_by_default(runner, judge_stub, shared_leval):
    folder = shared_leval / "Predictions" / "human_eval"
    pred, battle = folder / "claude-100k.pred.jsonl", folder / "turbo-16k-0613.pred.jsonl"
    rows = [[json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] for path in (pred, battle)]
    answers = {(r["query"], r["gt"]): " ".join(r["claude-100k_pred"].split()) for r in rows[0]}
    same = [(r["query"], r["gt"]) for r in rows[1] if answers[(r["query"], r["gt"])] == " ".join(
        r["turbo-16k-0613_pred"].split())]
    identical = len(same)
    assert (len(rows[1]), identical) == (85, 1)
    result = runner.invoke(args=["judge", str(pred), "--battle-with", str(battle), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["profile"] == "default"
    assert report["api_calls"] == judge_stub.calls == 2 * (85 - identical)  # 168, not 170
    assert report["wins"] + report["losses"] + report["ties"] + report["errors"] == 170  # the pair: a tie twice
    assert report["ties"] >= 2
    [(query, gt)] = same
    sent = [r.body["messages"][-1]["content"] for r in judge_stub.requests]
    assert not [c for c in sent if query.strip() in c and gt.strip() in c]  # that pair was never sent
    assert sum(query.strip() in c for c in sent) < len(sent)



def test_identical_answers_tie_in_both_orders_without_a_call(judge_stub):
    from app.core.judge import DEFAULT_TEMPLATE, InMemoryJudgeCache, PairItem, make_client, run_judgments

    items = [PairItem("same", "Q?", "Ref.", "An  answer.\n", "An answer."),
             PairItem("other", "Q2?", "Ref.", "Short.", "A longer answer.")]
    cache = InMemoryJudgeCache()
    client = make_client(judge_stub.base_url, "sk-test-0123456789")
    first = run_judgments(client, items, model="gpt-4", template=DEFAULT_TEMPLATE, cache=cache)
    ties = [r for r in first.results if r.pair_id == "same"]
    assert [(r.order, r.verdict, r.no_call) for r in ties] == [("AB", "C", True), ("BA", "C", True)]
    assert first.api_calls == judge_stub.calls == 2  # only the other pair was sent
    again = run_judgments(client, items, model="gpt-4", template=DEFAULT_TEMPLATE, cache=cache)
    assert again.api_calls == 0 and judge_stub.calls == 2
    # Under leval the pair is judged in both orders, as llm_eval.py judges it.
    leval = run_judgments(client, items[:1], model="gpt-4", template=PROFILES["leval"].template,
                          cache=InMemoryJudgeCache(), profile=PROFILES["leval"])
    assert leval.api_calls == 2 and judge_stub.calls == 4


# --- the judge pages --------------------------------------------------------------------------------

def test_the_judge_page_lists_the_profiles_and_a_leval_run_is_labelled(app, client, auth, judge_stub, tmp_path):
    from sqlalchemy import select

    from app.extensions import db
    from app.models import Job
    from app.services.importers import import_path
    from tests.support.judge_data import BASELINE, SYSTEM, write_judge_dataset

    with app.app_context():
        assert not import_path(write_judge_dataset(tmp_path / "data")).failed
    auth.login("researcher")
    page = client.get("/judge/").get_data(as_text=True)
    for difference in DIFFERENCES + SHARED_DEVIATIONS:
        assert f'data-topic="{difference["topic"]}"' in page
    assert "leval (L-Eval&#39;s llm_eval.py exactly)" in page
    form = {"system": SYSTEM, "baseline": BASELINE, "scope": "human_eval", "judge_model": "gpt-4", "profile": "leval",
            "prompt_id": "1", "temperature": "0", "concurrency": "2", "budget_usd": "", "csrf_token": auth.token(),
            "launch": "Launch"}
    response = client.post("/judge/", data=form)
    assert response.status_code == 302, response.get_data(as_text=True)
    with app.app_context():
        job = db.session.scalars(select(Job).where(Job.kind == "judge")).one()
        assert job.params["profile"] == "leval"
        prompt_id = job.params["prompt_id"]
    run_page = client.get(f"/judge/runs/{job.id}").get_data(as_text=True)
    assert 'data-field="profile">leval (L-Eval&#39;s llm_eval.py exactly)' in run_page
    prompt_page = client.get(f"/judge/prompts/{prompt_id}").get_data(as_text=True)
    assert 'data-field="fixed-prompt"' in prompt_page and "<form" not in prompt_page.split("<main")[-1]
    refused = client.post("/judge/", data={**form, "temperature": "0.7"}).get_data(as_text=True)
    assert "temperature 0 only" in refused
