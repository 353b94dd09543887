"""Check the SVG charts: well-formed, accessible, escaped, self-contained, and geometrically sane."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.charts import distribution_chart, grouped_bar_chart, mean_ci_chart, rank_chart, scatter_chart
from app.core.charts.svg import SVG_NAMESPACE

pytestmark = pytest.mark.database_free  # a pure core: the PostgreSQL pass leaves it out

NS = {"svg": SVG_NAMESPACE}
HOSTILE = '<script>alert(1)</script>'
SVG_TAG = f"{{{SVG_NAMESPACE}}}"


def parse(svg: str) -> ET.Element:
    """Parse the chart as XML; a failure here means the markup is broken."""
    return ET.fromstring(svg)


def classes(element: ET.Element) -> set[str]:
    return set(element.get("class", "").split())


def find_class(root: ET.Element, name: str, tag: str = "*") -> list[ET.Element]:
    return [e for e in root.iter(f"{SVG_TAG}{tag}" if tag != "*" else tag) if name in classes(e)]


def all_text(root: ET.Element) -> list[str]:
    return ["".join(e.itertext()) for e in root.iter(f"{SVG_TAG}title")]


def sample_charts(label: str) -> dict[str, str]:
    """Render every chart type with the given system name among ordinary ones."""
    names = ["gpt4-32k", label, "claude-100k"]
    return {
        "mean": mean_ci_chart([(n, 3.0 + i * 0.4, 2.8 + i * 0.4, 3.3 + i * 0.4) for i, n in enumerate(names)],
                              value_range=(1, 5)),
        "distribution": distribution_chart([(n, [i, 2, 3, 4, 5]) for i, n in enumerate(names)]),
        "grouped": grouped_bar_chart([label, "ROUGE-L"], [(label, [0.5, -0.2]), ("length-instructed", [0.9, None])],
                                     value_range=(-1, 1), reference_lines=[(0.714, label)]),
        "ranks": rank_chart(["Human", label], [(n, [i + 1, 3 - i]) for i, n in enumerate(names)]),
        "scatter": scatter_chart([(n, 0.1 * i, 2.0 + i) for i, n in enumerate(names)], x_label=label,
                                 title=label, note=label),
    }


@pytest.mark.parametrize("kind", ["mean", "distribution", "grouped", "ranks", "scatter"])
def test_charts_are_accessible_well_formed_svg(kind):
    svg = sample_charts("vicuna-7b")[kind]
    root = parse(svg)
    assert root.tag == f"{SVG_TAG}svg"
    assert root.get("role") == "img" and root.get("aria-label")
    title_id, desc_id = root.get("aria-labelledby").split()
    assert root[0].tag == f"{SVG_TAG}title" and root[0].get("id") == title_id and root[0].text
    assert root[1].tag == f"{SVG_TAG}desc" and root[1].get("id") == desc_id
    assert root.get("viewBox").startswith("0 0 ")


@pytest.mark.parametrize("kind", ["mean", "distribution", "grouped", "ranks", "scatter"])
def test_hostile_names_are_escaped(kind):
    svg = sample_charts(HOSTILE)[kind]
    assert "<script" not in svg.lower()
    root = parse(svg)
    assert not list(root.iter(f"{SVG_TAG}script"))
    # The name survives as text (in a tooltip), so the page still shows what was imported.
    assert any(HOSTILE in text for text in all_text(root)) or HOSTILE in root.get("aria-label", "")


@pytest.mark.parametrize("kind", ["mean", "distribution", "grouped", "ranks", "scatter"])
def test_charts_reference_nothing_external_and_run_no_script(kind):
    svg = sample_charts('x" onload="alert(1)')[kind]
    assert re.findall(r"https?://[^\s\"']*", svg) == [SVG_NAMESPACE]
    root = parse(svg)
    for element in root.iter():
        assert not any(name.startswith("on") or name.endswith("href") for name in element.attrib), element.attrib
    assert "javascript:" not in svg and "<foreignObject" not in svg and "@import" not in svg


@settings(max_examples=60, deadline=None)
@given(label=st.text(min_size=1, max_size=60))
def test_any_unicode_name_still_parses(label):
    for svg in sample_charts(label).values():
        parse(svg)


def test_charts_are_deterministic_and_ids_are_unique_per_content():
    first, second = sample_charts("a"), sample_charts("a")
    assert first == second
    other = sample_charts("b")
    assert parse(first["mean"]).get("id") != parse(other["mean"]).get("id")
    explicit = mean_ci_chart([("a", 1.0, None, None)], identifier='tau chart"1')
    assert parse(explicit).get("id") == "tau-chart-1"


def test_mean_bars_are_proportional_ordered_and_carry_intervals():
    bars = [("a", 4.0, 3.5, 4.5), ("b", 2.0, 1.5, 2.5), ("c", None, None, None), ("d", 3.0, None, None)]
    root = parse(mean_ci_chart(bars, value_range=(0, 5)))
    rects = find_class(root, "chart-bar", "rect")
    assert len(rects) == 3  # the missing mean draws no bar
    x0 = float(rects[0].get("x"))
    widths = [float(r.get("width")) for r in rects]
    assert widths[0] / widths[1] == pytest.approx(2.0, rel=0.02)
    assert widths[2] / widths[1] == pytest.approx(1.5, rel=0.02)
    assert all(float(r.get("x")) == x0 for r in rects)
    ys = [float(r.get("y")) for r in rects]
    assert ys == sorted(ys)
    error_lines = find_class(root, "chart-errorbar", "line")
    assert len(error_lines) == 6  # a span and two caps for each bar with an interval
    span = error_lines[0]
    assert float(span.get("x1")) < x0 + widths[0] < float(span.get("x2"))
    assert any("".join(t.itertext()) == "n/a" for t in find_class(root, "chart-missing"))


def test_distribution_segments_fill_each_row():
    rows = [("a", [1, 0, 2, 3, 4]), ("b", [0, 0, 0, 0, 5]), ("empty", [0, 0, 0, 0, 0])]
    root = parse(distribution_chart(rows))
    segments = find_class(root, "chart-segment", "rect")
    assert len(segments) == 4 + 1
    row_a = segments[:4]
    full = sum(float(s.get("width")) for s in row_a)
    assert float(segments[4].get("width")) == pytest.approx(full, abs=0.05)
    assert float(row_a[1].get("width")) / float(row_a[0].get("width")) == pytest.approx(2.0, rel=0.02)
    score_classes = [c for s in row_a for c in classes(s) if c.startswith("chart-score-")]
    assert score_classes == ["chart-score-1", "chart-score-3", "chart-score-4", "chart-score-5"]
    with pytest.raises(ValueError):
        distribution_chart([("a", [1, 2, 3])])


def test_grouped_bars_hang_below_zero_for_negative_values():
    root = parse(grouped_bar_chart(["F1", "ROUGE-L", "judge"], [("plain", [0.5, -0.5, None]), ("LIE", [0.8, 1.0, 0.2])],
                                   value_range=(-1, 1)))
    zero = float(find_class(root, "chart-zero", "line")[0].get("y1"))
    bars = find_class(root, "chart-bar", "rect")
    assert len(bars) == 5
    plain_positive, plain_negative = [b for b in bars if "chart-series-0" in classes(b)]
    assert float(plain_positive.get("y")) + float(plain_positive.get("height")) == pytest.approx(zero, abs=0.02)
    assert float(plain_negative.get("y")) == pytest.approx(zero, abs=0.02)
    assert float(plain_positive.get("height")) == pytest.approx(float(plain_negative.get("height")), abs=0.02)
    xs = [float(b.get("x")) for b in bars]
    assert xs == sorted(xs)
    with pytest.raises(ValueError):
        grouped_bar_chart(["a", "b"], [("s", [1.0])])


def test_values_outside_the_given_range_stay_inside_the_plot():
    root = parse(grouped_bar_chart(["a"], [("s", [2.5])], value_range=(-1, 1)))
    (bar,) = find_class(root, "chart-bar", "rect")
    top_tick = min(float(g.get("y1")) for g in find_class(root, "chart-grid", "line"))
    assert float(bar.get("y")) == pytest.approx(top_tick, abs=0.02)
    root = parse(mean_ci_chart([("a", 7.0, 6.0, 8.0)], value_range=(1, 5)))
    (bar,) = find_class(root, "chart-bar", "rect")
    right_tick = max(float(g.get("x1")) for g in find_class(root, "chart-grid", "line"))
    assert float(bar.get("x")) + float(bar.get("width")) == pytest.approx(right_tick, abs=0.02)


def test_rank_points_follow_ranks_and_ties_sit_between():
    root = parse(rank_chart(["Human", "F1"], [("a", [1, 1.5]), ("b", [2, 1.5]), ("c", [3, None])]))
    points = find_class(root, "chart-rank-point", "circle")
    assert len(points) == 5
    by_tooltip = {"".join(p.itertext()): float(p.get("cy")) for p in points}
    assert by_tooltip["a — Human: rank 1"] < by_tooltip["b — Human: rank 2"] < by_tooltip["c — Human: rank 3"]
    assert by_tooltip["a — F1: rank 1.5"] == pytest.approx((by_tooltip["a — Human: rank 1"] + by_tooltip["b — Human: rank 2"]) / 2)
    assert len(find_class(root, "chart-rank-line", "line")) == 2  # c has no F1 rank, so no segment


def test_scatter_places_points_by_value_and_skips_missing():
    root = parse(scatter_chart([("a", 0.1, 2.0), ("b", 0.5, 4.0), ("c", None, 3.0)], x_label="ROUGE-L"))
    points = find_class(root, "chart-point", "circle")
    assert len(points) == 2
    a, b = points
    assert float(a.get("cx")) < float(b.get("cx"))
    assert float(a.get("cy")) > float(b.get("cy"))  # higher human score is drawn higher up


def test_empty_inputs_render_a_placeholder():
    for svg in (mean_ci_chart([]), distribution_chart([]), grouped_bar_chart([], []), rank_chart([], []),
                scatter_chart([("a", None, None)], x_label="x")):
        root = parse(svg)
        assert any("No data" in "".join(t.itertext()) for t in root.iter(f"{SVG_TAG}text"))
