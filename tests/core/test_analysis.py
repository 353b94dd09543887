"""Check the analysis services against scipy and krippendorff called directly on generated data."""

from __future__ import annotations

import itertools
import json

import krippendorff
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from app.core.stats import (
    breakdown,
    build_results,
    find_disagreements,
    item_means,
    length_instruction_comparison,
    metric_vs_human,
    min_significant_tau,
    negative_abs_length_delta,
    only_annotators,
    package_alpha,
    pairwise_agreement,
    rank_table,
    reliability_data,
    summarize_systems,
    system_means,
    with_length_instruction,
)
from app.core.stats.bootstrap import canonical_resample_weights
from app.core.stats.agreement import (
    IDENTICAL_RATINGS,
    NO_OVERLAP,
    _unit_coincidences,
    alpha_by_system,
    alpha_from_coincidences,
    alpha_result,
    bootstrap_alpha,
    items_scored_by_two_or_more,
)
from app.core.stats.length_instruction import detected_word_target, reference_word_count
from tests.support.shared import require_shared

pytestmark = pytest.mark.database_free  # a pure core: the PostgreSQL pass leaves it out

HYPOTHESIS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SCORES = [1, 2, 3, 4, 5]


def make_records(
    n_annotators: int = 3, n_systems: int = 7, n_questions: int = 85, missing: float = 0.0, seed: int = 0
) -> list[dict]:
    """Generate scores where better systems score higher, with optional missing scores."""
    rng = np.random.default_rng(seed)
    records = []
    for a in range(n_annotators):
        for s in range(n_systems):
            for q in range(n_questions):
                if rng.random() < missing:
                    continue
                score = int(np.clip(round(1.5 + s * 0.5 + rng.normal(0, 1)), 1, 5))
                records.append(
                    {
                        "annotator": f"ann{a}",
                        "system": f"sys{s}",
                        "document_id": f"doc{q // 7}",
                        "question_id": f"q{q % 7}",
                        "task": f"task{q % 3}",
                        "score": score,
                    }
                )
    return records


