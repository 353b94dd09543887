"""`python run.py judge`: files or systems, (query, gt) pairing, --json against the stub, caching."""
from __future__ import annotations

import json
import shutil

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import Job
from app.services import demo
from app.services.judge import win_rates
from tests.support.judge_data import expected_outcomes, read_pred_file, shorter_judge, shorter_verdict

DEMO = demo.DEMO_PATH / "human_eval"
CLI_KEYS = {"wins", "losses", "ties", "errors", "inconsistent", "win_rate", "win_rate_fastchat", "judgments",
            "api_calls", "reused_errors", "no_call", "skipped", "cost_usd_is_upper_bound",
            "cached", "prompt_tokens", "completion_tokens", "cost_usd", "profile"}


STUB_POLICY = shorter_judge
STUB_IS_DEFAULT_ENDPOINT = True  # the CLI finds the stub through OPENAI_BASE_URL and OPENAI_API_KEY


def judge(runner, *args: str) -> dict:
    result = runner.invoke(args=["judge", *map(str, args), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout.strip().splitlines()[-1])


def expected_from_files(system_file, baseline_file) -> dict:
    system, baseline = read_pred_file(system_file), read_pred_file(baseline_file)
    pairs = [(answer, baseline[key]) for key, answer in system.items() if key in baseline]
    counts = expected_outcomes(pairs, shorter_verdict)
    counts["win_rate"] = 100 * (counts["wins"] + 0.5 * counts["ties"]) / (2 * len(pairs))
    return counts | {"pairs": len(pairs)}


def test_json_output_on_the_demo_files(runner, stub):
    system, baseline = DEMO / "balanced-34b.pred.jsonl", DEMO / "verbose-7b.pred.jsonl"
    expected = expected_from_files(system, baseline)
    report = judge(runner, system, "--battle-with", baseline)

    assert set(report) == CLI_KEYS
    assert {k: report[k] for k in ("wins", "losses", "ties")} == {k: expected[k] for k in ("wins", "losses", "ties")}
    assert report["wins"] + report["losses"] + report["ties"] == 2 * expected["pairs"] == 20
    assert report["win_rate"] == pytest.approx(expected["win_rate"])
    assert (report["errors"], report["api_calls"], report["cached"]) == (0, 20, 0) and stub.calls == 20
    assert report["prompt_tokens"] > 0 and report["cost_usd"] > 0

    again = judge(runner, system, "--battle-with", baseline, "--concurrency", "2")
    assert (again["api_calls"], again["cached"], stub.calls) == (0, 20, 20)
    assert again["win_rate"] == report["win_rate"] and again["cost_usd"] == 0.0


def test_l_eval_human_eval_claude_against_turbo(runner, stub, shared_leval):
    folder = shared_leval / "Predictions" / "human_eval"
    system, baseline = folder / "claude-100k.pred.jsonl", folder / "turbo-16k-0613.pred.jsonl"
    expected = expected_from_files(system, baseline)
    report = judge(runner, system, "--battle-with", baseline, "--judge-model", "gpt-4", "--concurrency", "8")

    assert expected["pairs"] == 85
    assert {k: report[k] for k in ("wins", "losses", "ties")} == {k: expected[k] for k in ("wins", "losses", "ties")}
    assert report["win_rate"] == pytest.approx(expected["win_rate"]) and report["errors"] == 0
    # One pair has identical answers: a tie in both orders without a call (default profile).
    assert (report["api_calls"], report["cached"]) == (168, 0) and stub.calls == 168
    assert judge(runner, system, "--battle-with", baseline)["api_calls"] == 0


def test_systems_in_the_database_are_recorded_as_a_run(app, runner, stub):
    with app.app_context():
        demo.load_demo()
    report = judge(runner, "terse-13b", "--battle-with", "shaky-3b")
    expected = expected_from_files(DEMO / "terse-13b.pred.jsonl", DEMO / "shaky-3b.pred.jsonl")
    assert report["win_rate"] == pytest.approx(expected["win_rate"]) and report["api_calls"] == 20

    # The same content given as files is linked to the same systems: all cached.
    files = judge(runner, DEMO / "terse-13b.pred.jsonl", "--battle-with", DEMO / "shaky-3b.pred.jsonl")
    assert (files["api_calls"], files["cached"]) == (0, 20)
    with app.app_context():
        job = db.session.scalars(select(Job).where(Job.kind == "judge")).one()
        assert job.status == "done" and job.params["source"] == "cli" and job.params["scope"] == "human_eval"
        [entry] = win_rates(["terse-13b"])["terse-13b"]
        assert entry["win_rate"] == pytest.approx(report["win_rate"]) and entry["n_pairs"] == 10


def test_text_output_names_both_aggregations(runner, stub):
    result = runner.invoke(args=["judge", str(DEMO / "shaky-3b.pred.jsonl"), "--battle-with",
                                 str(DEMO / "terse-13b.pred.jsonl")])
    assert result.exit_code == 0, result.output
    assert "L-Eval win rate:" in result.output and "FastChat win rate:" in result.output
    assert "Bootstrap 95% interval" in result.output and "API calls 20, cached 0" in result.output


def test_a_duplicate_pair_in_a_file_is_an_error(runner, stub, tmp_path):
    lines = (DEMO / "terse-13b.pred.jsonl").read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "twice.pred.jsonl"
    bad.write_text("\n".join(lines + lines[:1]) + "\n", encoding="utf-8")
    result = runner.invoke(args=["judge", str(bad), "--battle-with", str(DEMO / "shaky-3b.pred.jsonl")])
    assert result.exit_code != 0
    assert f"line {len(lines) + 1}: duplicate (query, gt), first on line 1" in result.output
    assert stub.calls == 0


@pytest.mark.parametrize(("args", "message"), [
    (["no-such-system", "--battle-with", "shaky-3b"], "neither a prediction file nor a system"),
    ([str(DEMO / "demo.ref.jsonl"), "--battle-with", str(DEMO / "shaky-3b.pred.jsonl")], "demo.ref.jsonl"),
    ([str(DEMO / "shaky-3b.pred.jsonl"), "--battle-with", str(DEMO / "terse-13b.pred.jsonl"),
      "--budget-usd", "1", "--judge-model", "local-llama"], "no price"),
])
def test_bad_arguments_are_refused(runner, stub, args, message):
    result = runner.invoke(args=["judge", *args])
    assert result.exit_code != 0 and message in result.output and stub.calls == 0


def test_files_without_common_pairs_are_refused(runner, stub, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(demo.DEMO_PATH / "ngram_eval" / "terse-13b" / "scientific_qa.pred.jsonl", other / "x.pred.jsonl")
    result = runner.invoke(args=["judge", str(other / "x.pred.jsonl"), "--battle-with",
                                 str(DEMO / "shaky-3b.pred.jsonl")])
    assert result.exit_code != 0 and "share no (query, gt) pair" in result.output


COUNTED_ONCE = ("api_calls", "cached", "reused_errors", "no_call", "skipped")


def _with_identical_answers(tmp_path, copies: int):
    """verbose-7b's file with its first `copies` answers replaced by balanced-34b's (same query and gt)."""
    system = {(r["query"], r["gt"]): r for r in map(json.loads, (DEMO / "balanced-34b.pred.jsonl").read_text(
        encoding="utf-8").splitlines())}
    rows = [json.loads(line) for line in (DEMO / "verbose-7b.pred.jsonl").read_text(encoding="utf-8").splitlines()]
    for row in rows[:copies]:
        row["verbose-7b_pred"] = system[(row["query"], row["gt"])]["balanced-x_pred"]
    battle = tmp_path / "verbose-7b.pred.jsonl"
    battle.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return battle


def test_json_counts_every_judgment_once_with_shared_replies_without_a_verdict(runner, stub, tmp_path):
    """Under leval, a pair with identical answers sends one prompt for both orders; a reply without a verdict
    is shared by the second order, which was counted nowhere (api_calls + cached fell short of the judgments)."""
    from tests.support.openai_stub import Fault

    battle = _with_identical_answers(tmp_path, copies=3)
    stub.policy = lambda body: "Assistant A is closer to the reference. [[A]]"  # readable under both profiles
    stub.add_faults(*[Fault.no_verdict() for _ in range(20)])  # every reply of this run: no verdict
    report = judge(runner, DEMO / "balanced-34b.pred.jsonl", "--battle-with", battle, "--profile", "leval")
    assert report["judgments"] == 20 and report["errors"] == 20
    assert (report["api_calls"], report["cached"], report["reused_errors"]) == (17, 0, 3) == (stub.calls, 0, 3)
    assert sum(report[key] for key in COUNTED_ONCE) == report["judgments"]

    stub.clear_faults()  # verdicts now: the repeated prompt's verdict is shared, counted as cached
    again = judge(runner, DEMO / "balanced-34b.pred.jsonl", "--battle-with", battle, "--profile", "leval")
    assert (again["api_calls"], again["cached"], again["reused_errors"]) == (17, 3, 0)
    assert sum(again[key] for key in COUNTED_ONCE) == again["judgments"] == 20

    tied = judge(runner, DEMO / "balanced-34b.pred.jsonl", "--battle-with", battle)  # default profile
    assert (tied["no_call"], tied["api_calls"]) == (6, 14)
    assert sum(tied[key] for key in COUNTED_ONCE) == tied["judgments"] == 20
