"""Needle-in-a-haystack heatmap: mean score per (needle depth, length level) cell."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.charts.svg import (
    INK,
    SCORE_COLOURS,
    chart_id,
    empty_chart,
    esc,
    is_number,
    label_value,
    num,
    svg_document,
    text,
    text_colour_on,
)

EMPTY_CELL = "#f2f2f2"


def _hex(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def score_colour(value: float, high: float = 100.0) -> str:
    """Interpolate the red-to-green score palette over [0, high]."""
    share = min(max(value / high if high else 0.0, 0.0), 1.0) * (len(SCORE_COLOURS) - 1)
    index = min(int(share), len(SCORE_COLOURS) - 2)
    fraction = share - index
    a, b = _hex(SCORE_COLOURS[index]), _hex(SCORE_COLOURS[index + 1])
    return "#" + "".join(f"{round(x + (y - x) * fraction):02x}" for x, y in zip(a, b))


def depth_heatmap(depths: Sequence[str], levels: Sequence[str], cells: Sequence[Sequence[float | None]],
                  counts: Sequence[Sequence[int]], title: str, note: str = "", cell_width: int = 72,
                  cell_height: int = 26, identifier: str | None = None) -> str:
    """Draw rows of depth bins (top = start of the context) against level columns."""
    kind = "heatmap"
    ident = chart_id(kind, title, (tuple(depths), tuple(levels), tuple(map(tuple, cells)), note), identifier)
    if not depths or not levels or not any(is_number(v) for row in cells for v in row):
        return empty_chart(title, ident, kind)
    left, top = 84, 62 if note else 46
    width = left + cell_width * len(levels) + 16
    height = top + cell_height * len(depths) + 44
    body = []
    for r, depth in enumerate(depths):
        y = top + r * cell_height
        body.append(text(left - 6, y + cell_height / 2, depth, "chart-tick", "end"))
        for c, level in enumerate(levels):
            x = left + c * cell_width
            value = cells[r][c] if c < len(cells[r]) else None
            n = counts[r][c] if r < len(counts) and c < len(counts[r]) else 0
            fill = score_colour(value) if is_number(value) else EMPTY_CELL
            tip = f"depth {depth}, {level}: " + (f"{label_value(value)} over {n} rows" if is_number(value)
                                                  else "no rows")
            body.append(f'<rect x="{num(x)}" y="{num(y)}" width="{num(cell_width - 2)}" '
                        f'height="{num(cell_height - 2)}" class="chart-cell" fill="{fill}" '
                        f'data-depth="{esc(depth)}" data-level="{esc(level)}"><title>{esc(tip)}</title></rect>')
            # Black or white by the cell's luminance: dark numbers would vanish on the dark red cells.
            body.append(text(x + (cell_width - 2) / 2, y + (cell_height - 2) / 2,
                             label_value(value, 0) if is_number(value) else "–", "chart-cell-label", "middle",
                             fill=text_colour_on(fill)))
    bottom = top + cell_height * len(depths)
    for c, level in enumerate(levels):
        body.append(text(left + c * cell_width + cell_width / 2, bottom + 12, level, "chart-tick", "middle"))
    body.append(text(left + cell_width * len(levels) / 2, bottom + 30, "Length level", "chart-axis-label", "middle"))
    body.append(text(8, top - 10, "Needle depth", "chart-axis-label", fill=INK))
    description = "; ".join(f"{depth}: " + ", ".join(f"{lv} {label_value(v)}" for lv, v in zip(levels, row))
                            for depth, row in zip(depths, cells))
    return svg_document(width, height, title, description, body, ident, kind, note=note)
