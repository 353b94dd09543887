"""Does an LLM rater agree with the annotators as well as they agree with each other?

Krippendorff's ordinal α (the `krippendorff` package, value domain 1–5) is computed item by item
for each pair of raters, on the items both scored. The LLM's agreement is its mean α against
each annotator; the human ceiling is each annotator's leave-one-out α: their mean α against
every other annotator. The LLM is within human agreement when its α reaches the lowest
annotator's leave-one-out α.

The ceiling is a spread of annotators' agreement, so it needs enough of them and enough shared answers:
below MIN_CEILING_ANNOTATORS annotators or MIN_CEILING_ITEMS answers scored by two or more of them it
cannot be estimated, and no verdict is given (with two annotators both leave-one-out α are the same
single pair, so the "range" has no width at all).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.core.stats.agreement import package_alpha, reliability_data
from app.core.stats.records import ItemKey, clean

RATER = "LLM rater"
MIN_CEILING_ANNOTATORS = 3
MIN_CEILING_ITEMS = 30  # answers scored by at least two annotators


def ceiling_shortfall(n_annotators: int, n_shared_items: int) -> str | None:
    """Why the human ceiling cannot be estimated from this many annotators and shared answers, or None."""
    missing = []
    if n_annotators < MIN_CEILING_ANNOTATORS:
        missing.append(f"{n_annotators} annotator{'s' if n_annotators != 1 else ''} "
                       f"(needs at least {MIN_CEILING_ANNOTATORS})")
    if n_shared_items < MIN_CEILING_ITEMS:
        missing.append(f"{n_shared_items} answer{'s' if n_shared_items != 1 else ''} scored by two or more "
                       f"annotators (needs at least {MIN_CEILING_ITEMS})")
    return "; ".join(missing) or None


@dataclass(frozen=True)
class RaterAgreement:
    llm_alpha: float | None
    llm_by_annotator: dict[str, float | None]
    ceiling: dict[str, float | None]  # annotator -> mean α against the other annotators
    ceiling_mean: float | None
    ceiling_min: float | None
    ceiling_max: float | None
    ceiling_sd: float | None
    n_items: int  # items the LLM and at least one annotator scored
    within_human_range: bool | None  # None when undefined or when the ceiling cannot be estimated
    ceiling_shortfall: str | None = None  # why the ceiling cannot be estimated (too few annotators or answers)
    items: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"llm_alpha": clean(self.llm_alpha), "llm_by_annotator": dict(self.llm_by_annotator),
                "ceiling": dict(self.ceiling), "ceiling_mean": clean(self.ceiling_mean),
                "ceiling_min": clean(self.ceiling_min), "ceiling_max": clean(self.ceiling_max),
                "ceiling_sd": clean(self.ceiling_sd), "n_items": self.n_items,
                "within_human_range": self.within_human_range,
                "ceiling_shortfall": self.ceiling_shortfall, "items": list(self.items)}


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def pair_alpha(first, second) -> float | None:
    """Ordinal α of two raters' rows (NaN where a rater did not score an item)."""
    import numpy as np

    value, _reason = package_alpha(np.vstack([first, second]))
    return value


def rater_agreement(records: Iterable[Mapping[str, Any]], rater_scores: Mapping[ItemKey, int],
                    disagreements: int = 20) -> RaterAgreement:
    """Compare the LLM rater's scores, by item (system, document id, question id), with the human records."""
    import numpy as np

    data = reliability_data(records)
    rater_row = np.array([float(rater_scores.get(item, np.nan)) for item in data.items])
    annotators = list(data.annotators)
    llm_by = {name: clean(pair_alpha(rater_row, data.matrix[i])) for i, name in enumerate(annotators)}
    pairwise: dict[tuple[int, int], float | None] = {}
    for i in range(len(annotators)):
        for j in range(i + 1, len(annotators)):
            pairwise[(i, j)] = pairwise[(j, i)] = pair_alpha(data.matrix[i], data.matrix[j])
    ceiling = {}
    for i, name in enumerate(annotators):
        values = [pairwise[(i, j)] for j in range(len(annotators)) if j != i and pairwise[(i, j)] is not None]
        ceiling[name] = clean(_mean(values))
    defined = [v for v in ceiling.values() if v is not None]
    llm_alpha = _mean([v for v in llm_by.values() if v is not None])
    scored_by_humans = np.isfinite(data.matrix).any(axis=0) if annotators else np.zeros(len(data.items), bool)
    n_items = int((np.isfinite(rater_row) & scored_by_humans).sum())
    counts = np.isfinite(data.matrix).sum(axis=0)
    sums = np.where(np.isfinite(data.matrix), data.matrix, 0.0).sum(axis=0)
    human_means = np.divide(sums, counts, out=np.full(len(data.items), np.nan), where=counts > 0)
    items = []
    for index, item in enumerate(data.items):
        if np.isfinite(rater_row[index]) and scored_by_humans[index]:
            items.append({"system": item[0], "document_id": item[1], "question_id": item[2],
                          "llm": int(rater_row[index]), "human_mean": float(human_means[index]),
                          "n_humans": int(np.isfinite(data.matrix[:, index]).sum()),
                          "difference": float(rater_row[index] - human_means[index])})
    shortfall = ceiling_shortfall(len(annotators), int((counts >= 2).sum()))
    items.sort(key=lambda row: (-abs(row["difference"]), row["system"], row["question_id"]))
    return RaterAgreement(
        llm_alpha=clean(llm_alpha), llm_by_annotator=llm_by, ceiling=ceiling,
        ceiling_mean=clean(_mean(defined)), ceiling_min=min(defined) if defined else None,
        ceiling_max=max(defined) if defined else None,
        ceiling_sd=clean(float(np.std(defined, ddof=1))) if len(defined) > 1 else None,
        n_items=n_items,
        within_human_range=None if llm_alpha is None or not defined or shortfall else llm_alpha >= min(defined),
        ceiling_shortfall=shortfall,
        items=items[:disagreements],
    )
