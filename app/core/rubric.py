"""The one owner of the 1–5 scale: its bounds, the test of a valid score and the rubric's wording.

Annotators see the rubric beside every score control, the LLM rater is given the same words, and
every importer, export and API checks scores with `is_score`.
"""
from __future__ import annotations

SCALE_MIN = 1
SCALE_MAX = 5
SCALE = tuple(range(SCALE_MIN, SCALE_MAX + 1))

# Anchored levels, so that annotators (and the rater) agree on what each number means.
RUBRIC = (
    (1, "Poor", "Wrong, irrelevant or unsupported by the document."),
    (2, "Weak", "Touches the question but misses the key point or contains major errors."),
    (3, "Fair", "Partly correct: important omissions or some errors."),
    (4, "Good", "Correct and relevant; small omissions or imprecision."),
    (5, "Excellent", "Correct, complete and faithful to the document; as good as the references."),
)


def is_score(value: object) -> bool:
    """A whole number on the scale (a bool is not a score, though Python counts it as an int)."""
    return isinstance(value, int) and not isinstance(value, bool) and SCALE_MIN <= value <= SCALE_MAX
