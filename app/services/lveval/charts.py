"""The LV-Eval page's SVGs, drawn from a report.LvevalView with app.core.charts."""
from __future__ import annotations

from markupsafe import Markup

from app.core.charts.curves import Curve, level_curves
from app.core.charts.heatmap import depth_heatmap
from app.core.metrics.files import LVEVAL_LEVELS
from app.services.lveval.report import OVERALL, Heatmap, LvevalView


def curves_svg(view: LvevalView, *, identifier: str | None = None) -> Markup:
    """The level curves; app.core.charts escapes every text in it, so it is markup-safe as a whole."""
    curves = []
    for system in view.systems:
        points = [system.points.get(level) for level in view.levels]
        ceiling = system.ceiling.values if system.ceiling else {}
        curves.append(Curve(
            label=system.name,
            scores=[p.mean if p else None for p in points],
            low=[p.low if p else None for p in points],
            high=[p.high if p else None for p in points],
            ceiling=[ceiling.get(level) for level in view.levels],
            flagged=[system.flags.get(level, False) for level in view.levels],
        ))
    what = "LV-Eval overall (mean of the 11 datasets)" if view.dataset == OVERALL else view.dataset
    note = "Whiskers: 95% bootstrap intervals over questions."
    if view.dataset == OVERALL and any(system.incomplete for system in view.systems):
        note += " A system without all 11 datasets at a level has no point there."
    svg = level_curves(view.levels, curves, title=f"{what}: score by length level ({view.profile} profile)",
                       note=note, identifier=identifier)
    return Markup(svg)


def heatmap_svg(heatmap: Heatmap) -> Markup:
    """One system's needle heatmap; app.core.charts escapes every text in it."""
    svg = depth_heatmap(heatmap.depths, LVEVAL_LEVELS, heatmap.cells, heatmap.counts,
                        title=f"{heatmap.system}: {heatmap.dataset}", note="Mean score per needle depth and level.",
                        identifier=f"needles-{heatmap.dataset}-{heatmap.system}")
    return Markup(svg)
