"""LV-Eval's keyword-recall-gated F1.

Two stages: the prediction must first recall enough of the annotated answer
keywords (``gold_ans``); only then is it scored with token F1 against the
full answer.  The official profile follows LV-Eval's ``metrics.py``; the fixed
profile (LV-Eval's "paper" profile) follows the paper's description.
"""

from __future__ import annotations

import string
import warnings
from collections import Counter
from functools import lru_cache
from typing import Sequence

from app.core.metrics.f1 import f1_from_tokens
from app.core.metrics.files import lveval_dataset
from app.core.metrics.normalize import f1_normalize, has_han, jieba_cut
from app.core.metrics.profiles import OFFICIAL, resolve_profile

# The two word blacklists of LV-Eval's metrics.py.
BLACKLIST_EN = frozenset((
    "and", "to", "of", "in", "her", "was", "with", "for", "it", "from", "is", "that", "his", "he", "by", "she",
    "they", "or", "at", "because", "be", "on", "are", "their", "what", "as", "had", "were", "about", "being",
    "this", "who", "but", "have", "has", "when", "which", "does",
))
BLACKLIST_ZH = frozenset((
    "的", "和", "是", "等", "在", "年", "可以", "为", "与", "‰", "了", "或", "一种", "月", "c", "至", "日", "有",
    "进行", "于", "不", "中", "×", "根据", "小", "由", "亩", "也", "要", "指", "法", "会", "元", "主要", "以及",
    "通过", "首先", "对", "然后", "号", "以", "所", "后", "丁", "包括", "无", "将", "用", "能", "形", "方面",
    "因素", "位于", "而", "从", "到", "一定", "用于", "但", "使用", "让", "具有", "并", "亿元", "万元", "上",
    "类", "基于", "才", "来", "地", "片", "其他", "个", "或者", "变得", "时", "给", "你", "使", "条", "受",
    "已经", "带", "度",
))
_ZH_PUNCTUATION = frozenset(
    string.punctuation
    + "！？｡。＂＃＄％＆＇（）＊＋，－／：；＜＝＞＠［＼］＾＿｀｛｜｝～｟｠｢｣､、〃》「」『』【】〔〕〖〗〘〙〚〛〜〝〞〟〰〾〿–—‘’‛“”„‟…‧﹏."
)

# (language, keyword gate) per LV-Eval dataset, from its config.py.
LVEVAL_DATASETS: dict[str, tuple[str, bool]] = {
    "hotpotwikiqa_mixup": ("en", True),
    "loogle_SD_mixup": ("en", True),
    "loogle_CR_mixup": ("en", True),
    "loogle_MIR_mixup": ("en", True),
    "multifieldqa_en_mixup": ("en", True),
    "multifieldqa_zh_mixup": ("zh", True),
    "factrecall_en": ("en", False),
    "factrecall_zh": ("zh", False),
    "cmrc_mixup": ("zh", True),
    "lic_mixup": ("zh", True),
    # Not keyword F1: ROUGE-L over the blacklist (see lveval_rouge); Chinese, no keyword gate.
    "dureader_mixup": ("zh", False),
}
ROUGE_DATASETS = frozenset({"dureader_mixup"})

# Recall thresholds: the code and the paper swap them.
THRESHOLDS = {OFFICIAL: {"en": 0.2, "zh": 0.4}, "fixed": {"en": 0.4, "zh": 0.2}}


class KeywordWarning(UserWarning):
    """Raised (as a warning) when the answer keywords normalise to nothing."""


def dataset_name(task: str) -> str:
    """Strip LV-Eval's length suffix: "cmrc_mixup_16k" gives "cmrc_mixup"."""
    return lveval_dataset(task)


def dataset_settings(task: str, answer: str = "") -> tuple[str, bool]:
    """Return (language, gated) for a task; unknown tasks are gated, Chinese if the answer has Han text."""
    known = LVEVAL_DATASETS.get(dataset_name(task))
    if known:
        return known
    return ("zh" if has_han(answer) else "en"), True


def normalize_zh(text: str) -> str:
    """Lowercase, drop ASCII and Chinese punctuation, remove all whitespace."""
    without_punctuation = "".join(ch for ch in text.lower() if ch not in _ZH_PUNCTUATION)
    return "".join(without_punctuation.split())


@lru_cache(maxsize=1 << 16)
def _tokens_zh(text: str) -> tuple[str, ...]:
    # Cached: answers and keywords repeat across levels and profiles, and jieba dominates the cost.
    return tuple(token for token in (normalize_zh(piece) for piece in jieba_cut(text)) if token)


def tokens_en(text: str) -> list[str]:
    return f1_normalize(text).split()


def tokens_zh(text: str) -> list[str]:
    """Segment with jieba, normalise each piece and drop the empty ones."""
    return list(_tokens_zh(text))


def _as_text(value: str | Sequence[str] | None) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return " ".join(str(v) for v in value)


def keyword_f1(prediction: str, answer: str, gold_ans: str | Sequence[str] | None = None, *,
               language: str = "en", profile: str = OFFICIAL, gated: bool = True) -> float:
    """Return LV-Eval's keyword-gated F1 in [0, 1] for one prediction and its first answer."""
    score, empty_keywords = keyword_f1_checked(prediction, answer, gold_ans, language=language, profile=profile,
                                               gated=gated)
    if empty_keywords:
        # Upstream divides by zero here.
        warnings.warn(f"the answer keywords of {answer!r} normalise to nothing; scoring 0", KeywordWarning,
                      stacklevel=2)
    return score


def keyword_f1_checked(prediction: str, answer: str, gold_ans: str | Sequence[str] | None = None, *,
                       language: str = "en", profile: str = OFFICIAL, gated: bool = True) -> tuple[float, bool]:
    """Return (keyword F1, whether the keywords normalised to nothing and the row scored 0 for it)."""
    profile = resolve_profile(profile)
    if language not in ("en", "zh"):
        raise ValueError(f"language must be 'en' or 'zh', not {language!r}")
    tokenize, blacklist = (tokens_en, BLACKLIST_EN) if language == "en" else (tokens_zh, BLACKLIST_ZH)
    prediction_tokens = tokenize(prediction)
    answer_tokens = tokenize(answer)
    keywords = _as_text(gold_ans)
    if language == "zh" and not keywords:
        keywords = answer  # upstream's Chinese scorer falls back to the answer; English skips the gate
    if gated and keywords:
        keyword_tokens = tokenize(keywords)
        if not keyword_tokens:
            return 0.0, True  # upstream divides by zero here
        matched = Counter(prediction_tokens) & Counter(keyword_tokens)
        hits = sum(count for token, count in matched.items() if token not in blacklist)
        if profile == OFFICIAL:
            denominator = len(keyword_tokens)  # blacklisted keywords still count here
        else:
            # Blacklisted keywords can never be recalled, so they leave the denominator too;
            # an all-blacklist keyword list keeps its full length rather than dividing by zero.
            denominator = sum(1 for token in keyword_tokens if token not in blacklist) or len(keyword_tokens)
        if hits / denominator < THRESHOLDS[profile][language]:
            return 0.0, False
    if profile != OFFICIAL:
        prediction_tokens = [t for t in prediction_tokens if t not in blacklist]
        answer_tokens = [t for t in answer_tokens if t not in blacklist]
    return f1_from_tokens(prediction_tokens, answer_tokens), False
