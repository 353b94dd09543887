"""Scatter chart of a metric against the mean human score, one point per system."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.charts.placement import Box, around, place_labels, point_box, tie_offsets
from app.core.charts.svg import (
    GRID,
    INK,
    SERIES_COLOURS,
    LinearScale,
    chart_id,
    empty_chart,
    esc,
    is_number,
    label_value,
    line,
    nice_ticks,
    num,
    padded_domain,
    svg_document,
    text,
    truncate,
)

MAX_POINT_LABEL_CHARS = 40  # a system's whole name ("llama2-13b-chat-4k" was cut at 16); placement keeps it in
POINT_RADIUS = 5
LABEL_STEP = 15  # a label's height and a little air
LEADER = "#888888"


def scatter_chart(
    points: Sequence[tuple[str, float | None, float | None]],
    x_label: str,
    y_label: str = "Mean human score",
    title: str = "Metric against human judgement",
    note: str = "",
    width: int = 600,
    height: int = 380,
    identifier: str | None = None,
) -> str:
    """Plot (label, x, y) points with labelled axes; points missing a coordinate are skipped."""
    kind = "scatter"
    ident = chart_id(kind, title, (points, x_label, y_label, note), identifier)
    plotted = [(label, float(px), float(py)) for label, px, py in points if is_number(px) and is_number(py)]
    if not plotted:
        return empty_chart(title, ident, kind, width)
    x_low, x_high = _padded([px for _, px, _ in plotted])
    y_low, y_high = _padded([py for _, _, py in plotted])
    left, right, top, bottom = 58, width - 24, 48, height - 48
    x = LinearScale(x_low, x_high, left, right)
    y = LinearScale(y_low, y_high, bottom, top)

    body = ['<g class="chart-axis">']
    for tick in nice_ticks(x_low, x_high):
        body.append(line(x(tick), top, x(tick), bottom, "chart-grid", GRID))
        body.append(text(x(tick), bottom + 12, _tick(tick), "chart-tick", "middle"))
    for tick in nice_ticks(y_low, y_high):
        body.append(line(left, y(tick), right, y(tick), "chart-grid", GRID))
        body.append(text(left - 6, y(tick), _tick(tick), "chart-tick", "end"))
    body.append(line(left, bottom, right, bottom, "chart-axis-line", INK))
    body.append(line(left, top, left, bottom, "chart-axis-line", INK))
    body.append(text((left + right) / 2, height - 12, x_label, "chart-axis-label", "middle"))
    body.append(
        text(14, (top + bottom) / 2, y_label, "chart-axis-label", "middle",
             extra=f' transform="rotate(-90 14 {num((top + bottom) / 2)})"')
    )
    body.append("</g>")
    spots = _point_labels(plotted, x, y, Box(left + 2, top, width, bottom))
    for index, (label, px, py) in enumerate(plotted):
        tooltip = f"{label}: {x_label} {label_value(px, 3)}, {y_label} {label_value(py, 3)}"
        body.append(
            f'<circle cx="{num(x(px))}" cy="{num(y(py))}" r="{POINT_RADIUS}" class="chart-point" data-index="{index}" '
            f'fill="{SERIES_COLOURS[0]}" fill-opacity="0.85"><title>{esc(tooltip)}</title></circle>'
        )
    for index, (label, px, py) in enumerate(plotted):
        spot = spots[index]
        if abs(spot.y - y(py)) > 0.5:  # moved off a tie or a neighbour: a leader line says whose label it is
            edge = POINT_RADIUS if spot.anchor == "start" else -POINT_RADIUS
            body.append(line(x(px) + edge, y(py), spot.x - edge / 2, spot.y, "chart-leader", LEADER))
        body.append(text(spot.x, spot.y, truncate(label, MAX_POINT_LABEL_CHARS), "chart-point-label", spot.anchor,
                         tooltip=label))
    description = "; ".join(f"{label}: {px:.3g}, {py:.3g}" for label, px, py in plotted)
    return svg_document(width, height, title, description, body, ident, kind, note=note)


def _padded(values: list[float]) -> tuple[float, float]:
    """Add 8% headroom so points do not sit on the axes."""
    low, high = padded_domain(values, include_zero=False)
    margin = (high - low) * 0.08
    return low - margin, high + margin


def _tick(value: float) -> str:
    return f"{value:.3g}"


def _point_labels(plotted, x, y, bounds: Box) -> list:
    """Place every point's label beside it, clear of the other labels and points, inside the plot.

    Labels are placed from the top left to the bottom right (then by name); a label prefers the side
    facing the middle of the plot, so those near the right edge read leftwards.
    """
    middle = (bounds.x0 + bounds.x1) / 2
    obstacles = [point_box(x(px), y(py), POINT_RADIUS) for _, px, py in plotted]
    order = sorted(range(len(plotted)), key=lambda i: (y(plotted[i][2]), x(plotted[i][1]), plotted[i][0], i))
    offsets = tie_offsets([(x(plotted[i][1]), y(plotted[i][2])) for i in order], LABEL_STEP)
    requests = []
    for i, dy in zip(order, offsets):
        label, px, py = plotted[i]
        sides = ("start", "end") if x(px) <= middle else ("end", "start")
        requests.append((truncate(label, MAX_POINT_LABEL_CHARS),
                         around(x(px), y(py) + dy, POINT_RADIUS + 3, LABEL_STEP, sides)))
    placed = place_labels(requests, obstacles, bounds)
    spots = [None] * len(plotted)
    for i, spot in zip(order, placed):
        spots[i] = spot
    return spots
