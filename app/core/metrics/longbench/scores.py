"""LongBench's per-row metrics (LongBench/metrics.py) and eval.py's row score: the best over a row's answers.

Restated from THUDM/LongBench, LongBench/metrics.py and LongBench/eval.py at commit
2e00731f8d0bff23dc4325161044d0ed8af94c1e. The `official` profile reproduces them bit for bit, quirks
included; `fixed` corrects the quirks listed in app/core/metrics/longbench/quirks.py. Token F1 and
Chinese tokens are the rules LV-Eval's metrics share with LongBench's (LV-Eval's metrics.py grew from
these), so they have one owner: app.core.metrics.f1 and app.core.metrics.lveval.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from app.core.metrics.f1 import f1_from_tokens
from app.core.metrics.longbench import DATASETS, FIRST_LINE_DATASETS
from app.core.metrics.lveval import tokens_zh
from app.core.metrics.lveval.rouge import RougeUnavailable, rouge_l
from app.core.metrics.normalize import f1_normalize, jieba_cut
from app.core.metrics.profiles import OFFICIAL, resolve_profile

# The `rouge` package back-tracks its LCS recursively. eval.py run as a script on CPython's default recursion
# limit (1000) has 9 frames above the first `_recon` call for rouge_score (English) and 10 for rouge_zh_score,
# which calls rouge_score: past that many nested calls RecursionError is raised, and rouge_score's bare except
# scores the row 0. (Measured against eval.py itself; tests/services/test_longbench_reference.py.)
RECON_CALLS_EN = 1000 - 9
RECON_CALLS_ZH = 1000 - 10
_UNLIMITED = 1 << 62
_DIGITS = re.compile(r"\d+")
_PARAGRAPH_EN = re.compile(r"Paragraph (\d+)")
_PARAGRAPH_ZH = re.compile(r"段落(\d+)")

NOTE_NO_PARAGRAPH = ("the answer names no paragraph ({pattern}): eval.py stops here with an IndexError; "
                     "the row scores 0")
NOTE_ROUGE_RECURSION = ("the rouge package's recursive LCS overflows Python's stack on this row: eval.py's "
                        "rouge_score silently scores it 0, and so does the official profile")


class NoParagraph(ValueError):
    """retrieval_score's answer names no paragraph: metrics.py indexes an empty list."""


@dataclass(frozen=True)
class RowScore:
    value: float
    note: str = ""


def qa_f1_score(prediction: str, answer: str) -> float:
    """SQuAD-style F1 over normalize_answer's words (the rule of app.core.metrics.f1)."""
    return f1_from_tokens(f1_normalize(prediction).split(), f1_normalize(answer).split())


def qa_f1_zh_score(prediction: str, answer: str) -> float:
    """F1 over jieba's words, each normalised (Chinese and ASCII punctuation and spaces dropped), empty ones left out."""
    return f1_from_tokens(tokens_zh(prediction), tokens_zh(answer))


def _rouge(prediction: str, answer: str, profile: str, call_limit: int) -> tuple[float, bool]:
    """(the package's ROUGE-L F, or 0 where it raises; whether it raised for its recursion limit)."""
    limit = call_limit if resolve_profile(profile) == OFFICIAL else _UNLIMITED
    try:
        return rouge_l(prediction, answer, call_limit=limit), False
    except RougeUnavailable as error:
        return 0.0, "recursion" in str(error)


def _jieba_words(text: str) -> str:
    return " ".join(jieba_cut(text))


def rouge_score(prediction: str, answer: str, *, profile: str = OFFICIAL) -> float:
    """The `rouge` package's ROUGE-L F (sentences split on "."; words on spaces, as they are); 0 where it raises."""
    return _rouge(prediction, answer, profile, RECON_CALLS_EN)[0]


def rouge_zh_score(prediction: str, answer: str, *, profile: str = OFFICIAL) -> float:
    """rouge_score over jieba's words joined by spaces."""
    return _rouge(_jieba_words(prediction), _jieba_words(answer), profile, RECON_CALLS_ZH)[0]


def classification_score(prediction: str, answer: str, all_classes: Sequence[str], *, profile: str = OFFICIAL) -> float:
    """1/k when the answer is among the k classes named in the prediction once classes inside the answer are dropped.

    metrics.py drops them while iterating the same list, so the class after each dropped one is never looked at
    (official); fixed looks at every one.
    """
    named = [name for name in all_classes if name in prediction]
    if resolve_profile(profile) == OFFICIAL:
        position = 0
        while position < len(named):  # how Python's list iterator walks a list shrinking under it
            term = named[position]
            if term in answer and term != answer:
                named.remove(term)  # the first equal item, as list.remove does
            position += 1
    else:
        named = [term for term in named if not (term in answer and term != answer)]
    return 1.0 / len(named) if answer in named else 0.0


