"""The parts of the allocation core: Student's t against scipy, reliability from pairwise differences, and
a fixed study's documents shared out to k annotators by reading load."""
from __future__ import annotations

import random

import pytest
from scipy import stats

from app.core.allocation import reading_load, share_documents
from app.core.allocation.reliability import CONSTANT, NO_SIGNAL, reliabilities, weights
from app.core.allocation.tdist import quantile, two_sided_p


@pytest.mark.parametrize("df", [1, 2, 3, 5, 9, 30, 84, 500])
def test_student_t_equals_scipy(df):
    for t in (0.0, 0.2, 1.0, 1.96, 2.5, 4.0, 12.0):
        assert two_sided_p(t, df) == pytest.approx(2 * stats.t.sf(t, df), abs=1e-10)
    for p in (0.6, 0.9, 0.975, 0.995, 0.99975, 0.1, 0.0004):
        assert quantile(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-9, abs=1e-9)


def _world(noise: dict[int, float], answers: int = 300, seed: int = 0, kinds: dict | None = None) -> dict:
    """Scores of `answers` answers by annotators with the given noise sd (rounded and clipped to 1-5 as people
    score), a bias each; `kinds` may make one a 'uniform' or 'constant' spammer."""
    rng = random.Random(seed)
    bias = {a: rng.gauss(0, 0.2) for a in noise}
    ratings = {}
    for i in range(answers):
        quality = 3 + rng.gauss(0, 0.85)
        row = {}
        for a, sd in noise.items():
            kind = (kinds or {}).get(a)
            if kind == "uniform":
                row[a] = float(rng.randint(1, 5))
            elif kind == "constant":
                row[a] = 4.0
            else:
                row[a] = float(max(1, min(5, round(quality + bias[a] + rng.gauss(0, sd)))))
        ratings[(i, 0)] = row
    return ratings


def test_pairwise_differences_recover_each_annotators_noise_and_order_them():
    noise = {1: 0.4, 2: 0.7, 3: 1.0, 4: 1.3}
    estimates = reliabilities(_world(noise, answers=2000), noise)
    ordered = sorted(noise, key=lambda a: estimates[a].noise_variance)
    assert ordered == [1, 2, 3, 4]
    # Rounding adds about 1/12 of variance; clipping takes a little away from the noisiest.
    assert estimates[1].noise_variance == pytest.approx(0.4 ** 2 + 1 / 12, abs=0.08)
    assert all(r.flag is None and r.noise_se is not None and r.noise_se > 0 for r in estimates.values())
    few = reliabilities(_world(noise, answers=60), noise)
    assert few[1].noise_se > estimates[1].noise_se  # less evidence, a wider estimate


def test_a_constant_and_a_random_scorer_are_flagged_and_weigh_nothing():
    noise = {1: 0.5, 2: 0.6, 3: 0.7, 4: 0.9, 5: 1.0, 6: 1.0}
    ratings = _world(noise, answers=49, seed=0, kinds={5: "uniform", 6: "constant"})
    estimates = reliabilities(ratings, noise)
    assert estimates[6].flag == CONSTANT and estimates[5].flag == NO_SIGNAL
    assert all(estimates[a].flag is None for a in (1, 2, 3, 4))
    w = weights(estimates)
    assert w[5] == w[6] == 0.0 and w[1] > w[4] > 0
    assert weights(estimates, included=[6])[6] > 0  # the owner included them again
    # On one calibration document (49 answers), over 40 seeds: the spammers nearly always, a careful annotator never.
    runs = [reliabilities(_world(noise, answers=49, seed=seed, kinds={5: "uniform", 6: "constant"}), noise)
            for seed in range(40)]
    assert sum(r[5].flag == NO_SIGNAL for r in runs) >= 34 and all(r[6].flag == CONSTANT for r in runs)
    assert not any(r[a].flag for r in runs for a in (1, 2, 3, 4))


def test_two_annotators_share_what_they_disagree_by():
    estimates = reliabilities(_world({1: 0.5, 2: 0.9}, answers=400), [1, 2])
    assert estimates[1].noise_variance == pytest.approx(estimates[2].noise_variance)


def test_reading_load_counts_cjk_characters_at_their_reading_rate():
    english = "The board met on Monday and merged the two units. " * 100
    chinese = "王芳说他不喜欢上海的冬天。李娜在二零零一年搬到了北京。" * 100
    assert reading_load(len(english.split()), len(english)) == pytest.approx(len(english.split()), rel=0.3)
    assert reading_load(len(chinese.split()), len(chinese)) == pytest.approx(0.6 * len(chinese), rel=0.05)


def test_each_document_goes_to_k_annotators_balanced_by_reading():
    loads = {d: float(w) for d, w in enumerate([9000, 7000, 5000, 5000, 3000, 3000, 2000, 2000, 1000, 1000, 500, 500])}
    plan = share_documents(loads, [1, 2, 3], 2, random.Random(0))
    assert all(len(set(people)) == 2 for people in plan.values())
    assert sum(len(p) for p in plan.values()) == 2 * len(loads)  # k readings a document, no more
    reading = {a: sum(loads[d] for d, people in plan.items() if a in people) for a in (1, 2, 3)}
    assert max(reading.values()) - min(reading.values()) <= max(loads.values())  # the LPT bound
    assert max(reading.values()) / min(reading.values()) < 1.2


def test_annotators_who_scored_a_document_keep_it():
    loads = {d: 1000.0 for d in range(6)}
    plan = share_documents(loads, [1, 2, 3, 4], 2, random.Random(0), keep={0: [4], 1: [3, 2]})
    assert 4 in plan[0] and set(plan[1]) == {2, 3}
    plan_again = share_documents(loads, [1, 2, 3, 4], 2, random.Random(0), keep={0: [4], 1: [3, 2]})
    assert plan_again == plan  # the same seed, the same plan
