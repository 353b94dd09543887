"""Chart geometry a reader depends on: labels of tied values never overlap, value labels stay off bars and
whiskers, numbers on coloured cells keep WCAG AA contrast, and a long title wraps inside the chart."""
from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.charts import (
    distribution_chart,
    grouped_bar_chart,
    mean_ci_chart,
    rank_chart,
    scatter_chart,
)
from app.core.charts.heatmap import depth_heatmap
from app.core.charts.placement import Box, line_box, text_box
from app.core.charts.svg import (
    FONT_SIZE,
    SVG_NAMESPACE,
    TITLE_CHAR_WIDTH,
    contrast_ratio,
)

TAG = f"{{{SVG_NAMESPACE}}}"
NAMES = ["gpt4-32k", "claude-100k", "turbo-16k-0613", "chatglm2-6b-8k", "longchat-13b-16k", "llama2-13b-chat-4k",
         "vicuna-7b-2k"]


def elements(svg: str, css_class: str, tag: str) -> list[tuple[ET.Element, float]]:
    """Elements of a class with the vertical offset of the groups they sit in (the heading's shift)."""
    found = []

    def walk(element: ET.Element, dy: float) -> None:
        match = re.match(r"translate\(0 ([-\d.]+)\)", element.get("transform", ""))
        dy += float(match.group(1)) if match else 0.0
        if element.tag == TAG + tag and css_class in element.get("class", "").split():
            found.append((element, dy))
        for child in element:
            walk(child, dy)

    walk(ET.fromstring(svg), 0.0)
    return found


def label_boxes(svg: str, css_class: str) -> list[Box]:
    boxes = []
    for element, dy in elements(svg, css_class, "text"):
        content = "".join(element.itertext()) if not len(element) else element.text or ""
        size = float(element.get("font-size", FONT_SIZE))
        boxes.append(text_box(float(element.get("x")), float(element.get("y")) + dy, content,
                              element.get("text-anchor", "start"), size))
    return boxes


def view_box(svg: str) -> Box:
    _, _, width, height = map(float, ET.fromstring(svg).get("viewBox").split())
    return Box(0, 0, width, height)


def assert_apart(boxes: list[Box]) -> None:
    for first, second in itertools.combinations(boxes, 2):
        assert not first.intersects(second), (first, second)


# --- labels of tied values ---------------------------------------------------------------------------

@pytest.mark.parametrize("ranks", [
    [[1, 1], [2, 2], [3, 3], [4, 4], [5, 5], [6, 6], [7, 7]],  # no tie
    [[4, 1.5], [4, 1.5], [4, 3], [4, 4.5], [4, 4.5], [4, 6.5], [4, 6.5]],  # everyone tied under humans
    [[1.5, 2], [1.5, 2], [3, 2], [5, 5], [5, 5], [5, 5], [7, 7]],
    [[1, None], [2.5, None], [2.5, 1.5], [4, 1.5]],  # missing ranks move a label into the plot
])
def test_tied_systems_labels_never_overlap_in_the_rank_chart(ranks):
    systems = list(zip(NAMES, ranks))
    svg = rank_chart(["Human", "F1"], systems)
    boxes = label_boxes(svg, "chart-label")
    assert len(boxes) == 2 * len(systems)
    assert_apart(boxes)
    assert all(box.inside(view_box(svg)) for box in boxes)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from([1, 1.5, 2, 2.5, 3, 3.5, 4]), min_size=3, max_size=3), min_size=2,
                max_size=7))
def test_any_ties_in_the_rank_chart_leave_every_label_apart(ranks):
    svg = rank_chart(["Human", "F1", "ROUGE-L"], list(zip(NAMES, ranks)))
    assert_apart(label_boxes(svg, "chart-label"))


@pytest.mark.parametrize("points", [
    [(name, 0.25, 3.0) for name in NAMES],  # seven systems at one point
    [("a", 0.1, 2.0), ("b", 0.1, 2.0), ("c", 0.1001, 2.01), ("d", 0.9, 4.0), ("e", 0.9, 4.0)],
    [(name, 0.5 + 0.001 * i, 3.0 + 0.002 * i) for i, name in enumerate(NAMES)],  # a tight cluster
])
def test_tied_points_labels_never_overlap_in_the_scatter(points):
    svg = scatter_chart(points, x_label="ROUGE-L", width=520, height=360)
    boxes = label_boxes(svg, "chart-point-label")
    assert len(boxes) == len(points)
    assert_apart(boxes)
    circles = [Box(float(c.get("cx")) - 5, float(c.get("cy")) - 5, float(c.get("cx")) + 5, float(c.get("cy")) + 5)
               for c, _ in elements(svg, "chart-point", "circle")]
    assert not [(box, circle) for box in boxes for circle in circles if box.intersects(circle)]


