"""The human ceiling of the LLM rater's agreement needs enough annotators and shared answers for a verdict."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.core.stats.rater_agreement import (
    MIN_CEILING_ANNOTATORS,
    MIN_CEILING_ITEMS,
    rater_agreement,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "judge.md"


def _records(annotators: int, items: int, seed: int = 0):
    """Annotators who agree closely with one another, and a rater who rates at random."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, items)
    records = [{"annotator": f"ann{a}", "system": "s", "document_id": "d", "question_id": str(i),
                "score": int(np.clip(truth[i] + rng.integers(-1, 2), 1, 5))}
               for a in range(annotators) for i in range(items)]
    llm = {("s", "d", str(i)): int(v) for i, v in enumerate(rng.integers(1, 6, items))}
    return records, llm


def test_two_annotators_give_no_verdict_whatever_the_llm_alpha():
    records, llm = _records(2, 150)
    result = rater_agreement(records, llm)
    assert result.llm_alpha is not None and result.ceiling_min is not None  # numbers exist, a verdict does not
    assert result.within_human_range is None
    assert f"2 annotators (needs at least {MIN_CEILING_ANNOTATORS})" in result.ceiling_shortfall


def test_too_few_shared_answers_give_no_verdict():
    records, llm = _records(3, MIN_CEILING_ITEMS - 1)
    result = rater_agreement(records, llm)
    assert result.within_human_range is None
    assert f"{MIN_CEILING_ITEMS - 1} answers scored by two or more annotators" in result.ceiling_shortfall


def test_enough_annotators_and_answers_give_a_verdict():
    records, llm = _records(MIN_CEILING_ANNOTATORS, MIN_CEILING_ITEMS)
    result = rater_agreement(records, llm)
    assert result.ceiling_shortfall is None and result.within_human_range is False


def test_the_docs_state_the_minimum_the_code_applies():
    text = " ".join(DOCS.read_text(encoding="utf-8").split())
    assert (f"at least {MIN_CEILING_ANNOTATORS} annotators and {MIN_CEILING_ITEMS} answers scored by two or more"
            in text)


@pytest.mark.parametrize("annotators", [0, 1])
def test_no_annotators_to_compare_give_no_verdict(annotators):
    records, llm = _records(annotators, 40)
    assert rater_agreement(records, llm).within_human_range is None
