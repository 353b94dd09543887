"""Small SVG building blocks: escaping, number formatting, scales, ticks and the document wrapper."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from markupsafe import escape

SVG_NAMESPACE = "http://www.w3.org/2000/svg"
FONT_SIZE = 12
# Rough average glyph width of a sans-serif font at FONT_SIZE; only used to size label gutters.
CHAR_WIDTH = 0.6 * FONT_SIZE
MISSING_TEXT = "n/a"
# Bold titles run wider than body text; overestimating keeps a wrapped title inside the chart.
TITLE_CHAR_WIDTH = 1.1 * CHAR_WIDTH
LINE_HEIGHT = 16
# The results pages' content width: a chart drawn this wide is shown near its drawn size, so its text
# stays near 12 px once it is scaled to its card.
CONTENT_WIDTH = 1040

# Colour-blind-safe defaults (Tableau 10 / ColorBrewer RdYlGn); pages can override them with CSS classes.
SERIES_COLOURS = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#eeca3b", "#9d755d")
SCORE_COLOURS = ("#d7191c", "#fdae61", "#e6e6a0", "#a6d96a", "#1a9641")
INK = "#333333"
GRID = "#dddddd"

# Fonts are presentation attributes so page CSS can override them; only sizing needs inline style.
_FONT_ATTRIBUTES = 'font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12"'
# The chart scales to its container's width; its height follows from the viewBox's aspect ratio.
_BASE_STYLE = "display:block;width:100%;height:auto"


# Characters XML 1.0 forbids even when escaped; an untrusted name containing one would break the document.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def esc(value: object) -> str:
    """Escape any value for use in SVG text or a quoted attribute, dropping characters XML forbids."""
    return str(escape(_NOT_XML.sub("", str(value))))


def num(value: float) -> str:
    """Format a coordinate compactly and deterministically."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def label_value(value: float | None, digits: int = 2) -> str:
    """Format a data value for display, or 'n/a' when missing."""
    if value is None or not math.isfinite(value):
        return MISSING_TEXT
    return f"{value:.{digits}f}"


def is_number(value: float | None) -> bool:
    """Tell whether a value can be plotted."""
    return value is not None and math.isfinite(value)


def truncate(label: str, max_chars: int) -> str:
    """Shorten a label for display; the full text goes in a <title> tooltip."""
    label = str(label)
    return label if len(label) <= max_chars else label[: max(max_chars - 1, 1)] + "…"


def text_width(label: str) -> float:
    """Estimate the rendered width of a label."""
    return len(label) * CHAR_WIDTH


@dataclass(frozen=True)
class LinearScale:
    """Map a data interval onto a pixel interval."""

    domain_low: float
    domain_high: float
    range_low: float
    range_high: float

    def __call__(self, value: float) -> float:
        span = self.domain_high - self.domain_low
        fraction = 0.5 if span == 0 else (value - self.domain_low) / span
        return self.range_low + fraction * (self.range_high - self.range_low)

    def clamped(self, value: float) -> float:
        """Map a value, pinning it to the domain so out-of-range data cannot draw outside the plot."""
        low, high = sorted((self.domain_low, self.domain_high))
        return self(min(max(value, low), high))