# --- value labels off bars and whiskers --------------------------------------------------------------

def shapes(svg: str) -> list[Box]:
    """Every bar and whisker of a bar chart, as boxes."""
    boxes = [Box(float(r.get("x")), float(r.get("y")) + dy, float(r.get("x")) + float(r.get("width")),
                 float(r.get("y")) + dy + float(r.get("height"))) for r, dy in elements(svg, "chart-bar", "rect")]
    boxes += [line_box(float(ln.get("x1")), float(ln.get("y1")) + dy, float(ln.get("x2")), float(ln.get("y2")) + dy,
                       float(ln.get("stroke-width"))) for ln, dy in elements(svg, "chart-errorbar", "line")]
    return boxes


@pytest.mark.parametrize("bars", [
    [("overall", -0.125, -0.4, 0.2), ("a", -0.5, -0.7, -0.3), ("b", 0.4, 0.1, 0.8), ("c", 0.9, 0.8, 1.0)],
    [("a", -1.0, -1.0, -0.9), ("b", 0.05, -0.02, 0.07), ("c", 0.0, None, None)],
])
def test_alpha_value_labels_sit_clear_of_bars_and_whiskers(bars):
    svg = mean_ci_chart(bars, value_range=(-1.0, 1.0))
    values, drawn = label_boxes(svg, "chart-value"), shapes(svg)
    assert len(values) == len(bars)
    assert not [(v, s) for v in values for s in drawn if v.intersects(s)]
    assert all(box.inside(view_box(svg)) for box in values)


def test_mean_value_labels_sit_clear_of_bars_and_whiskers_on_a_1_to_5_scale():
    bars = [(name, 1.2 + 0.55 * i, 1.0 + 0.5 * i, 1.6 + 0.6 * i) for i, name in enumerate(NAMES)]
    svg = mean_ci_chart(bars, value_range=(1.0, 5.0))
    values, drawn = label_boxes(svg, "chart-value"), shapes(svg)
    assert not [(v, s) for v in values for s in drawn if v.intersects(s)]


@pytest.mark.parametrize("groups", [3, 13])
def test_grouped_value_labels_sit_clear_of_every_bar_and_of_each_other(groups):
    names = [f"metric-{g}" for g in range(groups)]
    series = [("plain", [(-1) ** g * (0.1 + 0.07 * g) % 1.0 - 0.5 for g in range(groups)]),
              ("length-instructed", [1.0 if g % 2 else -1.0 for g in range(groups)])]
    svg = grouped_bar_chart(names, series, value_range=(-1, 1), reference_lines=[(0.714, "p < 0.05 needs τ ≥ 0.714")])
    values, drawn = label_boxes(svg, "chart-value"), shapes(svg)
    assert len(values) == 2 * groups
    assert not [(v, s) for v in values for s in drawn if v.intersects(s)]
    assert_apart(values + label_boxes(svg, "chart-label") + label_boxes(svg, "chart-legend-label"))
    assert all(box.inside(view_box(svg)) for box in values)


# --- text colour on coloured cells -------------------------------------------------------------------

def test_every_heatmap_number_has_wcag_aa_contrast_with_its_cell():
    levels = ["16k", "32k", "64k", "128k", "256k"]
    values = [v * 2.5 for v in range(41)] + [None]
    rows = [values[i:i + 5] + [None] * (5 - len(values[i:i + 5])) for i in range(0, len(values), 5)]
    svg = depth_heatmap([f"{i}" for i in range(len(rows))], levels, rows, [[1] * 5 for _ in rows], title="t")
    cells = [rect.get("fill") for rect, _ in elements(svg, "chart-cell", "rect")]
    labels = [text.get("fill") for text, _ in elements(svg, "chart-cell-label", "text")]
    assert len(cells) == len(labels) == 5 * len(rows)
    ratios = [contrast_ratio(cell, label) for cell, label in zip(cells, labels)]
    assert min(ratios) >= 4.5, sorted(zip(ratios, cells))[:3]


