"""LLM-judge win rates for the metric-versus-human comparison."""
from __future__ import annotations

from typing import Any

from app.models.corpus import HUMAN_EVAL
from app.services.judge import win_rates

WinRates = dict[str, list[dict[str, Any]]]


def load_win_rates(system_names: list[str] | None = None) -> WinRates:
    """Return the judge's win rates on the human-evaluation subset, the questions humans scored."""
    rates = win_rates(system_names=system_names)
    on_subset = {system: [e for e in entries if e.get("scope") == HUMAN_EVAL] for system, entries in rates.items()}
    return {system: entries for system, entries in on_subset.items() if entries}
