"""Pure analysis of human scores and automatic metrics; takes plain records, never ORM objects.

Modules: `records` (score records), `bootstrap` (resampling), `human` (per-system summaries),
`agreement` (Krippendorff's alpha, pairwise agreement), `correlation` (Kendall tau against
humans, ranks, disagreements, length deltas), `kendall` (τ-b and its p-value, scipy's formulas
without scipy's 1–2 s import), `length_instruction` (L-Eval's "N-word" prompts)
`analyses` (everything the results page shows, in one call) and `judge_bias` (position and length
bias probes of a judge run). numpy and krippendorff
load with the module that needs them: importing this package costs nothing.
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ScoreRecord": "records",
    "AlphaResult": "agreement",
    "PairAgreement": "agreement",
    "ReliabilityData": "agreement",
    "alpha_by_system": "agreement",
    "alpha_result": "agreement",
    "items_scored_by_two_or_more": "agreement",
    "package_alpha": "agreement",
    "pairwise_agreement": "agreement",
    "reliability_data": "agreement",
    "CorrelationRow": "correlation",
    "Disagreement": "correlation",
    "LengthInstructionRow": "correlation",
    "RankRow": "correlation",
    "find_disagreements": "correlation",
    "length_instruction_comparison": "correlation",
    "metric_vs_human": "correlation",
    "min_significant_tau": "correlation",
    "negative_abs_delta_from_counts": "correlation",
    "negative_abs_length_delta": "correlation",
    "rank_table": "correlation",
    "BreakdownRow": "human",
    "SystemSummary": "human",
    "breakdown": "human",
    "item_means": "human",
    "only_annotators": "human",
    "summarize_systems": "human",
    "system_means": "human",
    "detected_word_target": "length_instruction",
    "length_instruction": "length_instruction",
    "with_length_instruction": "length_instruction",
    "build_results": "analyses",
    "PairedTest": "paired",
    "adjacent_tests": "paired",
    "paired_test": "paired",
    "BiasProbes": "judge_bias",
    "PairVerdicts": "judge_bias",
    "probe": "judge_bias",
    "probe_by_task": "judge_bias",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