def _share_equal(prediction: str, wanted: str) -> float:
    numbers = _DIGITS.findall(prediction)
    if not numbers:
        return 0.0
    return float(sum(1 for number in numbers if number == wanted) / len(numbers))


def retrieval_score(prediction: str, answer: str, *, pattern: re.Pattern = _PARAGRAPH_EN) -> float:
    """The share of the prediction's numbers that are the paragraph the answer names."""
    found = pattern.findall(answer)
    if not found:
        raise NoParagraph(pattern.pattern)
    return _share_equal(prediction, found[0])


def count_score(prediction: str, answer: str) -> float:
    """The share of the prediction's numbers that are the answer."""
    return _share_equal(prediction, str(answer))


def fuzz_ratio(first: str, second: str, *, profile: str = OFFICIAL) -> int:
    """fuzzywuzzy's fuzz.ratio: 100 for equal texts, 0 when one is empty, else the rounded similarity.

    LongBench's requirements install fuzzywuzzy without python-Levenshtein, so fuzz.ratio is difflib's
    SequenceMatcher (with its autojunk heuristic, which ignores characters frequent in texts of 200 or more
    characters): the official profile. With python-Levenshtein installed fuzz.ratio is Levenshtein's ratio
    (insertions and deletions over the summed lengths), the exact measure: the fixed profile.
    """
    if first == second:
        return 100
    if not first or not second:
        return 0
    if resolve_profile(profile) == OFFICIAL:
        similarity = SequenceMatcher(None, first, second).ratio()
    else:
        from rapidfuzz.distance import Indel

        total = len(first) + len(second)
        similarity = (total - Indel.distance(first, second)) / total
    return int(round(100 * similarity))


def code_sim_score(prediction: str, answer: str, *, profile: str = OFFICIAL) -> float:
    """fuzz.ratio / 100 of the answer and the prediction's first line without a backtick, # or //."""
    lines = prediction.lstrip("\n").split("\n")
    first = next((line for line in lines if "`" not in line and "#" not in line and "//" not in line), "")
    return fuzz_ratio(first, answer, profile=profile) / 100


def first_line(prediction: str) -> str:
    """eval.py's rule for trec, triviaqa, samsum and lsht: the first line after leading newlines."""
    return prediction.lstrip("\n").split("\n")[0]


def metric_score(dataset: str, prediction: str, answer: str, all_classes: Sequence[str] | None, *,
                 profile: str = OFFICIAL) -> float:
    """One answer's score by the dataset's metric (eval.py's dataset2metric), in [0, 1]."""
    return _scored(dataset, prediction, answer, all_classes, profile)[0]


def _scored(dataset: str, prediction: str, answer: str, all_classes: Sequence[str] | None,
            profile: str) -> tuple[float, str]:
    metric = DATASETS[dataset].metric
    if metric in ("rouge_score", "rouge_zh_score"):
        if metric == "rouge_zh_score":
            value, overflowed = _rouge(_jieba_words(prediction), _jieba_words(answer), profile, RECON_CALLS_ZH)
        else:
            value, overflowed = _rouge(prediction, answer, profile, RECON_CALLS_EN)
        return value, NOTE_ROUGE_RECURSION if overflowed else ""
    if metric == "qa_f1_score":
        return qa_f1_score(prediction, answer), ""
    if metric == "qa_f1_zh_score":
        return qa_f1_zh_score(prediction, answer), ""
    if metric == "classification_score":
        return classification_score(prediction, answer, all_classes or (), profile=profile), ""
    if metric == "retrieval_score":
        return retrieval_score(prediction, answer), ""
    if metric == "retrieval_zh_score":
        return retrieval_score(prediction, answer, pattern=_PARAGRAPH_ZH), ""
    if metric == "count_score":
        return count_score(prediction, answer), ""
    return code_sim_score(prediction, answer, profile=profile), ""


def row_score(dataset: str, prediction: str, answers: Sequence[str], all_classes: Sequence[str] | None = None, *,
              profile: str = OFFICIAL) -> RowScore:
    """eval.py's score of one row: the best over its answers (0 with none), after the first-line rule.

    `all_classes` is what eval.py passes: the file's last row's under `official` (quirk longbench_all_classes).
    A row the reference stops on (an answer naming no paragraph) scores 0 with a note, as does, noted, a ROUGE
    answer the package's recursion limit leaves at 0.
    """
    profile = resolve_profile(profile)
    if dataset not in DATASETS:
        raise ValueError(f"unknown LongBench dataset {dataset!r}")
    if dataset in FIRST_LINE_DATASETS:
        prediction = first_line(prediction)
    score, note = 0.0, ""
    for answer in answers:
        try:
            value, why = _scored(dataset, prediction, answer, all_classes, profile)
        except NoParagraph as missing:
            return RowScore(0.0, NOTE_NO_PARAGRAPH.format(pattern=str(missing)))
        score, note = max(score, value), note or why
    return RowScore(score, note)
