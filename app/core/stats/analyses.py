"""One call that runs every analysis of the results page and returns JSON-ready data."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from app.core.stats.bootstrap import DEFAULT_RESAMPLES

# The analyses by the page that shows them: human scores (with the paired tests), metrics against
# humans, annotator agreement.
PARTS = ("human", "correlation", "agreement")


def build_results(
    records: Iterable[Mapping[str, Any]],
    metric_values: Mapping[str, Mapping[str, float | None]] | None = None,
    length_instructed: Collection[str] = (),
    finished_annotators: Collection[str] | None = None,
    breakdown_fields: tuple[str, ...] = ("task", "annotator"),
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    parts: Collection[str] = PARTS,
) -> dict[str, Any]:
    """Run the human, correlation and agreement analyses on plain score records.

    With finished_annotators given, only their scores are used: the
    'annotators who finished' view. `parts` picks which of PARTS to run (each page shows one; the
    export all). Everything returned is JSON-serialisable.
    """
    unknown = set(parts) - set(PARTS)
    if unknown:
        raise ValueError(f"parts must be among {PARTS}, not {sorted(unknown)}")
    # Here, not at the top: importing this module (for PARTS) loads no numpy.
    from app.core.stats.agreement import (
        alpha_by_system,
        items_scored_by_two_or_more,
        pairwise_agreement,
        reliability_data,
    )
    from app.core.stats.correlation import (
        length_instruction_comparison,
        metric_vs_human,
        min_significant_tau,
        rank_table,
    )
    from app.core.stats.human import (
        breakdown,
        only_annotators,
        summarize_systems,
        system_means,
    )

    rows = list(records)
    if finished_annotators is not None:
        rows = only_annotators(rows, finished_annotators)
    metrics = dict(metric_values or {})
    means = system_means(rows)
    data = reliability_data(rows)
    results: dict[str, Any] = {"n_scores": len(rows), "annotators": list(data.annotators)}
    if "human" in parts:
        from app.core.stats.paired import adjacent_tests

        results["systems"] = [summary.to_dict() for summary in summarize_systems(rows, n_resamples, seed=seed)]
        results["breakdowns"] = {field: [row.to_dict() for row in breakdown(rows, field)]
                                 for field in breakdown_fields}
        # Separating adjacent systems needs many random flips; 10,000 keeps p's Monte Carlo error near 0.002.
        results["significance"] = adjacent_tests(rows, resamples=max(n_resamples, 10_000), seed=seed,
                                                 bootstrap_resamples=n_resamples)
    if "correlation" in parts:
        results["correlations"] = [row.to_dict() for row in metric_vs_human(means, metrics)]
        results["ranks"] = [row.to_dict() for row in rank_table(means, metrics)] if means else []
        results["significance_threshold_tau"] = min_significant_tau(len(means))
        if length_instructed:
            results["length_instruction"] = [
                row.to_dict() for row in length_instruction_comparison(means, metrics, length_instructed)
            ]
    if "agreement" in parts:
        results["agreement"] = {
            "alpha": [result.to_dict() for result in alpha_by_system(data, n_resamples, seed=seed)],
            "pairs": [pair.to_dict() for pair in pairwise_agreement(data)],
            "items_scored_by_two_or_more": items_scored_by_two_or_more(data),
        }
    return results
