"""Judge bias probes (app.core.stats.judge_bias): checked against scipy and against planted synthetic biases."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from app.core.stats.judge_bias import (
    L2_PENALTY, PairVerdicts, fit_logistic, length_controlled, longer_wins, position_probe, probe_by_task,
    wilson_interval,
)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (57, 85), (1460, 1803)])
def test_wilson_interval_equals_scipy(k, n):
    ours = wilson_interval(k, n)
    theirs = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert ours.share == k / n
    assert (ours.low, ours.high) == pytest.approx((theirs.low, theirs.high), abs=1e-9)
    assert wilson_interval(0, 0).share is None


def test_logistic_fit_equals_a_direct_maximisation():
    rng = np.random.default_rng(7)
    x = np.tanh(rng.normal(size=400))
    y = rng.choice([0.0, 0.5, 1.0], size=400, p=[0.3, 0.2, 0.5])
    w = rng.integers(1, 4, size=400).astype(float)

    def loss(beta):
        z = beta[0] + beta[1] * x
        return -(w * (y * z - np.logaddexp(0, z))).sum() + 0.5 * L2_PENALTY * beta @ beta

    direct = optimize.minimize(loss, np.zeros(2), method="BFGS", options={"gtol": 1e-10}).x
    intercept, slope, converged = fit_logistic(x, y, weights=w)
    assert converged and (intercept, slope) == pytest.approx(tuple(direct), abs=1e-5)


def _planted_logistic(theta, phi, n, rng):
    system = rng.integers(20, 400, n)
    baseline = rng.integers(20, 400, n)
    delta = np.repeat(system - baseline, 2).astype(float)
    scale = delta.std(ddof=1)
    pairs = []
    for i, (s, b) in enumerate(zip(system, baseline)):
        p = sigmoid(theta + phi * math.tanh((s - b) / scale))
        ab, ba = ("win" if rng.random() < p else "loss" for _ in range(2))
        pairs.append(PairVerdicts(i, int(s), int(b), ab, ba, task=f"t{i % 2}"))
    return pairs


def test_a_planted_logistic_length_bias_is_recovered():
    """Verdicts drawn from logit P(win) = 0.4 + 1.5 tanh(ΔL / sd): LC must come back within 3 points."""
    pairs = _planted_logistic(0.4, 1.5, 3000, np.random.default_rng(1))
    lc = length_controlled(pairs, resamples=100)
    truth = 100 * sigmoid(0.4)
    assert lc.lc_win_rate == pytest.approx(truth, abs=3.0)
    assert lc.length_coefficient == pytest.approx(1.5, abs=0.25)
    assert lc.ci_low < truth < lc.ci_high
    # No length effect planted: the coefficient is near 0 and LC equals the raw rate.
    flat = length_controlled(_planted_logistic(-0.3, 0.0, 3000, np.random.default_rng(2)), resamples=0)
    assert abs(flat.length_coefficient) < 0.2 and flat.lc_win_rate == pytest.approx(flat.win_rate, abs=2.0)


@pytest.mark.parametrize("strength", [0.0, 0.3, 0.6, 0.9])
def test_a_judge_preferring_the_longer_answer_with_known_strength(strength):
    """With probability `strength` the judge picks the longer answer, else a fair coin (equal quality).

    It is consistent across orders, so P(longer wins) among decided pairs is (1 + strength) / 2; the
    system's answers are longer on average, so its raw win rate is inflated while LC stays near 50%.
    """
    rng = np.random.default_rng(11)
    pairs = []
    for i in range(4000):
        baseline = int(rng.integers(20, 300))
        system = baseline + int(rng.integers(-60, 200))
        if system == baseline:
            system += 1
        longer_is_system = system > baseline
        picks_longer = rng.random() < strength or rng.random() < 0.5
        system_wins = picks_longer == longer_is_system
        outcome = "win" if system_wins else "loss"
        pairs.append(PairVerdicts(i, system, baseline, outcome, outcome))
    found = longer_wins(pairs)
    expected = (1 + strength) / 2
    assert found.share == pytest.approx(expected, abs=0.025)
    assert found.low <= expected <= found.high or abs(found.share - expected) < 0.02
    lc = length_controlled(pairs, resamples=0)
    assert lc.lc_win_rate == pytest.approx(50.0, abs=6.0)
    if strength >= 0.6:
        assert lc.win_rate > 65.0  # the raw rate is inflated by length; LC removes most of it


def test_a_planted_position_bias_gives_the_expected_consistency_and_flips():
    """The judge names assistant A with probability b, otherwise the better answer (system with q)."""
    rng = np.random.default_rng(5)
    b, q, n = 0.3, 0.6, 6000
    pairs = []
    for i in range(n):
        better_is_system = rng.random() < q
        ab = "win" if (rng.random() < b or better_is_system) else "loss"
        ba = "loss" if rng.random() < b else ("win" if better_is_system else "loss")
        pairs.append(PairVerdicts(i, 100, 100, ab, ba))
    probe = position_probe(pairs)
    # Better system: AB is always a win, BA a loss exactly when A is named. Better baseline: BA is always a
    # loss, AB a win exactly when A is named. Either way the orders disagree (a swap flip) with probability b.
    assert probe.consistency == pytest.approx(1 - b, abs=0.02)
    assert probe.swap_flip_rate == pytest.approx(b, abs=0.02)
    assert probe.first_position.share == pytest.approx((1 + b) / 2, abs=0.02)


def test_ties_errors_and_pending_verdicts():
    pairs = [PairVerdicts(1, 10, 20, "tie", "tie"), PairVerdicts(2, 30, 20, "win", "error"),
             PairVerdicts(3, 30, 20, None, "loss"), PairVerdicts(4, 20, 20, "win", "win"),
             PairVerdicts(5, 50, 20, "win", "loss")]
    probe = position_probe(pairs)
    assert (probe.complete_pairs, probe.consistent_pairs, probe.swap_flips) == (3, 2, 1)
    assert longer_wins(pairs).trials == 0  # pair 4 has equal lengths; ties and flips are not decided
    lc = length_controlled(pairs, resamples=0)
    assert lc.observations == 8 and lc.win_rate == pytest.approx(100 * (0.5 + 0.5 + 1 + 0 + 1 + 1 + 1 + 0) / 8)
    assert set(probe_by_task(pairs)) == {""}
    assert length_controlled([]).lc_win_rate is None


# --- end to end: a stub judge with a planted length preference, through the database and the page ---------

STRENGTH = 0.7


def _unit(text: str) -> float:
    import hashlib

    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2 ** 64


def longer_preferring_judge(body) -> str:
    """Picks the longer answer with probability STRENGTH, else a fair coin; the same in both orders."""
    from tests.support.judge_data import answers_in

    _, answer_a, answer_b = answers_in(body)
    first, second = sorted((answer_a, answer_b))
    longer = max((answer_a, answer_b), key=lambda a: len(a.split()))
    if _unit("strength" + first + second) < STRENGTH:
        winner = longer
    else:
        winner = first if _unit("coin" + first + second) < 0.5 else second
    return f"Verdict: [[{'A' if winner == answer_a else 'B'}]]"


def _write_dataset(root, n_questions: int = 240):
    import json as _json

    rng = np.random.default_rng(3)
    tasks = root / "LEval-data" / "Open-ended-tasks"
    tasks.mkdir(parents=True)
    questions = [f"Question {i} about the filing?" for i in range(n_questions)]
    refs = [f"Reference answer {i}." for i in range(n_questions)]
    docs = [{"instructions": questions[j:j + 60], "outputs": refs[j:j + 60], "input": f"Document {j}.",
             "source": "financial_qa" if j < 120 else "legal_contract_qa", "evaluation": "LLM"}
            for j in range(0, n_questions, 60)]
    for task in ("financial_qa", "legal_contract_qa"):
        lines = [_json.dumps(d) for d in docs if d["source"] == task]
        (tasks / f"{task}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for name, extra in (("long-model", 60), ("short-model", 0)):
        folder = root / "preds" / name
        folder.mkdir(parents=True)
        for task, offset in (("financial_qa", 0), ("legal_contract_qa", 120)):
            rows = []
            for i in range(offset, offset + 120):
                words = int(rng.integers(5, 80)) + (int(rng.integers(0, extra)) if extra else 0)
                rows.append(_json.dumps({"query": questions[i], "gt": refs[i],
                                         f"{name}_pred": f"{name} {i} " + " ".join(["word"] * words),
                                         "evaluation": "LLM"}))
            (folder / f"{task}.pred.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")


def test_the_bias_page_recovers_a_planted_length_preference(app, runner, client, auth, tmp_path, monkeypatch):
    import json as _json
    import re

    from sqlalchemy import select

    from app.extensions import db
    from app.models import Job
    from app.services.importers import import_path
    from app.services.judge import RunSpec
    from app.services.judge.bias import pair_verdicts
    from app.services.judge.reports import run_report
    from tests.support.openai_stub import StubOpenAIServer

    _write_dataset(tmp_path)
    with app.app_context():
        assert not import_path(tmp_path / "LEval-data").failed
        assert not import_path(tmp_path / "preds").failed
    with StubOpenAIServer(policy=longer_preferring_judge) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-bias-test-0123456789")
        result = runner.invoke(args=["judge", "long-model", "--battle-with", "short-model", "--scope", "llm",
                                     "--json"])
        assert result.exit_code == 0, result.output
    with app.app_context():
        job = db.session.scalars(select(Job).where(Job.kind == "judge")).one()
        verdicts = pair_verdicts(run_report(RunSpec.from_params(job.params), bootstrap_iterations=0))
    direct = longer_wins(verdicts)
    expected = (1 + STRENGTH) / 2
    assert direct.trials > 150 and direct.share == pytest.approx(expected, abs=0.08)
    assert direct.low <= expected <= direct.high

    auth.login("researcher")
    page = client.get(f"/judge/runs/{job.id}/bias").get_data(as_text=True)
    overall = page.split('data-task="All tasks"')[1].split("</tr>")[0]
    shown = re.search(r'data-probe="longer_wins">([\d.]+)%', overall).group(1)
    assert float(shown) == pytest.approx(100 * direct.share, abs=0.05)
    assert 'data-task="financial_qa"' in page and 'data-task="legal_contract_qa"' in page
    assert "arXiv:2404.04475" in page and page.count("<svg") >= 2
    assert "<script" not in page.split("<main")[-1]
    assert _json.loads(result.stdout.strip().splitlines()[-1])["profile"] == "default"
