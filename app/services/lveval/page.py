"""Assemble the LV-Eval page: the view of one dataset, its charts and the labels the template needs."""
from __future__ import annotations

from dataclasses import dataclass

from app.core.stats.lveval import LEAKAGE_MARGIN, VARIANT_KINDS
from app.services.lveval.charts import curves_svg, heatmap_svg
from app.services.lveval.report import OVERALL, LvevalView, build_view, dataset_choices

PROFILE_NOTES = {
    "official": "reproduces LV-Eval's evaluation.py, quirks included",
    "fixed": "corrects its quirks (see below)",
}


@dataclass
class LvevalPage:
    view: LvevalView
    datasets: list[str]
    curves: str
    heatmaps: list[tuple[object, str]]
    variant_kinds: dict[str, str]
    profile_notes: dict[str, str]
    leakage_margin: float


def lveval_page(profile: str, dataset: str) -> LvevalPage | None:
    """None for an unknown dataset."""
    if dataset not in dataset_choices():
        return None
    view = build_view(profile, dataset)
    heatmaps = [(heatmap, heatmap_svg(heatmap) if any(n for row in heatmap.counts for n in row) else "")
                for heatmap in view.heatmaps]
    return LvevalPage(view=view, datasets=dataset_choices(), curves=curves_svg(view, identifier="lveval-curves"),
                      heatmaps=heatmaps, variant_kinds=VARIANT_KINDS, profile_notes=PROFILE_NOTES,
                      leakage_margin=LEAKAGE_MARGIN)


__all__ = ["OVERALL", "LvevalPage", "lveval_page"]
