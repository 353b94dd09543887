"""ROUGE-1/2/L F-measures: a fast implementation identical to rouge-score, plus the package call.

rouge-score computes ROUGE-L with a pure-Python O(m·n) table, which dominates
scoring time on long summaries.  Here the LCS length comes from a bit-parallel
algorithm on Python integers (Hyyrö 2004), so a 2,000 × 2,000 token pair
costs a few thousand big-integer operations instead of four million cell updates.
The precision/recall/F arithmetic repeats rouge-score's operations in the
same order, so the results are the same floats, not merely close ones.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from app.core.metrics.normalize import rouge_tokens_ascii, rouge_tokens_unicode
from app.core.metrics.profiles import OFFICIAL, resolve_profile

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")


def rouge_tokens(text: str, profile: str = OFFICIAL) -> list[str]:
    """Tokenise for ROUGE: rouge-score's ASCII rule (official) or the CJK-keeping rule (fixed)."""
    if resolve_profile(profile) == OFFICIAL:
        return rouge_tokens_ascii(text)
    return rouge_tokens_unicode(text)


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Return the length of the longest common subsequence of two token sequences."""
    if len(a) < len(b):
        a, b = b, a  # the bit vector spans the shorter sequence
    if not b:
        return 0
    match_masks: dict[str, int] = {}
    for position, token in enumerate(b):
        match_masks[token] = match_masks.get(token, 0) | (1 << position)
    all_ones = (1 << len(b)) - 1
    v = all_ones  # zero bits mark LCS positions found so far
    for token in a:
        mask = match_masks.get(token)
        if mask:
            u = v & mask
            v = ((v + u) | (v - u)) & all_ones
    return len(b) - v.bit_count()


def _fmeasure(precision: float, recall: float) -> float:
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


def _ngram_counts(tokens: Sequence[str], n: int) -> Counter:
    if n == 1:
        return Counter(tokens)
    return Counter(zip(*(tokens[i:] for i in range(n))))


def _ngram_f(target: Counter, prediction: Counter) -> float:
    overlap = sum(min(count, prediction[gram]) for gram, count in target.items() if gram in prediction)
    precision = overlap / max(sum(prediction.values()), 1)
    recall = overlap / max(sum(target.values()), 1)
    return _fmeasure(precision, recall)


def _lcs_f(target: Sequence[str], prediction: Sequence[str]) -> float:
    if not target or not prediction:
        return 0
    lcs = lcs_length(target, prediction)
    return _fmeasure(lcs / len(prediction), lcs / len(target))


def rouge_f_from_tokens(target: Sequence[str], prediction: Sequence[str]) -> dict[str, float]:
    """Return rouge1/rouge2/rougeL F-measures in [0, 1] for one target/prediction pair."""
    return {
        "rouge1": _ngram_f(_ngram_counts(target, 1), _ngram_counts(prediction, 1)),
        "rouge2": _ngram_f(_ngram_counts(target, 2), _ngram_counts(prediction, 2)),
        "rougeL": _lcs_f(target, prediction),
    }


def geometric_mean(rouge1: float, rouge2: float, rouge_l: float) -> float:
    """Return L-Eval's ROUGE summary: the cube root of the product of the three scores."""
    return (rouge1 * rouge2 * rouge_l) ** (1.0 / 3.0)


def best_rouge(prediction: str, references: Sequence[str], profile: str = OFFICIAL) -> dict[str, float]:
    """Return 100 × F for each ROUGE type, each maximised over the references separately."""
    if not references:
        raise ValueError("ROUGE needs at least one reference")
    prediction_tokens = rouge_tokens(prediction, profile)
    per_reference = [rouge_f_from_tokens(rouge_tokens(ref, profile), prediction_tokens) for ref in references]
    # L-Eval multiplies by 100 before taking the max; keep that order for identical floats.
    return {key: max(scores[key] * 100 for scores in per_reference) for key in ROUGE_TYPES}


def rouge_l(prediction: str, reference: str, profile: str = OFFICIAL) -> float:
    """Return 100 × the ROUGE-L F-measure of one prediction against one reference."""
    return _lcs_f(rouge_tokens(reference, profile), rouge_tokens(prediction, profile)) * 100


def package_rouge(prediction: str, references: Sequence[str]) -> dict[str, float]:
    """Score through the rouge-score package itself (slow; used as baseline and cross-check)."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=False)
    per_reference = [scorer.score(ref, prediction) for ref in references]
    return {key: max(scores[key].fmeasure * 100 for scores in per_reference) for key in ROUGE_TYPES}
