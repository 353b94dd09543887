"""Does an LLM rater agree with the annotators as well as they agree with each other?

Krippendorff's ordinal α (the `krippendorff` package, value domain 1–5) is computed item by item
for each pair of raters, on the items both scored. The LLM's agreement is its mean α against
each annotator; the human ceiling is each annotator's leave-one-out α: their mean α against
every other annotator. The LLM is within human agreement when its α reaches the lowest
annotator's leave-one-out α.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.core.stats.agreement import package_alpha, reliability_data
from app.core.stats.records import ItemKey, clean

RATER = "LLM rater"


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
    within_human_range: bool | None
    items: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"llm_alpha": clean(self.llm_alpha), "llm_by_annotator": dict(self.llm_by_annotator),
                "ceiling": dict(self.ceiling), "ceiling_mean": clean(self.ceiling_mean),
                "ceiling_min": clean(self.ceiling_min), "ceiling_max": clean(self.ceiling_max),
                "ceiling_sd": clean(self.ceiling_sd), "n_items": self.n_items,
                "within_human_range": self.within_human_range, "items": list(self.items)}


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
    items.sort(key=lambda row: (-abs(row["difference"]), row["system"], row["question_id"]))
    return RaterAgreement(
        llm_alpha=clean(llm_alpha), llm_by_annotator=llm_by, ceiling=ceiling,
        ceiling_mean=clean(_mean(defined)), ceiling_min=min(defined) if defined else None,
        ceiling_max=max(defined) if defined else None,
        ceiling_sd=clean(float(np.std(defined, ddof=1))) if len(defined) > 1 else None,
        n_items=n_items,
        within_human_range=None if llm_alpha is None or not defined else llm_alpha >= min(defined),
        items=items[:disagreements],
    )
