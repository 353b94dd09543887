"""Rank (bump) chart: each system's rank under the human mean and every metric."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.charts.placement import Box, around, place_labels, tie_offsets
from app.core.charts.svg import (
    CONTENT_WIDTH,
    GRID,
    SERIES_COLOURS,
    LinearScale,
    chart_id,
    empty_chart,
    esc,
    is_number,
    line,
    num,
    svg_document,
    text,
    text_colour_on,
    text_width,
    truncate,
)

MAX_LABEL_CHARS = 22
POINT_RADIUS = 9
LABEL_STEP = 15  # a label's height and a little air: how far a tied name moves per step
TIE_STEP = 2 * POINT_RADIUS + 3  # how far apart tied systems' dots sit side by side in one column


def _rank_text(rank: float) -> str:
    """Show whole ranks as integers and averaged (tied) ranks with one decimal."""
    return str(int(rank)) if float(rank).is_integer() else f"{rank:.1f}"


def rank_chart(
    columns: Sequence[str],
    systems: Sequence[tuple[str, Sequence[float | None]]],
    title: str = "Rank of each system under every metric (1 = best)",
    width: int = CONTENT_WIDTH,
    identifier: str | None = None,
) -> str:
    """Draw a bump chart: one column per metric, one line per system, rank 1 at the top.

    Ties arrive as averaged ranks and are drawn between the whole ranks, the tied systems' dots side by side
    (in the order given) so that none hides another; a missing rank breaks the system's line.
    """
    kind = "ranks"
    ident = chart_id(kind, title, (columns, systems), identifier)
    if not columns or not systems:
        return empty_chart(title, ident, kind, width)
    for name, ranks in systems:
        if len(ranks) != len(columns):
            raise ValueError(f"system {name!r} has {len(ranks)} ranks for {len(columns)} columns")
    labels = [truncate(name, MAX_LABEL_CHARS) for name, _ in systems]
    gutter = max(text_width(label) for label in labels) + 24 + _widest_tie(systems) * TIE_STEP / 2
    left, right = gutter, width - gutter
    top = 58
    row_gap = 30
    n_ranks = max(len(systems), 2)
    bottom = top + row_gap * (n_ranks - 1)
    height = bottom + 24
    x = LinearScale(0, max(len(columns) - 1, 1), left, right) if len(columns) > 1 else (lambda _: (left + right) / 2)
    y = LinearScale(1, n_ranks, top, bottom)

    body = ['<g class="chart-axis">']
    for c, column in enumerate(columns):
        max_chars = max(int((right - left) / max(len(columns), 1) / 7), 4)
        body.append(text(x(c), 38, truncate(column, max_chars), "chart-column-label", "middle",
                         extra=' font-weight="600"', tooltip=column))
        body.append(line(x(c), top - 12, x(c), bottom + 12, "chart-grid", GRID))
    body.append("</g>")

    px = _dodged_x(systems, x)
    ends = _end_labels(systems, labels, px, y, Box(0, 46, width, height))
    for s, ((name, ranks), label) in enumerate(zip(systems, labels)):
        colour = SERIES_COLOURS[s % len(SERIES_COLOURS)]
        body.append(f'<g class="chart-system chart-series-{s}" data-index="{s}">')
        points = [(c, float(rank)) for c, rank in enumerate(ranks) if is_number(rank)]
        for (c1, r1), (c2, r2) in zip(points, points[1:]):
            if c2 == c1 + 1:
                body.append(line(px(s, c1), y(r1), px(s, c2), y(r2), "chart-rank-line", colour, 2.5))
        for c, rank in points:
            tooltip = f"{name} — {columns[c]}: rank {_rank_text(rank)}"
            body.append(
                f'<circle cx="{num(px(s, c))}" cy="{num(y(rank))}" r="{POINT_RADIUS}" class="chart-rank-point" '
                f'fill="{colour}"><title>{esc(tooltip)}</title></circle>'
            )
            body.append(text(px(s, c), y(rank), _rank_text(rank), "chart-rank-text", "middle",
                             extra=' font-size="10"', fill=text_colour_on(colour)))
        for column, (point_x, point_y), spot in ends.get(s, ()):
            if abs(spot.y - point_y) > 0.5 or abs(px(s, column) - point_x) > 0.5:
                # moved off a tie: a leader line from the system's own dot says whose label it is
                edge = POINT_RADIUS if spot.anchor == "start" else -POINT_RADIUS
                body.append(line(px(s, column) + edge, point_y, spot.x - edge / 3, spot.y, "chart-leader", colour, 1))
            body.append(text(spot.x, spot.y, label, "chart-label", spot.anchor, tooltip=name))
        body.append("</g>")
    description = "; ".join(
        f"{name}: " + ", ".join(f"{column} {_rank_text(r) if is_number(r) else 'n/a'}" for column, r in zip(columns, ranks))
        for name, ranks in systems
    )
    return svg_document(width, height, title, description, body, ident, kind)


def _widest_tie(systems) -> int:
    """How many dots the largest group of systems tied in one column spreads over, less one."""
    counts: dict[tuple[int, float], int] = {}
    for _name, ranks in systems:
        for c, rank in enumerate(ranks):
            if is_number(rank):
                counts[(c, float(rank))] = counts.get((c, float(rank)), 0) + 1
    return max(counts.values(), default=1) - 1


def _dodged_x(systems, x):
    """(system, column) -> the x of its dot: the column's, moved aside when systems share the rank there."""
    ties: dict[tuple[int, float], list[int]] = {}
    for s, (_name, ranks) in enumerate(systems):
        for c, rank in enumerate(ranks):
            if is_number(rank):
                ties.setdefault((c, float(rank)), []).append(s)
    offsets = {(s, c): (position - (len(members) - 1) / 2) * TIE_STEP
               for (c, _rank), members in ties.items() for position, s in enumerate(members)}
    spread = {(s, c): (len(members) - 1) / 2 * TIE_STEP for (c, _rank), members in ties.items() for s in members}

    def dot_x(s: int, c: int, side: str | None = None) -> float:
        """The dot's x; with a side, the outer edge of its group of tied dots on that side (where labels go)."""
        if side is None:
            return x(c) + offsets.get((s, c), 0.0)
        return x(c) + (spread.get((s, c), 0.0) if side == "start" else -spread.get((s, c), 0.0))

    return dot_x


