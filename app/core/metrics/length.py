"""Answer length, which L-Eval found to drive n-gram scores."""

from __future__ import annotations

from typing import Sequence

from app.core.metrics.normalize import count_words
from app.core.metrics.profiles import OFFICIAL, resolve_profile


def word_count(text: str, profile: str = OFFICIAL) -> int:
    """Count words: whitespace-separated in the official profile; the fixed one also counts each Han character."""
    return count_words(text, count_han_chars=resolve_profile(profile) != OFFICIAL)


def length_item(prediction: str, references: Sequence[str], profile: str = OFFICIAL) -> dict[str, float]:
    """Return the prediction's word count and the mean word count of its references."""
    item = {"pred_words": float(word_count(prediction, profile))}
    if references:
        item["ref_words"] = sum(word_count(ref, profile) for ref in references) / len(references)
    return item


def length_summary(items: Sequence[dict[str, float]]) -> dict[str, float]:
    """Return avg_words (predictions) and delta_words, the mean of prediction minus reference words."""
    with_pred = [item for item in items if "pred_words" in item]
    if not with_pred:
        return {}
    summary = {"avg_words": sum(item["pred_words"] for item in with_pred) / len(with_pred)}
    paired = [item for item in with_pred if "ref_words" in item]
    if paired:
        summary["delta_words"] = sum(item["pred_words"] - item["ref_words"] for item in paired) / len(paired)
    return summary