def package(matrix: np.ndarray) -> float:
    """Call the krippendorff package directly, as the app is required to."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return krippendorff.alpha(reliability_data=matrix, value_domain=SCORES, level_of_measurement="ordinal")


@st.composite
def rating_matrices(draw, min_items: int = 2, max_items: int = 40) -> np.ndarray:
    """Annotators × items matrices of scores 1-5 with NaN holes, guaranteed some overlap and variation."""
    n_annotators = draw(st.integers(2, 4))
    n_items = draw(st.integers(min_items, max_items))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # Draw from a narrow range sometimes so ties dominate.
    high = draw(st.sampled_from([2, 3, 5]))
    matrix = rng.integers(1, high + 1, size=(n_annotators, n_items)).astype(float)
    matrix[rng.random(matrix.shape) < draw(st.floats(0.0, 0.5))] = np.nan
    matrix[:2, 0] = [1.0, 2.0]  # one pairable item with two distinct values keeps alpha defined
    return matrix


# ---------------------------------------------------------------- human scores


def test_summary_means_and_distributions_match_numpy():
    records = make_records(missing=0.1)
    summaries = {row.system: row for row in summarize_systems(records)}
    for system in {r["system"] for r in records}:
        scores = np.array([r["score"] for r in records if r["system"] == system])
        row = summaries[system]
        assert row.mean == pytest.approx(scores.mean())
        assert row.n_scores == len(scores)
        assert list(row.distribution) == np.bincount(scores, minlength=6)[1:].tolist()
        assert sum(row.proportions) == pytest.approx(1.0)
        assert row.ci_low <= row.mean <= row.ci_high
    means = [row.mean for row in summarize_systems(records)]
    assert means == sorted(means, reverse=True)


def test_summary_bootstrap_matches_a_plain_loop_over_resampled_questions():
    records = make_records(n_annotators=2, n_systems=3, n_questions=20, missing=0.2, seed=3)
    summaries = {row.system: row for row in summarize_systems(records, n_resamples=300, seed=11)}
    questions = sorted({(r["document_id"], r["question_id"]) for r in records})
    systems = sorted(summaries)
    # A question, as the resampling sees it: each system's sum and count of scores on it.
    rows = [[sum(r["score"] for r in records if r["system"] == s and (r["document_id"], r["question_id"]) == q)
             for s in systems] + [sum(1 for r in records if r["system"] == s and (r["document_id"], r["question_id"]) == q)
                                  for s in systems] for q in questions]
    order, weights = canonical_resample_weights(rows, 300, 11)
    questions = [questions[i] for i in order]
    for system, row in summaries.items():
        resampled = []
        for picks in weights:
            total = count = 0.0
            for question, times in zip(questions, picks):
                scores = [r["score"] for r in records if r["system"] == system and (r["document_id"], r["question_id"]) == question]
                total += times * sum(scores)
                count += times * len(scores)
            resampled.append(total / count)
        assert row.ci_low == pytest.approx(np.quantile(resampled, 0.025))
        assert row.ci_high == pytest.approx(np.quantile(resampled, 0.975))


def test_summary_interval_agrees_with_scipy_bootstrap_when_scores_are_independent():
    rng = np.random.default_rng(5)
    scores = rng.integers(1, 6, size=400)
    records = [
        {"annotator": "a", "system": "s", "document_id": "d", "question_id": str(i), "score": int(score)}
        for i, score in enumerate(scores)
    ]
    (row,) = summarize_systems(records, n_resamples=4000, seed=1)
    reference = stats.bootstrap((scores,), np.mean, n_resamples=4000, method="percentile", rng=2)
    assert row.ci_low == pytest.approx(reference.confidence_interval.low, abs=0.03)
    assert row.ci_high == pytest.approx(reference.confidence_interval.high, abs=0.03)


def test_bootstrap_is_deterministic_for_a_seed():
    records = make_records(n_questions=30)
    assert summarize_systems(records, seed=7) == summarize_systems(records, seed=7)
    assert summarize_systems(records, seed=7) != summarize_systems(records, seed=8)
    data = reliability_data(records)
    assert np.array_equal(bootstrap_alpha(data.matrix, 200, 4), bootstrap_alpha(data.matrix, 200, 4), equal_nan=True)


@pytest.mark.parametrize("field", ["task", "annotator"])
def test_breakdown_matches_grouped_numpy(field):
    records = make_records(missing=0.3, seed=2)
    rows = breakdown(records, field)
    assert len(rows) == len({(r["system"], r[field]) for r in records})
    for row in rows:
        scores = np.array([r["score"] for r in records if r["system"] == row.system and r[field] == row.group])
        assert (row.n_scores, row.mean, row.std) == (len(scores), pytest.approx(scores.mean()), pytest.approx(scores.std()))


def test_finished_view_and_item_means():
    records = make_records(n_annotators=3, n_systems=2, n_questions=7)
    finished = only_annotators(records, {"ann0", "ann2"})
    assert {r["annotator"] for r in finished} == {"ann0", "ann2"}
    assert len(finished) == 2 * 2 * 7
    means = item_means(records)
    key = ("sys1", "doc0", "q3")
    scores = [r["score"] for r in records if (r["system"], r["document_id"], r["question_id"]) == key]
    assert means[key] == pytest.approx(np.mean(scores))


def test_out_of_range_scores_are_rejected():
    with pytest.raises(ValueError, match="1 to 5"):
        system_means([{"system": "s", "score": 6}])
    with pytest.raises(ValueError):
        summarize_systems([{"annotator": "a", "system": "s", "question_id": "1", "score": 2.5}])


# ---------------------------------------------------------------- metric against human


@HYPOTHESIS
@given(
    human=st.lists(st.integers(1, 5), min_size=2, max_size=12),
    seed=st.integers(0, 10_000),
)
def test_kendall_rows_equal_scipy_with_ties(human, seed):
    rng = np.random.default_rng(seed)
    systems = [f"s{i}" for i in range(len(human))]
    means = dict(zip(systems, map(float, human)))
    metric = dict(zip(systems, rng.integers(0, 4, len(human)).astype(float)))  # coarse values force ties
    (row,) = metric_vs_human(means, {"m": metric})
    expected = stats.kendalltau(human, [metric[s] for s in systems], variant="b")
    if np.isnan(expected.statistic):
        assert row.tau is None and row.p_value is None and row.warnings
    else:
        assert row.tau == pytest.approx(expected.statistic)
        assert row.p_value == pytest.approx(expected.pvalue)
    assert row.n == len(human)


def test_kendall_row_uses_only_systems_with_both_values_and_warns():
    means = {f"s{i}": float(i) for i in range(9)}
    metric = {f"s{i}": float(i % 4) for i in range(9)}
    metric["s3"] = None
    metric["s8"] = float("nan")
    metric["extra"] = 1.0
    (row,) = metric_vs_human(means, {"F1": metric})
    systems = [f"s{i}" for i in (0, 1, 2, 4, 5, 6, 7)]
    expected = stats.kendalltau([means[s] for s in systems], [metric[s] for s in systems])
    assert row.systems == tuple(systems) and row.n == 7
    assert row.tau == pytest.approx(expected.statistic)
    assert any("not significant" in w for w in row.warnings) == (expected.pvalue > 0.05)

    few = metric_vs_human({"a": 1.0, "b": 2.0, "c": 3.0}, {"m": {"a": 1.0, "b": 3.0, "c": 2.0}})[0]
    assert any("fewer than 7" in w for w in few.warnings)
    assert any("not significant" in w for w in few.warnings)


def test_constant_metric_gives_no_tau_and_says_why():
    (row,) = metric_vs_human({"a": 1.0, "b": 2.0, "c": 3.0}, {"m": {"a": 0.5, "b": 0.5, "c": 0.5}})
    assert row.tau is None and row.p_value is None
    assert "same for every system" in row.warnings[0]
    assert np.isnan(stats.kendalltau([1, 2, 3], [0.5, 0.5, 0.5]).statistic)


def test_significance_threshold_for_seven_systems_is_0_714():
    assert min_significant_tau(7) == pytest.approx(15 / 21)
    assert stats.kendalltau(range(7), [1, 0, 2, 4, 3, 6, 5]).pvalue < 0.05  # tau = 15/21
    assert stats.kendalltau(range(7), [2, 0, 1, 4, 3, 6, 5]).pvalue > 0.05  # tau = 13/21
    assert min_significant_tau(4) is None  # even a perfect order is not significant


@pytest.mark.parametrize("n", [5, 6, 9])
def test_significance_threshold_matches_a_scan_of_permutations(n):
    if n <= 6:
        orders = itertools.permutations(range(n))  # every possible order
    else:
        rng = np.random.default_rng(n)
        orders = (rng.permutation(n) for _ in range(1500))
    significant = set()
    for order in orders:
        result = stats.kendalltau(range(n), order)
        if result.pvalue < 0.05 and result.statistic > 0:
            significant.add(round(result.statistic, 9))
    assert min_significant_tau(n) == pytest.approx(min(significant))


def test_length_instructed_systems_are_correlated_separately():
    rng = np.random.default_rng(1)
    means = {f"s{i}": float(rng.random()) for i in range(14)}
    rouge = {s: float(rng.random()) for s in means}
    flagged = {f"s{i}" for i in range(7, 14)}
    (row,) = length_instruction_comparison(means, {"ROUGE-L": rouge}, flagged)
    for result, group in ((row.plain, sorted(set(means) - flagged)), (row.length_instructed, sorted(flagged))):
        expected = stats.kendalltau([means[s] for s in group], [rouge[s] for s in group])
        assert result.systems == tuple(group)
        assert result.tau == pytest.approx(expected.statistic)


@HYPOTHESIS
@given(values=st.lists(st.integers(0, 3), min_size=2, max_size=10), seed=st.integers(0, 1000))
def test_rank_table_averages_ties_like_scipy(values, seed):
    rng = np.random.default_rng(seed)
    systems = [f"s{i:02d}" for i in range(len(values))]
    human = dict(zip(systems, rng.integers(1, 4, len(values)).astype(float)))
    metric = dict(zip(systems, map(float, values)))
    metric[systems[0]] = None
    rows = {row.system: row for row in rank_table(human, {"m": metric})}
    human_ranks = stats.rankdata([-human[s] for s in systems], method="average")
    metric_ranks = stats.rankdata([-metric[s] for s in systems[1:]], method="average")
    for system, rank in zip(systems, human_ranks):
        assert rows[system].human_rank == pytest.approx(rank)
    assert rows[systems[0]].metric_ranks["m"] is None
    if len(systems) - 1 < 2:  # a measure covering one system ranks nothing
        assert all(row.metric_ranks["m"] is None for row in rows.values())
        return
    for system, rank in zip(systems[1:], metric_ranks):
        assert rows[system].metric_ranks["m"] == pytest.approx(rank)


def test_disagreements_rank_reversed_questions_first():
    items = []
    for system, human in (("a", 5.0), ("b", 3.0), ("c", 1.0)):
        items.append({"system": system, "document_id": "d", "question_id": "agree", "metric": human, "human": human})
        items.append({"system": system, "document_id": "d", "question_id": "reverse", "metric": -human, "human": human})
        items.append({"system": system, "document_id": "d", "question_id": "swap", "metric": human, "human": human})
    items[-1]["metric"] = 4.0  # on 'swap', c moves from last to the middle, b to last
    found = find_disagreements(items, top_k=None)
    assert [row.question_id for row in found] == ["reverse", "swap", "agree"]
    assert found[0].gap == pytest.approx((1 + 0 + 1) / 3) and found[0].worst_gap == 1.0
    assert found[-1].gap == 0.0
    assert len(find_disagreements(items, top_k=1)) == 1


def test_disagreement_gaps_match_rankdata_on_random_items():
    rng = np.random.default_rng(9)
    items = [
        {"system": f"s{s}", "question_id": str(q), "metric": float(rng.integers(0, 3)), "human": float(rng.integers(1, 6))}
        for q in range(30)
        for s in range(5)
    ]
    for row in find_disagreements(items, top_k=None):
        chosen = [i for i in items if i["question_id"] == row.question_id]
        metric = (stats.rankdata([-i["metric"] for i in chosen]) - 1) / 4
        human = (stats.rankdata([-i["human"] for i in chosen]) - 1) / 4
        assert row.gap == pytest.approx(np.abs(metric - human).mean())


def test_negative_abs_length_delta():
    pairs = {
        "long": [("one two three four five six", "a b"), ("one two", "a b c d")],  # mean 4 vs 3
        "exact": [("x y", "a b")],
    }
    assert negative_abs_length_delta(pairs) == {"long": -1.0, "exact": 0.0}


# ---------------------------------------------------------------- annotator agreement


@HYPOTHESIS
@given(matrix=rating_matrices())
def test_alpha_equals_the_krippendorff_package(matrix):
    value, reason = package_alpha(matrix)
    expected = package(matrix)
    if np.isnan(expected):
        assert value is None and reason == IDENTICAL_RATINGS
    else:
        assert reason is None and value == pytest.approx(expected)
        batched = alpha_from_coincidences(_unit_coincidences(matrix).sum(axis=0).reshape(5, 5))
        assert batched == pytest.approx(expected)


@HYPOTHESIS
@given(matrix=rating_matrices(min_items=5), seed=st.integers(0, 1000))
def test_bootstrap_alpha_equals_the_package_on_each_resample(matrix, seed):
    resampled = bootstrap_alpha(matrix, n_resamples=5, seed=seed)
    order, weights = canonical_resample_weights(_unit_coincidences(matrix), 5, seed)
    for row, picks in zip(resampled, weights.astype(int)):
        columns = np.repeat(order, picks)
        try:
            expected = package(matrix[:, columns])
        except ValueError:  # the resample lost every item scored twice
            expected = np.nan
        if np.isnan(expected):
            assert np.isnan(row)
        else:
            assert row == pytest.approx(expected)


def test_identical_ratings_are_undefined_and_explained():
    matrix = np.full((3, 10), 4.0)
    matrix[2, :3] = np.nan
    with pytest.raises(ValueError, match="more than one value"):
        krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")
    assert np.isnan(package(matrix))
    value, reason = package_alpha(matrix)
    assert value is None and reason == IDENTICAL_RATINGS
    records = [
        {"annotator": a, "system": "s", "question_id": str(q), "score": 4} for a in ("x", "y") for q in range(5)
    ]
    result = alpha_result(reliability_data(records))
    assert (result.alpha, result.ci_low, result.ci_high) == (None, None, None)
    assert "identical" in result.reason


def test_no_overlap_is_undefined():
    matrix = np.array([[1.0, np.nan], [np.nan, 5.0]])
    with pytest.raises(ValueError):
        package(matrix)
    assert package_alpha(matrix) == (None, NO_OVERLAP)


def test_reliability_matrix_from_records_keeps_the_latest_score():
    records = make_records(n_systems=2, n_questions=7, missing=0.3, seed=4)
    records.append(dict(records[0], score=5 if records[0]["score"] != 5 else 1))
    data = reliability_data(records)
    assert data.matrix.shape == (3, len({(r["system"], r["document_id"], r["question_id"]) for r in records}))
    first = records[0]
    row = data.annotators.index(first["annotator"])
    column = data.items.index((first["system"], first["document_id"], first["question_id"]))
    assert data.matrix[row, column] == records[-1]["score"]
    assert np.isnan(data.matrix).sum() == data.matrix.size - len({(r["annotator"], r["system"], r["document_id"], r["question_id"]) for r in records})


def test_alpha_overall_and_per_system_with_intervals():
    records = make_records(missing=0.2, seed=6)
    data = reliability_data(records)
    results = alpha_by_system(data, n_resamples=500, seed=3)
    assert [r.scope for r in results] == ["overall"] + [f"sys{s}" for s in range(7)]
    assert results[0].alpha == pytest.approx(package(data.matrix))
    assert results[0].ci_low < results[0].alpha < results[0].ci_high
    for result in results[1:]:
        columns = [i for i, item in enumerate(data.items) if item[0] == result.scope]
        assert result.alpha == pytest.approx(package(data.matrix[:, columns]))
        assert result.n_items == len(columns)
        assert result.ci_low <= result.ci_high


def test_pairwise_agreement_matches_scipy_and_counts():
    records = make_records(n_systems=4, n_questions=21, missing=0.25, seed=8)
    data = reliability_data(records)
    pairs = pairwise_agreement(data)
    assert len(pairs) == 3
    by_key = {}
    for r in records:
        by_key[(r["annotator"], r["system"], r["document_id"], r["question_id"])] = r["score"]
    for pair in pairs:
        common = sorted(
            {k[1:] for k in by_key if k[0] == pair.annotator_a} & {k[1:] for k in by_key if k[0] == pair.annotator_b}
        )
        x = [by_key[(pair.annotator_a, *item)] for item in common]
        y = [by_key[(pair.annotator_b, *item)] for item in common]
        expected = stats.kendalltau(x, y, variant="b")
        assert pair.n_common == len(common)
        assert pair.tau == pytest.approx(expected.statistic)
        assert pair.p_value == pytest.approx(expected.pvalue)
        assert pair.exact == pytest.approx(sum(a == b for a, b in zip(x, y)) / len(x))
        assert pair.within_one == pytest.approx(sum(abs(a - b) <= 1 for a, b in zip(x, y)) / len(x))
    counts = {}
    for annotator, *item in by_key:
        counts[tuple(item)] = counts.get(tuple(item), 0) + 1
    assert items_scored_by_two_or_more(data) == sum(1 for c in counts.values() if c >= 2)


def test_pairwise_agreement_without_overlap_or_variation():
    matrix = np.array([[1.0, 2.0, np.nan, np.nan], [np.nan, np.nan, 3.0, 4.0], [3.0, 3.0, 3.0, np.nan]])
    data = reliability_data(
        [
            {"annotator": f"a{a}", "system": "s", "question_id": str(q), "score": int(matrix[a, q])}
            for a in range(3)
            for q in range(4)
            if not np.isnan(matrix[a, q])
        ]
    )
    pairs = {(p.annotator_a, p.annotator_b): p for p in pairwise_agreement(data)}
    assert pairs[("a0", "a1")].n_common == 0 and pairs[("a0", "a1")].tau is None
    constant = pairs[("a0", "a2")]
    assert constant.tau is None and "single value" in constant.reason
    assert constant.exact == 0.0 and constant.within_one == 0.5  # (1, 3) and (2, 3)
    single = pairs[("a1", "a2")]
    assert single.n_common == 1 and single.tau is None and single.exact == 1.0


# ---------------------------------------------------------------- length instruction and full results


def test_length_instruction_appends_the_reference_word_count():
    prompt = with_length_instruction("Summarise the meeting.  ", "The team agreed to ship on Friday.")
    assert prompt == "Summarise the meeting. We need a 7-word answer."
    assert detected_word_target(prompt) == 7
    assert detected_word_target("Summarise the meeting.") is None
    with pytest.raises(ValueError):
        with_length_instruction("Question?", "   ")


def test_word_counts_agree_with_length_instructions_in_leval_predictions():
    folder = require_shared() / "Predictions" / "human_eval"
    checked = 0
    for path in sorted(folder.glob("*.pred.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            target = detected_word_target(row.get("prompt") or "")
            if target is not None:
                assert target == reference_word_count(row["gt"]), path.name
                checked += 1
    assert checked >= 85


def test_build_results_is_json_ready_and_honours_the_finished_view():
    records = make_records(missing=0.1)
    means = system_means(records)
    metrics = {"F1": {s: m + 0.1 for s, m in means.items()}, "flat": {s: 1.0 for s in means}}
    results = build_results(records, metrics, length_instructed={"sys5", "sys6"}, n_resamples=200)
    json.dumps(results, allow_nan=False)
    assert results["correlations"][0]["tau"] == pytest.approx(1.0)
    assert results["correlations"][1]["tau"] is None
    assert results["significance_threshold_tau"] == pytest.approx(15 / 21)
    assert len(results["systems"]) == 7 and results["length_instruction"][0]["length_instructed"]["n"] == 2
    finished = build_results(records, metrics, finished_annotators={"ann0", "ann1"}, n_resamples=50)
    assert finished["annotators"] == ["ann0", "ann1"]
    assert finished["n_scores"] == sum(r["annotator"] != "ann2" for r in records)


def test_breakdowns_do_not_depend_on_the_order_of_the_scores():
    """A re-imported database returns the same scores in another order: not one bit may change."""
    from app.core.stats.human import breakdown

    rng = np.random.default_rng(1)
    records = [{"system": "s", "task": "t", "score": int(value)} for value in rng.integers(1, 6, size=97)]
    seen = set()
    for _ in range(200):
        rng.shuffle(records)
        (row,) = breakdown(records, "task")
        seen.add((row.mean, row.std))
    assert len(seen) == 1