def nice_ticks(low: float, high: float, target: int = 5) -> list[float]:
    """Return round tick values (1, 2 or 5 times a power of ten) covering [low, high]."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [low] if math.isfinite(low) else []
    raw_step = (high - low) / max(target, 1)
    magnitude = 10 ** math.floor(math.log10(raw_step))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw_step)
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    return ticks


def padded_domain(values: Iterable[float], include_zero: bool = True) -> tuple[float, float]:
    """Return a domain covering the values (and zero), widened when all values are equal."""
    finite = [v for v in values if is_number(v)]
    if include_zero:
        finite.append(0.0)
    if not finite:
        return (0.0, 1.0)
    low, high = min(finite), max(finite)
    if low == high:
        return (low - 1.0, high + 1.0)
    return (low, high)


def chart_id(kind: str, title: str, payload: object, explicit: str | None) -> str:
    """Return a stable, markup-safe id so several charts on a page do not clash."""
    if explicit:
        return re.sub(r"[^A-Za-z0-9_-]", "-", explicit)
    digest = hashlib.sha1(repr((kind, title, payload)).encode("utf-8")).hexdigest()[:10]
    return f"chart-{kind}-{digest}"


def wrap_words(content: str, max_width: float, char_width: float = CHAR_WIDTH) -> list[str]:
    """Break text into lines no wider than max_width (estimated), at spaces; an overlong word is cut."""
    per_line = max(int(max_width // char_width), 1)
    lines: list[str] = []
    current = ""
    for word in str(content).split():
        while len(word) > per_line:
            if current:
                lines.append(current)
                current = ""
            lines.append(word[:per_line])
            word = word[per_line:]
        candidate = f"{current} {word}" if current else word
        if len(candidate) <= per_line:
            current = candidate
        else:
            lines.append(current)
            current = word
    if current or not lines:
        lines.append(current)
    return lines


def _lines(x: float, y: float, lines: Sequence[str], css_class: str, extra: str = "") -> str:
    """One <text> of several lines (tspans), so the browser measures it as one box."""
    spans = "".join(
        f'<tspan x="{num(x)}" dy="{0 if index == 0 else LINE_HEIGHT}">{esc(line_text)}</tspan>'
        for index, line_text in enumerate(lines)
    )
    return (f'<text x="{num(x)}" y="{num(y)}" class="{css_class}" dominant-baseline="middle" '
            f'fill="{INK}"{extra}>{spans}</text>')


def svg_document(
    width: float, height: float, title: str, description: str, body: Sequence[str], identifier: str, kind: str,
    note: str = "", heading: bool = True,
) -> str:
    """Wrap chart elements in an accessible, self-contained <svg> element that scales to its container.

    The heading (the title, and the note under it) is wrapped to the chart's width; the body is laid
    out for a one-line title at y 14 and a one-line note at y 32, and moves down by the extra lines.
    """
    title_id, desc_id = f"{identifier}-title", f"{identifier}-desc"
    top: list[str] = []
    shift = 0.0
    if heading:
        title_lines = wrap_words(title, width - 16, TITLE_CHAR_WIDTH)
        top.append(_lines(8, 14, title_lines, "chart-title", ' font-weight="600"'))
        shift = LINE_HEIGHT * (len(title_lines) - 1)
        if note:
            note_lines = wrap_words(note, width - 16)
            top.append(_lines(8, 32 + shift, note_lines, "chart-note"))
            shift += LINE_HEIGHT * (len(note_lines) - 1)
    height += shift
    header = (
        f'<svg xmlns="{SVG_NAMESPACE}" id="{esc(identifier)}" class="chart chart-{esc(kind)}" '
        f'width="100%" viewBox="0 0 {num(width)} {num(height)}" '
        f'role="img" aria-label="{esc(title)}" aria-labelledby="{title_id} {desc_id}" '
        f'preserveAspectRatio="xMinYMin meet" {_FONT_ATTRIBUTES} style="{_BASE_STYLE}">'
    )
    parts = [header, f'<title id="{title_id}">{esc(title)}</title>', f'<desc id="{desc_id}">{esc(description)}</desc>']
    parts.extend(top)
    if shift:
        parts.append(f'<g class="chart-body" transform="translate(0 {num(shift)})">')
    parts.extend(body)
    if shift:
        parts.append("</g>")
    parts.append("</svg>")
    return "\n".join(parts)


def _channel(value: int) -> float:
    share = value / 255
    return share / 12.92 if share <= 0.03928 else ((share + 0.055) / 1.055) ** 2.4


def relative_luminance(colour: str) -> float:
    """WCAG 2 relative luminance of a #rrggbb colour."""
    red, green, blue = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * _channel(red) + 0.7152 * _channel(green) + 0.0722 * _channel(blue)


def contrast_ratio(first: str, second: str) -> float:
    """WCAG 2 contrast ratio of two #rrggbb colours, from 1 to 21."""
    high, low = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def text_colour_on(fill: str) -> str:
    """Black or white, whichever contrasts more with the fill: at least 4.58:1 on any colour (WCAG AA)."""
    return "#000000" if contrast_ratio(fill, "#000000") >= contrast_ratio(fill, "#ffffff") else "#ffffff"


def text(
    x: float,
    y: float,
    content: str,
    css_class: str = "chart-label",
    anchor: str = "start",
    extra: str = "",
    tooltip: str | None = None,
    fill: str = INK,
) -> str:
    """Return a <text> element with escaped content and an optional tooltip."""
    inner = esc(content) + (f"<title>{esc(tooltip)}</title>" if tooltip else "")
    return (
        f'<text x="{num(x)}" y="{num(y)}" class="{css_class}" text-anchor="{anchor}" '
        f'dominant-baseline="middle" fill="{fill}"{extra}>{inner}</text>'
    )


def rect(x: float, y: float, width: float, height: float, css_class: str, fill: str, tooltip: str | None) -> str:
    """Return a <rect> element; negative sizes are normalised so bars below zero render."""
    if width < 0:
        x, width = x + width, -width
    if height < 0:
        y, height = y + height, -height
    inner = f"<title>{esc(tooltip)}</title>" if tooltip else ""
    return (
        f'<rect x="{num(x)}" y="{num(y)}" width="{num(width)}" height="{num(height)}" '
        f'class="{css_class}" fill="{fill}">{inner}</rect>'
    )


def line(
    x1: float, y1: float, x2: float, y2: float, css_class: str, stroke: str = INK, width: float = 1, dash: str = ""
) -> str:
    """Return a <line> element, dashed when dash is an SVG dash pattern such as '4 3'."""
    dashes = f' stroke-dasharray="{esc(dash)}"' if dash else ""
    return (
        f'<line x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}" '
        f'class="{css_class}" stroke="{stroke}" stroke-width="{num(width)}"{dashes}/>'
    )


def empty_chart(title: str, identifier: str, kind: str, width: float = 600, height: float = 80) -> str:
    """Return a placeholder chart saying there is nothing to plot."""
    body = [text(width / 2, height / 2, "No data yet", "chart-empty", "middle")]
    return svg_document(width, height, title, "No data to plot.", body, identifier, kind, heading=False)


def legend(items: Sequence[tuple[str, str, str]], x: float, y: float) -> list[str]:
    """Lay out a one-row legend of (label, css_class, colour) swatches starting at (x, y)."""
    parts = ['<g class="chart-legend">']
    for label, css_class, colour in items:
        parts.append(rect(x, y - 6, 12, 12, css_class, colour, None))
        parts.append(text(x + 16, y, label, "chart-legend-label"))
        x += 16 + text_width(label) + 14
    parts.append("</g>")
    return parts
