"""Label placement: estimated text boxes and a deterministic pass that keeps labels off each other.

Labels of tied values (systems sharing a rank, points at the same place) would be drawn on top of each
other. Each label has a list of candidate positions, nearest first; labels are placed in a fixed order,
each at its first candidate whose box meets no placed label and no obstacle (bars, points, whiskers)
and stays inside the chart. The same inputs always give the same layout.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from app.core.charts.svg import FONT_SIZE

# Estimated glyph width as a share of the font size (as svg.CHAR_WIDTH), plus room above and below.
GLYPH_WIDTH = 0.6
BOX_PADDING = 2.0


@dataclass(frozen=True)
class Box:
    """An axis-aligned rectangle in chart coordinates (y grows downwards)."""

    x0: float
    y0: float
    x1: float
    y1: float

    def intersects(self, other: Box) -> bool:
        """True when the two boxes share any area (touching edges do not count)."""
        return self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1

    def inside(self, other: Box) -> bool:
        return self.x0 >= other.x0 and self.x1 <= other.x1 and self.y0 >= other.y0 and self.y1 <= other.y1


def text_box(x: float, y: float, content: str, anchor: str = "start", font_size: float = FONT_SIZE) -> Box:
    """The box a one-line label drawn at (x, y) with dominant-baseline middle is estimated to cover."""
    width = len(content) * GLYPH_WIDTH * font_size
    half = font_size / 2 + BOX_PADDING / 2
    left = {"start": x, "end": x - width, "middle": x - width / 2}[anchor]
    return Box(left, y - half, left + width, y + half)


def point_box(x: float, y: float, radius: float) -> Box:
    return Box(x - radius, y - radius, x + radius, y + radius)


def line_box(x1: float, y1: float, x2: float, y2: float, width: float = 1.0) -> Box:
    """The box around a horizontal or vertical line segment drawn with the given stroke width."""
    half = width / 2
    return Box(min(x1, x2) - half, min(y1, y2) - half, max(x1, x2) + half, max(y1, y2) + half)


@dataclass(frozen=True)
class Placed:
    x: float
    y: float
    anchor: str
    box: Box


Candidate = tuple[float, float, str]  # x, y, text-anchor


def around(x: float, y: float, gap: float, step: float, sides: Sequence[str] = ("start", "end"),
           limit: int = 60) -> Iterator[Candidate]:
    """Positions beside a point, nearest first: level with it, then a step further down and up each time.

    A "start" label reads rightwards from gap right of the point, an "end" label ends gap left of it.
    """
    for k in range(limit + 1):
        for dy in ((0.0,) if k == 0 else (k * step, -k * step)):
            for anchor in sides:
                yield (x + gap if anchor == "start" else x - gap, y + dy, anchor)


def tie_offsets(points: Sequence[tuple[float, float]], step: float) -> list[float]:
    """Vertical offsets that fan the labels of points at one place out around it, in the order given
    (the first on top), so tied names read in order before the placement pass checks them."""
    groups: dict[tuple[float, float], list[int]] = {}
    for index, (x, y) in enumerate(points):
        groups.setdefault((round(x, 1), round(y, 1)), []).append(index)
    offsets = [0.0] * len(points)
    for members in groups.values():
        for position, index in enumerate(members):
            offsets[index] = (position - (len(members) - 1) / 2) * step
    return offsets


def place_labels(labels: Sequence[tuple[str, Iterable[Candidate]]], obstacles: Sequence[Box] = (),
                 bounds: Box | None = None, font_size: float = FONT_SIZE) -> list[Placed]:
    """Place each (text, candidates) in order at its first candidate clear of placed labels and obstacles.

    A label with no clear candidate inside the bounds takes its first candidate clear of the other labels
    alone, wherever it is; labels never overlap each other.
    """
    placed: list[Placed] = []
    for content, candidates in labels:
        fallback: Placed | None = None
        chosen: Placed | None = None
        for x, y, anchor in candidates:
            box = text_box(x, y, content, anchor, font_size)
            if any(box.intersects(other.box) for other in placed):
                continue
            option = Placed(x, y, anchor, box)
            if fallback is None:
                fallback = option
            if (bounds is None or box.inside(bounds)) and not any(box.intersects(o) for o in obstacles):
                chosen = option
                break
        if chosen is None:
            chosen = fallback or _below_all(content, placed, font_size)
        placed.append(chosen)
    return placed


def _below_all(content: str, placed: list[Placed], font_size: float) -> Placed:
    """A last resort when every candidate met a label: a free line under all of them."""
    y = max((p.box.y1 for p in placed), default=0.0) + font_size
    box = text_box(0.0, y, content, "start", font_size)
    return Placed(0.0, y, "start", box)
