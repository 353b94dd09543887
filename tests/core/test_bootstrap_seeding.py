"""Every resampling is seeded from its data (app/core/stats/bootstrap.py): the same data, in any order and
under any ids, gives identical intervals; other data gives other draws."""
from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from app.core.judge.aggregate import bootstrap_ci
from app.core.stats import lveval
from app.core.stats.analyses import build_results
from app.core.stats.bootstrap import units_in_canonical_order
from app.core.stats.judge_bias import PairVerdicts, length_controlled
from tests.core.test_analysis import make_records


def _renumbered(records: list[dict], seed: int) -> list[dict]:
    """The same scores with other question ids (as another database numbers them), in another order."""
    rng = random.Random(seed)
    keys = sorted({(r["document_id"], r["question_id"]) for r in records})
    new_ids = list(range(1, len(keys) + 1))
    rng.shuffle(new_ids)
    renamed = {key: (str(1000 + number // 7), str(number)) for key, number in zip(keys, new_ids)}
    out = [{**r, "document_id": renamed[(r["document_id"], r["question_id"])][0],
            "question_id": renamed[(r["document_id"], r["question_id"])][1]} for r in records]
    rng.shuffle(out)
    return out


def test_the_results_intervals_do_not_depend_on_question_ids_or_record_order():
    records = make_records(n_annotators=3, n_systems=4, n_questions=40, missing=0.2, seed=5)
    first = build_results(records, n_resamples=300, breakdown_fields=())
    again = build_results(_renumbered(records, seed=1), n_resamples=300, breakdown_fields=())
    assert first["systems"] == again["systems"]
    assert first["agreement"]["alpha"] == again["agreement"]["alpha"]
    assert first["significance"] == again["significance"]
    assert all(row["ci_low"] is not None for row in first["systems"])


def test_other_data_draws_otherwise():
    a = [0.1, 0.5, 0.9, 0.3]
    assert units_in_canonical_order(a)[1] == units_in_canonical_order(a[::-1])[1]
    assert units_in_canonical_order(a)[1] != units_in_canonical_order([0.1, 0.5, 0.9, 0.4])[1]
    assert units_in_canonical_order(a)[1] != units_in_canonical_order(a, salt=1)[1]
    assert units_in_canonical_order([0.0, -0.0])[1] == units_in_canonical_order([-0.0, 0.0])[1]


def test_lveval_points_do_not_depend_on_order():
    rng = np.random.default_rng(2)
    scores = list(rng.random(30))
    assert lveval.mean_point(scores) == lveval.mean_point(scores[::-1])
    per_dataset = {"b": scores[:12], "a": scores[12:]}
    shuffled = {"a": scores[12:][::-1], "b": scores[:12][::-1]}
    assert lveval.overall_point(per_dataset) == lveval.overall_point(shuffled)


@dataclass(frozen=True)
class Verdict:
    pair_id: object
    order: str
    verdict: str | None


def test_judge_intervals_do_not_depend_on_pair_ids_or_order():
    rng = random.Random(3)
    verdicts = [Verdict(f"p{i}", order, rng.choice(["A", "B", "C", None]))
                for i in range(25) for order in ("AB", "BA")]
    renamed = [Verdict(f"other-{99 - int(v.pair_id[1:])}", v.order, v.verdict) for v in verdicts]
    rng.shuffle(renamed)
    assert bootstrap_ci(verdicts) == bootstrap_ci(renamed)

    pairs = [PairVerdicts(i, rng.randint(50, 400), rng.randint(50, 400), rng.choice(["win", "loss", "tie"]),
                          rng.choice(["win", "loss", "tie", None])) for i in range(30)]
    other = [PairVerdicts(100 - p.pair_id, p.system_length, p.baseline_length, p.ab, p.ba) for p in pairs[::-1]]
    assert length_controlled(pairs, resamples=50) == length_controlled(other, resamples=50)


def test_a_large_draw_is_drawn_again_not_kept_and_a_small_one_is_kept():
    """A study-wide draw is seeded from the scores, so each save asks for a new one: keeping eight of 16 MB held
    128 MB of memory for nothing (issue 38). Drawn again it is the same draw."""
    from app.core.stats import bootstrap

    bootstrap._cached_draw.cache_clear()
    large = bootstrap.CACHED_CELLS // 1000 + 1
    first = bootstrap.resample_weights(large, 1000, seed=7)
    assert bootstrap._cached_draw.cache_info().currsize == 0
    assert np.array_equal(bootstrap.resample_weights(large, 1000, seed=7), first)
    assert first.sum(axis=1).tolist() == [large] * 1000 and not first.flags.writeable
    small = bootstrap.resample_weights(85, 1000, seed=7)
    assert bootstrap.resample_weights(85, 1000, seed=7) is small
    assert bootstrap._cached_draw.cache_info().currsize == 1
