"""LV-Eval analyses (intervals, ceiling, leakage flag, needle cells) against direct computations, and their SVGs."""
from __future__ import annotations

import re

import numpy as np
import pytest

from app.core.charts.curves import Curve, level_curves
from app.core.charts.heatmap import depth_heatmap, score_colour
from app.core.stats import lveval as analysis
from app.core.stats.bootstrap import canonical_resample_weights

pytestmark = pytest.mark.database_free  # a pure core: the PostgreSQL pass leaves it out

LEVELS = ("16k", "32k", "64k", "128k", "256k")


def test_mean_point_is_the_percentile_bootstrap_over_questions():
    rng = np.random.default_rng(3)
    scores = list(rng.random(40))
    point = analysis.mean_point(scores)
    order, weights = canonical_resample_weights(scores, analysis.RESAMPLES, analysis.SEED)
    means = weights @ np.asarray(scores)[order] / 40
    assert point.mean == pytest.approx(100 * np.mean(scores))
    assert point.low == pytest.approx(100 * np.quantile(means, 0.025))
    assert point.high == pytest.approx(100 * np.quantile(means, 0.975))
    assert point.low < point.mean < point.high and point.n == 40
    assert analysis.mean_point([]) is None
    assert analysis.mean_point([0.5]) == analysis.Point(50.0, None, None, 1)


def test_overall_point_is_the_mean_of_dataset_means():
    per_dataset = {"a": [1.0] * 10, "b": [0.0] * 90}  # pooling would give 10; LV-Eval's overall is 50
    point = analysis.overall_point(per_dataset)
    assert point.mean == pytest.approx(50.0) and point.low == pytest.approx(50.0) and point.high == pytest.approx(50.0)
    noisy = analysis.overall_point({"a": [0.0, 1.0] * 20, "b": [0.2, 0.4] * 20})
    assert noisy.low < noisy.mean < noisy.high


def test_paired_delta_recovers_a_planted_shift():
    rng = np.random.default_rng(5)
    base = {q: float(rng.random()) for q in range(200)}
    variant = {q: min(1.0, value + 0.1) for q, value in base.items()}
    variant[999] = 1.0  # answered by the variant only: left out
    delta = analysis.paired_delta(base, variant)
    exact = 100 * np.mean([variant[q] - base[q] for q in base])
    assert delta.mean == pytest.approx(exact) and delta.n == 200
    assert delta.low <= exact <= delta.high and delta.low > 0


def test_ceiling_scales_the_longest_fully_read_level():
    words = {"16k": 16_000, "32k": 32_000, "64k": 64_000, "128k": 128_000, "256k": 256_000}
    scores = {"16k": 60.0, "32k": 50.0, "64k": 30.0, "128k": 20.0, "256k": 10.0}
    result = analysis.ceiling(LEVELS, scores, 32_000, words)
    assert result.reference_level == "32k"
    assert result.values == {"64k": 25.0, "128k": 12.5, "256k": 6.25}
    flags = analysis.leakage_flags({level: analysis.Point(v, v - 1, v + 1, 10) for level, v in scores.items()},
                                   result.values)
    # 64k: 30 - 1 = 29 is not above 25 + 5; 128k: 19 > 17.5; 256k: 9 is not above 11.25.
    assert flags == {"64k": False, "128k": True, "256k": False}
    short = analysis.ceiling(LEVELS, scores, 8_000, words)
    assert short.reference_level is None and short.values["16k"] == pytest.approx(50.0)
    assert analysis.ceiling(LEVELS, scores, None, words) is None
    assert analysis.visible_share(8_000, 16_000, words_per_token=1.5) == pytest.approx(0.75)


def test_needle_cells_bin_depths_and_average():
    rows = [("16k", 0.0, 1.0), ("16k", 0.05, 0.0), ("16k", 1.0, 1.0), ("32k", 0.55, 0.5), ("8k", 0.5, 1.0)]
    depths, cells, counts = analysis.needle_cells(rows, LEVELS)
    assert depths[0] == "0–10%" and depths[-1] == "90–100%"
    assert cells[0][0] == 50.0 and counts[0][0] == 2
    assert cells[9][0] == 100.0  # depth 1.0 falls in the last bin
    assert cells[5][1] == 50.0 and sum(map(sum, counts)) == 4  # the unknown level is left out
    assert cells[3][3] is None


def test_level_curves_escape_names_and_draw_every_part():
    svg = level_curves(LEVELS, [
        Curve("<script>alert(1)</script>", [50, 40, 30, None, 10], [45, 35, 25, None, 5], [55, 45, 35, None, 15],
              [None, None, 20, 10, 5], [False, False, True, False, False]),
        Curve("b & c", [30, 30, 30, 30, 30]),
    ], title="T <x>")
    assert "<script>" not in svg and "&lt;script&gt;" in svg and "b &amp; c" in svg
    assert svg.count('class="chart-point') == 9 and svg.count("chart-flagged") == 1
    assert svg.count('class="chart-ceiling"') == 1 and "possible leakage" in svg
    xs = sorted({float(x) for x in re.findall(r'<circle cx="([0-9.]+)"', svg)})
    assert len(xs) == 5 and xs[1] - xs[0] == pytest.approx(xs[4] - xs[3])  # levels evenly spaced (doubling)
    assert "No data yet" in level_curves(LEVELS, [Curve("x", [None] * 5)], title="empty")


def test_heatmap_cells_colour_and_escape():
    svg = depth_heatmap(["0–10%", "10–20%"], ["16k", "32k"], [[100.0, None], [0.0, 50.0]], [[2, 0], [1, 3]],
                        title="m<1>: factrecall_en")
    assert "m&lt;1&gt;" in svg and svg.count('class="chart-cell"') == 4
    assert 'fill="#1a9641"' in svg and 'fill="#d7191c"' in svg and 'fill="#f2f2f2"' in svg
    assert "over 3 rows" in svg and "no rows" in svg
    assert score_colour(50.0) == "#e6e6a0"
