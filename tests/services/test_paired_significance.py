"""Paired significance between adjacent systems (app.core.stats.paired): scipy's own tests and planted effects."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from app.core.stats.paired import adjacent_tests, bootstrap_interval, paired_test, permutation_p_value


@pytest.mark.parametrize("n", [6, 12, 16])
def test_exact_p_values_equal_scipy_permutation_test(n):
    rng = np.random.default_rng(n)
    first = rng.integers(1, 6, n).astype(float)
    second = np.clip(first - rng.integers(-1, 3, n), 1, 5).astype(float)
    p, exact = permutation_p_value(first - second)
    theirs = stats.permutation_test((first, second), lambda x, y: np.mean(x - y), permutation_type="samples",
                                    n_resamples=np.inf, alternative="two-sided")
    assert exact and p == pytest.approx(theirs.pvalue, abs=1e-12)


def test_random_flips_and_bootstrap_agree_with_scipy():
    rng = np.random.default_rng(3)
    first = rng.integers(1, 6, 85).astype(float)
    second = np.clip(first + rng.normal(-0.3, 1.0, 85).round(), 1, 5)
    p, exact = permutation_p_value(first - second, resamples=20_000)
    theirs = stats.permutation_test((first, second), lambda x, y: np.mean(x - y), permutation_type="samples",
                                    n_resamples=20_000, alternative="two-sided", random_state=0)
    assert not exact and p == pytest.approx(theirs.pvalue, abs=0.006)
    low, high = bootstrap_interval(first - second, resamples=20_000)
    ci = stats.bootstrap(((first - second),), np.mean, method="percentile", n_resamples=20_000,
                         random_state=0).confidence_interval
    assert (low, high) == pytest.approx((ci.low, ci.high), abs=0.03)


def test_a_planted_difference_is_found_and_no_difference_is_not():
    rng = np.random.default_rng(9)
    base = rng.integers(1, 5, 120).astype(float)
    better = np.clip(base + rng.choice([0, 1, 1], 120), 1, 5)  # planted: about +0.6
    found = paired_test(better, base)
    assert found.p_value < 0.001 and found.separable()
    assert found.ci_low < found.mean_difference < found.ci_high and found.ci_low > 0
    same = paired_test(base, np.clip(base + rng.choice([-1, 0, 1], 120), 1, 5))
    assert same.ci_low < 0 < same.ci_high


def _records(means: dict[str, float], questions: int, annotators: int, rng) -> list[dict]:
    records = []
    for q in range(questions):
        difficulty = rng.normal(0, 0.7)
        for system, mean in means.items():
            for a in range(annotators):
                score = int(np.clip(round(mean + difficulty + rng.normal(0, 0.6)), 1, 5))
                records.append({"annotator": f"a{a}", "system": system, "document_id": f"d{q // 10}",
                                "question_id": str(q), "score": score})
    return records


def test_adjacent_systems_and_tie_groups():
    rng = np.random.default_rng(21)
    records = _records({"strong": 4.2, "twin-a": 3.0, "twin-b": 3.0, "weak": 1.8}, 85, 3, rng)
    result = adjacent_tests(records, resamples=5000)
    ranking = [row["system"] for row in result["ranking"]]
    assert ranking[0] == "strong" and ranking[-1] == "weak" and set(ranking[1:3]) == {"twin-a", "twin-b"}
    separable = [t["separable"] for t in result["tests"]]
    assert separable == [True, False, True]
    groups = [row["group"] for row in result["ranking"]]
    assert groups[0] != groups[1] and groups[1] == groups[2] and groups[2] != groups[3]
    middle = result["tests"][1]
    assert middle["n_questions"] == 85 and middle["ci_low"] < 0 < middle["ci_high"]
    # The test uses each question's mean over annotators, paired across the two systems.
    twin_a = {r["question_id"]: [] for r in records}
    for r in records:
        if r["system"] == ranking[1]:
            twin_a[r["question_id"]].append(r["score"])
    twin_b = {q: [] for q in twin_a}
    for r in records:
        if r["system"] == ranking[2]:
            twin_b[r["question_id"]].append(r["score"])
    diff = np.mean([np.mean(twin_a[q]) - np.mean(twin_b[q]) for q in twin_a])
    assert middle["mean_difference"] == pytest.approx(diff)


def test_edge_cases():
    assert paired_test([], []).p_value is None
    assert paired_test([3.0], [2.0]).p_value is None
    with pytest.raises(ValueError):
        paired_test([1.0], [1.0, 2.0])
    assert paired_test([2.0] * 5, [2.0] * 5).p_value == 1.0
    assert adjacent_tests([])["tests"] == []


def test_the_human_scores_page_shows_the_adjacent_tests(app, client, auth):
    from app.services import demo
    from tests.support.scoring_data import generate_scores

    with app.app_context():
        demo.load_demo()
        generate_scores(["ann1", "ann2", "ann3"], seed=4,
                        quality={"balanced-34b": 4.5, "verbose-7b": 3.0, "terse-13b": 3.0, "shaky-3b": 1.2})
    auth.login("researcher")
    page = client.get("/results").get_data(as_text=True)
    assert 'id="adjacent-tests"' in page and "sign-flip permutation test" in page
    rows = page.split('id="adjacent-tests"')[1].split("</table>")[0]
    assert rows.count("<tr data-pair=") == 3
    assert 'data-pair="balanced-34b|' in rows
    assert "tie: not separable" in rows or "separated" in rows
    assert 'id="tie-groups"' in page
