"""Token F1 as in L-Eval (SQuAD style), with a CJK-aware fixed variant."""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from app.core.metrics.normalize import f1_normalize, f1_normalize_unicode, split_han_words
from app.core.metrics.profiles import OFFICIAL, resolve_profile


def f1_tokens(text: str, profile: str = OFFICIAL) -> list[str]:
    """Tokenise for F1: official splits the ASCII-normalised text on whitespace;
    fixed also strips Unicode punctuation and segments Chinese with jieba."""
    if resolve_profile(profile) == OFFICIAL:
        return f1_normalize(text).split()
    return split_han_words(f1_normalize_unicode(text).split())


def f1_from_tokens(prediction_tokens: Sequence[str], reference_tokens: Sequence[str]) -> float:
    """Return multiset-overlap F1 in [0, 1]; 0 when nothing overlaps."""
    overlap = sum((Counter(prediction_tokens) & Counter(reference_tokens)).values())
    if overlap == 0:
        return 0.0
    # Same operation order as the reference so the floats match bit for bit.
    precision = 1.0 * overlap / len(prediction_tokens)
    recall = 1.0 * overlap / len(reference_tokens)
    return (2 * precision * recall) / (precision + recall)


def token_f1(prediction: str, reference: str, profile: str = OFFICIAL) -> float:
    """Return the token F1 of one prediction against one reference, in [0, 1]."""
    return f1_from_tokens(f1_tokens(prediction, profile), f1_tokens(reference, profile))


def best_f1(prediction: str, references: Sequence[str], profile: str = OFFICIAL) -> float:
    """Return 100 × the best F1 over the references."""
    if not references:
        raise ValueError("token F1 needs at least one reference")
    prediction_tokens = f1_tokens(prediction, profile)
    return 100.0 * max(f1_from_tokens(prediction_tokens, f1_tokens(ref, profile)) for ref in references)
