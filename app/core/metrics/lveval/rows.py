"""Score one LV-Eval row, any dataset, as LV-Eval's evaluation.py does (official) or corrected (fixed).

A row score is in [0, 1]. Where the official profile does something LV-Eval
itself would not (LV-Eval crashes) or does silently, the score carries a note
for the import report and the table.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from app.core.metrics.files import lveval_dataset
from app.core.metrics.lveval import LVEVAL_DATASETS, ROUGE_DATASETS, keyword_f1_checked
from app.core.metrics.lveval.rouge import RougeUnavailable, dureader_fixed, dureader_official
from app.core.metrics.profiles import OFFICIAL, resolve_profile

NOTE_STRING_ANSWERS = "answers is a string, so LV-Eval's loop scores against its first character"
NOTE_NO_ANSWERS = "answers is empty: LV-Eval's loop never runs and the row scores 0"
NOTE_EMPTY_KEYWORDS = ("{field} normalises to nothing: LV-Eval divides by zero here and stops; "
                       "the official profile scores the row 0")
NOTE_ROUGE_RECURSION = ("the rouge package's recursive LCS overflows Python's stack on this row: "
                        "LV-Eval silently scores it 0, and so does the official profile")


@dataclass(frozen=True)
class RowScore:
    value: float
    note: str = ""


def reference_answer(answers: Sequence[str] | str, profile: str) -> str | None:
    """The one answer LV-Eval scores: the first list item, or a string's first character (official)."""
    if isinstance(answers, str):
        if profile == OFFICIAL:
            return answers[:1] or None
        return answers
    return answers[0] if answers else None


def score_row(dataset: str, prediction: str, answers: Sequence[str] | str, gold_ans: str | None = None, *,
              profile: str = OFFICIAL) -> RowScore:
    """Score one row of `<dataset>` (a name with or without its level) against its first answer."""
    profile = resolve_profile(profile)
    name = lveval_dataset(dataset)
    if name not in LVEVAL_DATASETS:
        raise ValueError(f"unknown LV-Eval dataset {name!r}")
    answer = reference_answer(answers, profile)
    note = NOTE_STRING_ANSWERS if isinstance(answers, str) and profile == OFFICIAL else ""
    if answer is None:
        return RowScore(0.0, note or NOTE_NO_ANSWERS)
    if name in ROUGE_DATASETS:
        if profile != OFFICIAL:
            return RowScore(dureader_fixed(prediction, answer), note)
        try:
            return RowScore(dureader_official(prediction, answer), note)
        except RougeUnavailable as error:
            return RowScore(0.0, note or (NOTE_ROUGE_RECURSION if "recursion" in str(error) else ""))
    language, gated = LVEVAL_DATASETS[name]
    score, empty = keyword_f1_checked(prediction, answer, gold_ans, language=language, profile=profile, gated=gated)
    if empty:
        field = "gold_ans" if gold_ans else "the answer (used as keywords when gold_ans is empty)"
        note = NOTE_EMPTY_KEYWORDS.format(field=field)
    return RowScore(score, note)


def input_notes(dataset: str, answers: Sequence[str] | str, gold_ans: str | None) -> list[str]:
    """What the official profile will note about a row whatever its prediction says (for import reports)."""
    name = lveval_dataset(dataset)
    notes = []
    if isinstance(answers, str):
        notes.append(NOTE_STRING_ANSWERS)
    answer = reference_answer(answers, OFFICIAL)
    if answer is None:
        return notes if notes else [NOTE_NO_ANSWERS]
    language, gated = LVEVAL_DATASETS[name]
    if gated and name not in ROUGE_DATASETS:
        _, empty = keyword_f1_checked("", answer, gold_ans, language=language, profile=OFFICIAL, gated=True)
        if empty:
            notes.append(NOTE_EMPTY_KEYWORDS.format(
                field="gold_ans" if gold_ans else "the answer (used as keywords when gold_ans is empty)"))
    return notes
