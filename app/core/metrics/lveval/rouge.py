"""LV-Eval's dureader_mixup metric: ROUGE-L of the PyPI ``rouge`` package (1.0.1) over jieba words.

Re-implemented without recursion, so it is fast and its result does not depend
on the caller's stack; the tests check it against the package itself. LV-Eval's
silent 0 where the package's recursive back-tracking overflows is reproduced
explicitly (:data:`RECON_CALL_LIMIT`).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from app.core.metrics.lveval import BLACKLIST_ZH, normalize_zh, tokens_zh
from app.core.metrics.normalize import jieba_cut

# evaluation.py run as a script has 10 frames above the package's first recursive
# _recon call; CPython's default recursion limit is 1000.
RECON_CALL_LIMIT = 1000 - 10
_F_EPSILON = 1e-8  # the package's guard in F = 2PR / (P + R + 1e-8)


class RougeUnavailable(Exception):
    """The package raises here (empty text, or its recursion overflows); LV-Eval scores 0."""


def sentences(text: str) -> list[str]:
    """Split as ``Rouge.get_scores`` does: on ASCII periods, whitespace squeezed, empty pieces dropped."""
    return [" ".join(part.split()) for part in text.split(".") if len(part) > 0]


def _lcs_words(reference: Sequence[str], evaluated: Sequence[str]) -> tuple[list[str], int]:
    """Return the LCS the package back-tracks (same tie rule) and how many nested calls that takes."""
    n, m = len(reference), len(evaluated)
    previous = [0] * (m + 1)
    table = [previous]
    for i in range(1, n + 1):
        word = reference[i - 1]
        row = [0] * (m + 1)
        for j in range(1, m + 1):
            if word == evaluated[j - 1]:
                row[j] = previous[j - 1] + 1
            else:
                up, left = previous[j], row[j - 1]
                row[j] = up if up > left else left
        table.append(row)
        previous = row
    words: list[str] = []
    i, j, calls = n, m, 1
    while i and j:
        if reference[i - 1] == evaluated[j - 1]:
            words.append(reference[i - 1])
            i, j = i - 1, j - 1
        elif table[i - 1][j] > table[i][j - 1]:
            i -= 1
        else:
            j -= 1
        calls += 1
    words.reverse()
    return words, calls


def rouge_l(hypothesis: str, reference: str, *, call_limit: int = RECON_CALL_LIMIT) -> float:
    """Return the package's ``get_scores([h], [r], avg=True)["rouge-l"]["f"]``; raise RougeUnavailable
    where the package raises. `call_limit`: the nested `_recon` calls the caller's stack allows (the script's
    frames above the first call differ: LV-Eval's evaluation.py leaves 990, LongBench's eval.py 991 or 990)."""
    hyp, ref = sentences(hypothesis), sentences(reference)
    if not hyp or not ref:
        raise RougeUnavailable("empty hypothesis or reference")
    ref_words = [s.split(" ") for s in ref]
    hyp_words = [s.split(" ") for s in hyp]
    m = len({w for s in ref_words for w in s})
    n = len({w for s in hyp_words for w in s})
    union: set[str] = set()
    for r in ref_words:
        for h in hyp_words:
            words, calls = _lcs_words(r, h)
            if calls > call_limit:
                raise RougeUnavailable(f"the package's recursion overflows ({calls} nested calls)")
            union.update(words)
    llcs = len(union)
    r_lcs = llcs / m
    p_lcs = llcs / n
    return 2.0 * ((p_lcs * r_lcs) / (p_lcs + r_lcs + _F_EPSILON))


@lru_cache(maxsize=1 << 14)
def blacklisted_words(text: str) -> str:
    """LV-Eval's dureader text: jieba words, cut twice, normalised, blacklisted words dropped, space-joined."""
    once = " ".join(jieba_cut(text))
    tokens = (normalize_zh(token) for token in jieba_cut(once))
    return " ".join(token for token in tokens if token not in BLACKLIST_ZH)


def dureader_official(prediction: str, answer: str) -> float:
    """rouge_zh_score_blacklist: ROUGE-L F of the package; raise RougeUnavailable where LV-Eval scores 0."""
    return rouge_l(blacklisted_words(prediction), blacklisted_words(answer))


def dureader_fixed(prediction: str, answer: str) -> float:
    """ROUGE-L F over the non-empty, non-blacklisted jieba words: sequences, no set counting, no epsilon."""
    hyp = [t for t in tokens_zh(prediction) if t not in BLACKLIST_ZH]
    ref = [t for t in tokens_zh(answer) if t not in BLACKLIST_ZH]
    if not hyp or not ref:
        return 0.0
    common = len(_lcs_words(ref, hyp)[0])
    if common == 0:
        return 0.0
    precision, recall = common / len(hyp), common / len(ref)
    return 2 * precision * recall / (precision + recall)
