"""Bar charts: mean with interval, stacked 1-5 distribution, grouped bars with negative values."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.charts.placement import GLYPH_WIDTH
from app.core.charts.svg import (
    CONTENT_WIDTH,
    FONT_SIZE,
    GRID,
    INK,
    SCORE_COLOURS,
    SERIES_COLOURS,
    LinearScale,
    chart_id,
    empty_chart,
    is_number,
    label_value,
    legend,
    line,
    nice_ticks,
    num,
    padded_domain,
    rect,
    svg_document,
    text,
    text_colour_on,
    text_width,
    truncate,
)
from app.core.rubric import SCALE

MeanInterval = tuple[str, float | None, float | None, float | None]
"""(label, mean, interval low, interval high); missing values are None."""

ROW_HEIGHT = 26
BAR_THICKNESS = 16
TOP = 34
MAX_LABEL_CHARS = 28
VALUE_ROOM = 16  # a value label's line above (or below) the plot area
MIN_VALUE_FONT = 7.0  # a value that would be smaller is left to the tooltip


def _label_gutter(labels: Sequence[str]) -> float:
    longest = max((text_width(truncate(label, MAX_LABEL_CHARS)) for label in labels), default=0.0)
    return longest + 16


def _x_axis(scale: LinearScale, ticks: Sequence[float], top: float, bottom: float, digits: int) -> list[str]:
    parts = ['<g class="chart-axis chart-axis-x">']
    for tick in ticks:
        x = scale(tick)
        parts.append(line(x, top, x, bottom, "chart-grid", GRID))
        parts.append(text(x, bottom + 12, f"{tick:.{digits}f}", "chart-tick", "middle"))
    parts.append("</g>")
    return parts


def mean_ci_chart(
    bars: Sequence[MeanInterval],
    title: str = "Mean human score with 95% interval",
    value_range: tuple[float, float] | None = None,
    width: int = CONTENT_WIDTH,
    identifier: str | None = None,
) -> str:
    """Draw one horizontal bar per row with an error bar from low to high."""
    kind = "mean-ci"
    ident = chart_id(kind, title, bars, identifier)
    if not bars:
        return empty_chart(title, ident, kind, width)
    low, high = value_range or padded_domain(
        [v for _, mean, lo, hi in bars for v in (mean, lo, hi) if is_number(v)], include_zero=True
    )
    gutter = _label_gutter([label for label, *_ in bars])
    plot_right = width - 56  # room for the value label after the longest bar
    scale = LinearScale(low, high, gutter, plot_right)
    bottom = TOP + ROW_HEIGHT * len(bars)
    height = bottom + 28
    body = _x_axis(scale, nice_ticks(low, high), TOP - 4, bottom, 1)
    for position, (label, mean, ci_low, ci_high) in enumerate(bars):
        centre = TOP + ROW_HEIGHT * position + ROW_HEIGHT / 2
        interval = f" (95% CI {label_value(ci_low)}–{label_value(ci_high)})" if is_number(ci_low) else ""
        tooltip = f"{label}: {label_value(mean)}{interval}"
        body.append(f'<g class="chart-row" data-index="{position}">')
        body.append(text(gutter - 8, centre, truncate(label, MAX_LABEL_CHARS), "chart-label", "end", tooltip=label))
        if not is_number(mean):
            body.append(text(gutter + 4, centre, "n/a", "chart-missing"))
            body.append("</g>")
            continue
        # Bars grow from zero, or from the nearest domain edge when zero is outside it (e.g. a 1-5 scale).
        start = scale(min(max(0.0, low), high))
        body.append(
            rect(start, centre - BAR_THICKNESS / 2, scale.clamped(mean) - start, BAR_THICKNESS, "chart-bar",
                 SERIES_COLOURS[0], tooltip)
        )
        # The value goes right of everything drawn in the row (the bar may hang left of zero, and the
        # whisker may end inside the bar), so it never sits on the bar or the whisker.
        end = max(start, scale.clamped(mean))
        if is_number(ci_low) and is_number(ci_high):
            x1, x2 = scale.clamped(ci_low), scale.clamped(ci_high)
            body.append(line(x1, centre, x2, centre, "chart-errorbar", INK, 1.5))
            body.append(line(x1, centre - 5, x1, centre + 5, "chart-errorbar", INK, 1.5))
            body.append(line(x2, centre - 5, x2, centre + 5, "chart-errorbar", INK, 1.5))
            end = max(end, x1, x2)
        body.append(text(end + 6, centre, label_value(mean), "chart-value"))
        body.append("</g>")
    description = "; ".join(
        f"{label} {label_value(mean)} [{label_value(lo)}, {label_value(hi)}]" for label, mean, lo, hi in bars
    )
    return svg_document(width, height, title, description, body, ident, kind)


def distribution_chart(
    rows: Sequence[tuple[str, Sequence[int]]],
    title: str = "Distribution of scores 1-5",
    width: int = CONTENT_WIDTH,
    identifier: str | None = None,
) -> str:
    """Draw one 100% stacked bar per row from the counts of scores 1..5."""
    kind = "distribution"
    ident = chart_id(kind, title, rows, identifier)
    if not rows:
        return empty_chart(title, ident, kind, width)
    gutter = _label_gutter([label for label, _ in rows])
    top = TOP + 18  # leave a line for the legend
    plot_right = width - 60
    scale = LinearScale(0.0, 1.0, gutter, plot_right)
    bottom = top + ROW_HEIGHT * len(rows)
    height = bottom + 28
    body = legend(
        [(f"score {score}", f"chart-score-{score}", SCORE_COLOURS[score - 1]) for score in SCALE], gutter, 34
    )
    body += _x_axis(scale, [0.0, 0.25, 0.5, 0.75, 1.0], top - 4, bottom, 2)
    for position, (label, counts) in enumerate(rows):
        counts = [int(c) for c in counts]
        if len(counts) != 5:
            raise ValueError(f"expected 5 counts (scores 1-5) for {label!r}, got {len(counts)}")
        total = sum(counts)
        centre = top + ROW_HEIGHT * position + ROW_HEIGHT / 2
        body.append(f'<g class="chart-row" data-index="{position}">')
        body.append(text(gutter - 8, centre, truncate(label, MAX_LABEL_CHARS), "chart-label", "end", tooltip=label))
        cumulative = 0
        for score, count in enumerate(counts, start=1):
            if total == 0 or count == 0:
                continue
            x1, x2 = scale(cumulative / total), scale((cumulative + count) / total)
            share = count / total
            tooltip = f"{label}, score {score}: {count} of {total} ({share:.0%})"
            body.append(
                rect(x1, centre - BAR_THICKNESS / 2, x2 - x1, BAR_THICKNESS, f"chart-segment chart-score-{score}",
                     SCORE_COLOURS[score - 1], tooltip)
            )
            if x2 - x1 >= 24:
                body.append(text((x1 + x2) / 2, centre, str(count), "chart-segment-label", "middle",
                                 fill=text_colour_on(SCORE_COLOURS[score - 1])))
            cumulative += count
        body.append(text(plot_right + 6, centre, f"n={total}", "chart-value"))
        body.append("</g>")
    description = "; ".join(
        f"{label}: " + ", ".join(f"{s}→{c}" for s, c in zip(SCALE, counts)) for label, counts in rows
    )
    return svg_document(width, height, title, description, body, ident, kind)


def grouped_bar_chart(
    groups: Sequence[str],
    series: Sequence[tuple[str, Sequence[float | None]]],
    title: str = "Kendall τ with human judgement",
    value_range: tuple[float, float] | None = None,
    reference_lines: Sequence[tuple[float, str]] = (),
    width: int = CONTENT_WIDTH,
    height: int = 320,
    identifier: str | None = None,
) -> str:
    """Draw vertical bars per group (e.g. metric), one per series (e.g. plain, length-instructed).

    Bars grow from zero, so negative values hang below the zero line.
    """
    kind = "grouped-bars"
    ident = chart_id(kind, title, (groups, series, reference_lines), identifier)
    if not groups or not series:
        return empty_chart(title, ident, kind, width)
    for name, values in series:
        if len(values) != len(groups):
            raise ValueError(f"series {name!r} has {len(values)} values for {len(groups)} groups")
    values_all = [v for _, values in series for v in values if is_number(v)]
    low, high = value_range or padded_domain(values_all + [value for value, _ in reference_lines])
    # Room above the plot for the value over a bar at the top of the range, and below it for the value
    # under a bar at the bottom, clear of the group names.
    left, right, top, bottom = 48, width - 12, TOP + 22 + VALUE_ROOM, height - 36 - VALUE_ROOM
    y = LinearScale(low, high, bottom, top)
    shown_references = [(value, label) for value, label in reference_lines if low <= value <= high]
    body = legend([(name, f"chart-series-{i}", SERIES_COLOURS[i % len(SERIES_COLOURS)])
                   for i, (name, _) in enumerate(series)]
                  + [(label, "chart-reference-key", "#888888") for _, label in shown_references], left, 36)
    body.append('<g class="chart-axis chart-axis-y">')
    for tick in nice_ticks(low, high):
        body.append(line(left, y(tick), right, y(tick), "chart-grid", GRID))
        body.append(text(left - 6, y(tick), f"{tick:.2f}", "chart-tick", "end"))
    body.append("</g>")
    zero = y(0.0) if low <= 0 <= high else y(low)
    group_width = (right - left) / len(groups)
    bar_width = min(36.0, group_width * 0.8 / len(series))
    for g, group in enumerate(groups):
        group_left = left + g * group_width + (group_width - bar_width * len(series)) / 2
        body.append(f'<g class="chart-group" data-group="{g}">')
        for s, (name, values) in enumerate(series):
            value = values[g]
            x = group_left + s * bar_width
            colour = SERIES_COLOURS[s % len(SERIES_COLOURS)]
            if not is_number(value):
                body.append(text(x + bar_width / 2, zero - 8, "n/a", "chart-missing", "middle",
                                 tooltip=f"{group}, {name}: no value"))
                continue
            tooltip = f"{group}, {name}: {label_value(value, 3)}"
            top_y = y.clamped(value)
            body.append(rect(x + 1, zero, bar_width - 2, top_y - zero, f"chart-bar chart-series-{s}", colour, tooltip))
            # Over a bar (under one below zero), no wider than the bar: never on this bar or a neighbour's.
            shown = label_value(value)
            size = min(FONT_SIZE, (bar_width - 2) / (GLYPH_WIDTH * len(shown)))
            if size >= MIN_VALUE_FONT:
                offset = -(size / 2 + 3) if value >= 0 else size / 2 + 3
                body.append(text(x + bar_width / 2, top_y + offset, shown, "chart-value", "middle",
                                 extra=f' font-size="{num(size)}"'))
        max_chars = max(int(group_width / 7), 4)
        body.append(text(left + (g + 0.5) * group_width, bottom + VALUE_ROOM + 16, truncate(group, max_chars),
                         "chart-label", "middle", tooltip=group))
        body.append("</g>")
    body.append(line(left, zero, right, zero, "chart-zero", INK, 1))
    for value, _label in shown_references:
        # Named in the legend, not beside the line, where the name would sit on the bars.
        body.append(line(left, y(value), right, y(value), "chart-reference", "#888888", 1, dash="4 3"))
    description = "; ".join(
        f"{group}: " + ", ".join(f"{name} {label_value(values[g], 3)}" for name, values in series)
        for g, group in enumerate(groups)
    )
    return svg_document(width, height, title, description, body, ident, kind)
