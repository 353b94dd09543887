"""Score against LV-Eval's length levels: one line per system, bootstrap whiskers, context ceilings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from app.core.charts.svg import (
    CONTENT_WIDTH,
    GRID,
    INK,
    SERIES_COLOURS,
    LinearScale,
    chart_id,
    empty_chart,
    esc,
    is_number,
    label_value,
    legend,
    line,
    nice_ticks,
    num,
    svg_document,
    text,
    text_width,
    truncate,
)

MAX_LEGEND_CHARS = 22


@dataclass(frozen=True)
class Curve:
    """One system's points: per level a score (or None), its interval and, where known, its ceiling."""

    label: str
    scores: Sequence[float | None]
    low: Sequence[float | None] = ()
    high: Sequence[float | None] = ()
    ceiling: Sequence[float | None] = ()
    flagged: Sequence[bool] = field(default_factory=tuple)


def _legend_rows(items: list[tuple[str, str, str]], width: float) -> list[list[tuple[str, str, str]]]:
    """Wrap legend entries onto rows no wider than the plot."""
    rows: list[list[tuple[str, str, str]]] = [[]]
    used = 0.0
    for item in items:
        size = 16 + text_width(item[0]) + 14
        if rows[-1] and used + size > width:
            rows.append([])
            used = 0.0
        rows[-1].append(item)
        used += size
    return rows


def _at(values: Sequence, index: int):
    return values[index] if index < len(values) else None


def level_curves(levels: Sequence[str], curves: Sequence[Curve], title: str, note: str = "",
                 y_label: str = "Score", width: int = CONTENT_WIDTH, height: int = 400,
                 identifier: str | None = None) -> str:
    """Plot each curve over the levels (evenly spaced: each level doubles the length)."""
    kind = "curves"
    ident = chart_id(kind, title, (tuple(levels), tuple(curves), note), identifier)
    plotted = [c for c in curves if any(is_number(s) for s in c.scores)]
    if not levels or not plotted:
        return empty_chart(title, ident, kind, width)
    values = [v for c in plotted for seq in (c.scores, c.high, c.ceiling) for v in seq if is_number(v)]
    top_value = max(values + [1.0])
    ticks = nice_ticks(0.0, top_value)
    if len(ticks) > 1 and ticks[-1] < top_value:
        ticks.append(round(ticks[-1] + ticks[1] - ticks[0], 10))
    y_high = max(ticks[-1], top_value) if ticks else top_value
    left, right, top, bottom = 52, width - 20, 52, height - 64
    inner_left, inner_right = left + 24, right - 24
    step = (inner_right - inner_left) / max(len(levels) - 1, 1)
    x_of = [inner_left + step * i if len(levels) > 1 else (left + right) / 2 for i in range(len(levels))]
    y = LinearScale(0.0, y_high, bottom, top)

    body = ['<g class="chart-axis">']
    for tick in ticks:
        body.append(line(left, y(tick), right, y(tick), "chart-grid", GRID))
        body.append(text(left - 6, y(tick), f"{tick:g}", "chart-tick", "end"))
    for index, level in enumerate(levels):
        body.append(text(x_of[index], bottom + 14, level, "chart-tick", "middle"))
    body.append(line(left, bottom, right, bottom, "chart-axis-line", INK))
    body.append(line(left, top, left, bottom, "chart-axis-line", INK))
    body.append(text((left + right) / 2, bottom + 32, "Length level (words)", "chart-axis-label", "middle"))
    body.append(text(14, (top + bottom) / 2, y_label, "chart-axis-label", "middle",
                     extra=f' transform="rotate(-90 14 {num((top + bottom) / 2)})"'))
    body.append("</g>")

    legend_items = []
    for series, curve in enumerate(plotted):
        colour = SERIES_COLOURS[series % len(SERIES_COLOURS)]
        css = f"chart-series chart-series-{series}"
        body.append(f'<g class="{css}" data-series="{esc(curve.label)}">')
        ceiling = [(x_of[i], y.clamped(v)) for i, v in enumerate(curve.ceiling[: len(levels)]) if is_number(v)]
        if len(ceiling) > 1:
            points = " ".join(f"{num(px)},{num(py)}" for px, py in ceiling)
            body.append(f'<polyline points="{points}" class="chart-ceiling" fill="none" stroke="{colour}" '
                        f'stroke-width="1.5" stroke-dasharray="6 4"><title>{esc(curve.label)}: context ceiling'
                        f'</title></polyline>')
        for i, v in enumerate(curve.ceiling[: len(levels)]):
            if is_number(v) and len(ceiling) == 1:
                body.append(line(x_of[i] - 10, y.clamped(v), x_of[i] + 10, y.clamped(v), "chart-ceiling", colour,
                                 1.5, "6 4"))
        points = [(x_of[i], y.clamped(v)) for i, v in enumerate(curve.scores[: len(levels)]) if is_number(v)]
        if len(points) > 1:
            body.append(f'<polyline points="{" ".join(f"{num(px)},{num(py)}" for px, py in points)}" '
                        f'class="chart-line" fill="none" stroke="{colour}" stroke-width="2"/>')
        for i, v in enumerate(curve.scores[: len(levels)]):
            if not is_number(v):
                continue
            low, high = _at(curve.low, i), _at(curve.high, i)
            if is_number(low) and is_number(high):
                body.append(line(x_of[i], y.clamped(low), x_of[i], y.clamped(high), "chart-interval", colour, 1))
                for bound in (low, high):
                    body.append(line(x_of[i] - 4, y.clamped(bound), x_of[i] + 4, y.clamped(bound),
                                     "chart-interval", colour, 1))
            flagged = bool(_at(curve.flagged, i))
            tip = f"{curve.label} at {levels[i]}: {label_value(v)}"
            if is_number(low) and is_number(high):
                tip += f" (95% interval {label_value(low)}–{label_value(high)})"
            ceiling_value = _at(curve.ceiling, i)
            if is_number(ceiling_value):
                tip += f"; ceiling {label_value(ceiling_value)}"
            if flagged:
                tip += "; far above its context ceiling: possible knowledge leakage"
            body.append(f'<circle cx="{num(x_of[i])}" cy="{num(y.clamped(v))}" r="{4 if not flagged else 6}" '
                        f'class="chart-point{" chart-flagged" if flagged else ""}" data-level="{esc(levels[i])}" '
                        f'fill="{colour if not flagged else "#ffffff"}" stroke="{colour}" stroke-width="2">'
                        f'<title>{esc(tip)}</title></circle>')
        body.append("</g>")
        legend_items.append((truncate(curve.label, MAX_LEGEND_CHARS), f"chart-legend-{series}", colour))
    legend_rows = _legend_rows(legend_items, right - left)
    for row_index, row in enumerate(legend_rows):
        body.extend(legend(row, left, bottom + 52 + 18 * row_index))
    height += 18 * (len(legend_rows) - 1)
    if any(any(is_number(v) for v in c.ceiling) for c in plotted):
        body.append(text(left, bottom + 52 + 18 * len(legend_rows), "Dashed: context ceiling. Open ring: far above it "
                         "(possible leakage).", "chart-note"))
        height += 18
    description = "; ".join(
        f"{c.label}: " + ", ".join(f"{lv} {label_value(_at(c.scores, i))}" for i, lv in enumerate(levels))
        for c in plotted)
    return svg_document(width, height, title, description, body, ident, kind, note=note)