def test_numbers_on_score_segments_and_rank_points_keep_wcag_aa_contrast():
    svg = distribution_chart([("a", [3, 3, 3, 3, 3])])
    fills = [rect.get("fill") for rect, _ in elements(svg, "chart-segment", "rect")]
    texts = [text.get("fill") for text, _ in elements(svg, "chart-segment-label", "text")]
    assert len(fills) == len(texts) == 5
    assert min(contrast_ratio(a, b) for a, b in zip(fills, texts)) >= 4.5
    svg = rank_chart(["Human"], [(name, [i + 1]) for i, name in enumerate(NAMES + ["x"])])
    points = [c.get("fill") for c, _ in elements(svg, "chart-rank-point", "circle")]
    numbers = [t.get("fill") for t, _ in elements(svg, "chart-rank-text", "text")]
    assert min(contrast_ratio(a, b) for a, b in zip(points, numbers)) >= 4.5


# --- titles ------------------------------------------------------------------------------------------

def test_a_long_title_and_note_wrap_inside_the_chart_and_push_the_plot_down():
    title = "Keyword F1 (LV-Eval) with a deliberately long name against the mean human score of every annotator"
    svg = scatter_chart([("a", 0.1, 2.0), ("b", 0.5, 4.0)], x_label="x", title=title, note="τ = 1.000, " * 8,
                        width=380, height=300)
    width = view_box(svg).x1
    (heading, _), = elements(svg, "chart-title", "text")
    lines = [span.text for span in heading]
    assert len(lines) > 1 and " ".join(lines) == title
    assert all(8 + len(line) * TITLE_CHAR_WIDTH <= width - 8 for line in lines)
    (note, _), = elements(svg, "chart-note", "text")
    assert len(note) > 1
    # The plot starts below the last note line.
    last_note_y = float(note.get("y")) + 16 * (len(note) - 1)
    top_grid = min(float(ln.get("y1")) + dy for ln, dy in elements(svg, "chart-axis-line", "line"))
    assert top_grid > last_note_y + 8


# --- issue 40, item 9: tied systems' dots, whole names on the scatter --------------------------------

@pytest.mark.parametrize("ranks", [
    [[1.5, 2], [1.5, 2], [3, 2], [5, 5], [5, 5], [5, 5], [7, 7]],
    [[4, 4]] * 7,  # everyone tied everywhere
])
def test_tied_systems_dots_sit_side_by_side_in_the_rank_chart(ranks):
    """Tied systems stacked on one dot: a reader saw one system where there were two or three."""
    svg = rank_chart(["Human", "F1"], list(zip(NAMES, ranks)))
    circles = [(float(c.get("cx")), float(c.get("cy")) + dy, float(c.get("r")))
               for c, dy in elements(svg, "chart-rank-point", "circle")]
    assert len(circles) == 2 * len(ranks)
    for (x1, y1, r1), (x2, y2, r2) in itertools.combinations(circles, 2):
        assert (x1 - x2) ** 2 + (y1 - y2) ** 2 >= (r1 + r2) ** 2, ((x1, y1), (x2, y2))  # no dot covers another
    frame = view_box(svg)
    assert all(frame.x0 <= x - r and x + r <= frame.x1 for x, _, r in circles)
    boxes = label_boxes(svg, "chart-label")
    assert_apart(boxes)
    assert all(box.inside(frame) for box in boxes)
    for (x, y, r), box in itertools.product(circles, boxes):
        assert not box.intersects(Box(x - r, y - r, x + r, y + r)), (x, y, box)


@pytest.mark.parametrize("width", [420, 520])
def test_scatter_labels_are_whole_names_inside_the_chart(width):
    """"llama2-13b-chat…": a name was cut at 16 characters although the plot had room."""
    names = ["gpt4-32k", "claude-100k", "turbo-16k-0613", "chatglm2-6b-8k", "longchat-13b-16k-flash",
             "llama2-13b-chat-4k", "vicuna-7b-2k"]
    points = [(name, 10 + 3 * i, 1.5 + 0.4 * i) for i, name in enumerate(names)]
    svg = scatter_chart(points, x_label="ROUGE-L", width=width, height=320)
    shown = [e.text for e, _ in elements(svg, "chart-point-label", "text")]  # the tooltip aside
    assert sorted(shown) == sorted(names)
    boxes = label_boxes(svg, "chart-point-label")
    assert_apart(boxes)
    assert all(box.inside(view_box(svg)) for box in boxes)
