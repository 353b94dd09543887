"""Server-rendered SVG charts and pivot tables for the results pages.

The chart functions escape every label themselves, so their output is marked
safe here once, and templates never apply |safe to anything.
"""
from __future__ import annotations

from typing import Any

from markupsafe import Markup

from app.core.charts import (
    distribution_chart,
    grouped_bar_chart,
    mean_ci_chart,
    rank_chart,
    scatter_chart,
)
from app.core.rubric import SCALE

SCORE_RANGE = (1.0, 5.0)
TAU_RANGE = (-1.0, 1.0)
# The scatters sit two or three to a row (.chart-grid columns of at least 400 px).
SCATTER_WIDTH, SCATTER_HEIGHT = 420, 320


def human_charts(data: dict[str, Any]) -> dict[str, Markup]:
    systems = data["systems"]
    return {
        "means": Markup(mean_ci_chart(
            [(row["system"], row["mean"], row["ci_low"], row["ci_high"]) for row in systems],
            title="Mean human score per system, with 95% bootstrap interval (resampling questions)",
            value_range=SCORE_RANGE, identifier="chart-human-means",
        )),
        "distribution": Markup(distribution_chart(
            [(row["system"], [row["distribution"][score] for score in SCALE]) for row in systems],
            title="Distribution of scores 1–5 per system", identifier="chart-human-distribution",
        )),
    }


def _threshold_line(data: dict[str, Any]) -> list[tuple[float, str]]:
    threshold = data.get("significance_threshold_tau")
    if threshold is None:
        return []
    return [(threshold, f"p < 0.05 needs τ ≥ {threshold:.3f} with {len(data['systems'])} systems")]


def correlation_charts(data: dict[str, Any]) -> dict[str, Any]:
    from app.core.stats.correlation import min_significant_tau

    rows = data["correlations"]
    charts: dict[str, Any] = {
        "taus": Markup(grouped_bar_chart(
            [row["metric"] for row in rows], [("Kendall τ-b with the mean human score", [row["tau"] for row in rows])],
            title=f"Kendall τ-b between each measure and the mean human score ({data['profile']} profile)",
            value_range=TAU_RANGE, reference_lines=_threshold_line(data), identifier="chart-taus",
        )),
    }
    comparison = data.get("length_instruction") or []
    if comparison:
        charts["length_instruction"] = Markup(grouped_bar_chart(
            [row["metric"] for row in comparison],
            [("without length instruction", [row["plain"]["tau"] for row in comparison]),
             ("with length instruction", [row["length_instructed"]["tau"] for row in comparison])],
            title="Kendall τ-b with humans: plain systems against length-instructed systems",
            value_range=TAU_RANGE, identifier="chart-length-instruction",
            # Each side has its own n; L-Eval's 7-system bar is the common yardstick.
            reference_lines=[(min_significant_tau(7), "p < 0.05 needs τ ≥ 0.714 with 7 systems")],
        ))
    ranks = data.get("ranks") or []
    if ranks:
        # A measure no system is ranked under (it covers fewer than two) gets no column.
        measures = [row["metric"] for row in rows
                    if any(rank_row["metric_ranks"].get(row["metric"]) is not None for rank_row in ranks)]
        charts["ranks"] = Markup(rank_chart(
            ["Human", *measures],
            [(row["system"], [row["human_rank"], *(row["metric_ranks"].get(m) for m in measures)]) for row in ranks],
            title="Rank of each system under the human mean and every measure (1 = best)",
            identifier="chart-ranks",
        ))
        charts["scatters"] = [
            Markup(scatter_chart(
                [(row["system"], row["metric_values"].get(column["label"]), row["human_mean"]) for row in ranks],
                column["label"], title=f"{column['label']} against the mean human score",
                note=_tau_note(rows, column["label"]), width=SCATTER_WIDTH, height=SCATTER_HEIGHT,
                identifier=f"chart-scatter-{position}",
            ))
            for position, column in enumerate(data["metric_columns"])
        ]
    return charts


def _tau_note(rows: list[dict[str, Any]], label: str) -> str:
    row = next((row for row in rows if row["metric"] == label), None)
    if row is None or row["tau"] is None:
        return "τ undefined"
    return f"τ = {row['tau']:.3f}, p = {row['p_value']:.3f}, n = {row['n']}"


def alpha_chart(alpha_rows: list[dict[str, Any]]) -> Markup:
    return Markup(mean_ci_chart(
        [(row["scope"], row["alpha"], row["ci_low"], row["ci_high"]) for row in alpha_rows],
        title="Krippendorff's α (ordinal) with 95% bootstrap interval (resampling answers)",
        value_range=TAU_RANGE, identifier="chart-alpha",
    ))


def pivot(rows: list[dict[str, Any]]) -> tuple[list[str], dict[tuple[str, str], dict[str, Any]]]:
    """Turn breakdown rows (system, group, mean, …) into the sorted groups and a (system, group) lookup."""
    cells = {(row["system"], row["group"]): row for row in rows}
    return sorted({row["group"] for row in rows}), cells