def _end_labels(systems, labels, x, y, bounds: Box) -> dict[int, list]:
    """Each system's name left of its first point and right of its last; tied systems' names are dodged
    up and down so no two overlap (top to bottom, then in the order given)."""
    requests = []
    for s, ((_name, ranks), label) in enumerate(zip(systems, labels)):
        points = [(c, float(rank)) for c, rank in enumerate(ranks) if is_number(rank)]
        if points:
            (first_column, first_rank), (last_column, last_rank) = points[0], points[-1]
            requests.append((y(first_rank), s, label, (x(s, first_column, "end"), y(first_rank)), "end", first_column))
            requests.append((y(last_rank), s, label, (x(s, last_column, "start"), y(last_rank)), "start", last_column))
    requests.sort(key=lambda request: (request[4], request[0], request[1]))
    offsets = tie_offsets([(px if anchor == "start" else -px, py) for _, _, _, (px, py), anchor, _ in requests],
                          LABEL_STEP)
    placed = place_labels([(label, around(px, py + dy, POINT_RADIUS + 6, LABEL_STEP, (anchor,)))
                           for (_, _, label, (px, py), anchor, _), dy in zip(requests, offsets)], bounds=bounds)
    ends: dict[int, list] = {}
    for (_, s, _, point, _, column), spot in zip(requests, placed):
        ends.setdefault(s, []).append((column, point, spot))
    return ends
