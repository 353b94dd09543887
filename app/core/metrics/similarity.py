"""Whether an answer repeats another text: what gives a blind answer away when both are shown.

Identical means equal once whitespace is folded. Near-identical means token F1 (the fixed
profile: Unicode punctuation removed, Chinese segmented) of at least NEAR_IDENTICAL_F1: on
L-Eval's subset a model answer rephrased by a word or two scores above 0.95, while two
independent answers to the same question stay well below it.
"""
from __future__ import annotations

from typing import Literal

from app.core.metrics.f1 import token_f1
from app.core.metrics.profiles import FIXED

NEAR_IDENTICAL_F1 = 0.95
# Names what repeats() decides: stored answers to it (services/studies/references) hold for this rule only.
# Change the version whenever repeats(), token_f1 or the FIXED profile would answer differently.
REPEATS_RULE = f"repeats v1, f1 >= {NEAR_IDENTICAL_F1}"
Match = Literal["identical", "near-identical"]


def repeats(answer: str, other: str, threshold: float = NEAR_IDENTICAL_F1) -> Match | None:
    """Return "identical", "near-identical" or None for an answer and another text."""
    if " ".join(answer.split()) == " ".join(other.split()):
        return "identical" if answer.strip() else None
    if not answer.strip() or not other.strip():
        return None
    return "near-identical" if token_f1(answer, other, FIXED) >= threshold else None
