"""Test oracle: an independent re-statement of LV-Eval's reference scorer.

This module restates, in our own code, the algorithms of LV-Eval's
``evaluation.py``, ``config.py`` and ``metrics.py`` (infinigence/LVEval, MIT):
the per-row metrics, the per-file score written to ``eval_result/result.json``
and the dataset x level table written to ``eval_result/result.csv``.  It
mirrors them step by step, quirks included, so that ``app.core.metrics`` can be
checked against it.  It lives in the test folder only and is never imported
by the application.

What it keeps from the reference, on purpose:

* Only the first entry of ``answers`` is scored (the loop ``break``s), and a
  string ``answers`` is iterated, so its first *character* is the reference.
* ``gold_ans`` gates English F1 only when truthy; Chinese falls back to the
  answer.  Keywords that normalise to nothing divide by zero: this oracle
  raises ``ZeroDivisionError`` there, as the reference does.
* dureader_mixup is ROUGE-L from the PyPI ``rouge`` package (1.0.1) over
  jieba words, after the double jieba cut and the blacklist; any exception
  inside ``Rouge.get_scores`` scores 0.0.  That includes the RecursionError of
  the package's recursive LCS back-tracking, which, for ``evaluation.py`` run
  as a script on CPython 3.11 (default limit 1000, 10 frames above the first
  ``_recon`` call), happens once the back-tracking needs more than
  ``RECON_CALL_LIMIT`` nested calls.  The oracle computes that depth itself so
  that its answer does not depend on how deep the test's own stack is.
* The file score is ``round(100 * total / n, 2)`` with ``total`` summed in
  file order, starting from ``0.``; an empty file divides by zero.
* Files are visited in ``custom_sort`` order; ``result.json`` keeps that
  order, ``result.csv`` has one row per dataset in order of first appearance
  and the level columns in order of first appearance (pandas' rule for a list
  of dicts), empty cells for missing levels.

Deliberate simplifications, none of which changes a reported number:

* pandas is not used; :func:`result_csv` writes what
  ``DataFrame(rows).to_csv(index=False)`` writes for these tables (floats in
  their shortest repr, NaN as an empty cell, ``\\n`` line ends).
* Console printing and directory creation are left out.
"""

from __future__ import annotations

import json
import os
import re
import string
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Sequence

import jieba

# --- config.py -----------------------------------------------------------------

# The language of each dataset and the metric config.py assigns it.
DATASET_METRIC_NAME = {
    "hotpotwikiqa_mixup": "qa_f1_score_with_gold_ans",
    "loogle_SD_mixup": "qa_f1_score_with_gold_ans",
    "loogle_CR_mixup": "qa_f1_score_with_gold_ans",
    "loogle_MIR_mixup": "qa_f1_score_with_gold_ans",
    "multifieldqa_en_mixup": "qa_f1_score_with_gold_ans",
    "multifieldqa_zh_mixup": "qa_f1_zh_score_with_gold_ans",
    "factrecall_en": "qa_f1_score",
    "factrecall_zh": "qa_f1_zh_score",
    "cmrc_mixup": "qa_f1_zh_score_with_gold_ans",
    "lic_mixup": "qa_f1_zh_score_with_gold_ans",
    "dureader_mixup": "rouge_zh_score_blacklist",
}
DATASETS = tuple(DATASET_METRIC_NAME)  # config.DATASET_SELECTED order
# The language a dataset is scored in follows from its metric (the *_zh_* ones).
LANGUAGE = {name: ("zh" if "_zh_" in metric else "en") for name, metric in DATASET_METRIC_NAME.items()}
LEVELS = ("16k", "32k", "64k", "128k", "256k")  # config.DATASET_LENGTH_LEVEL

# --- metrics.py ----------------------------------------------------------------

ABANDON_WORDS_EN = (
    "and to of in her was with for it from is that his he by she they or at because be on are their what as "
    "had were about being this who but have has when which does"
).split()
ABANDON_WORDS_ZH = [
    "的", "和", "是", "等", "在", "年", "可以", "为", "与", "‰", "了", "或", "一种", "月", "c", "至", "日", "有",
    "进行", "于", "不", "中", "×", "根据", "小", "由", "亩", "也", "要", "指", "法", "会", "元", "主要", "以及",
    "通过", "首先", "对", "然后", "号", "以", "所", "后", "丁", "包括", "无", "将", "用", "能", "形", "方面",
    "因素", "位于", "而", "从", "到", "一定", "用于", "但", "使用", "让", "具有", "并", "亿元", "万元", "上",
    "类", "基于", "才", "来", "地", "片", "其他", "个", "或者", "变得", "时", "给", "你", "使", "条", "受",
    "已经", "带", "度",
]
_CN_PUNCTUATION = ("！？｡。＂＃＄％＆＇（）＊＋，－／：；＜＝＞＠［＼］＾＿｀｛｜｝～｟｠｢｣､、〃》「」『』【】〔〕〖〗〘〙〚〛〜〝〞〟"
                   "〰〾〿–—‘’‛“”„‟…‧﹏.")
_EN_PUNCT = set(string.punctuation)
_ZH_PUNCT = set(string.punctuation + _CN_PUNCTUATION)

# evaluation.py run as a script: <module>, scorer, rouge_zh_score_blacklist, rouge_score,
# Rouge.get_scores, _get_avg_scores, the metric lambda, rouge_l_summary_level, _union_lcs and
# _recon_lcs are on the stack when _recon first runs: 10 frames of Python's default 1000.
RECON_CALL_LIMIT = 1000 - 10


def normalize_answer(s: str) -> str:
    """Lowercase, drop ASCII punctuation, then the articles, then extra whitespace."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _EN_PUNCT)
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def normalize_zh_answer(s: str) -> str:
    """Lowercase, drop ASCII and Chinese punctuation, then every whitespace character."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _ZH_PUNCT)
    return "".join(s.split())


def _cut(text: str) -> list[str]:
    return list(jieba.cut(text, cut_all=False))


def f1_score(prediction: Sequence[str], ground_truth: Sequence[str]) -> float:
    common = Counter(prediction) & Counter(ground_truth)
    num_same = sum(common.values())
    if num_same == 0:
        return 0  # an int, as upstream
    precision = 1.0 * num_same / len(prediction)
    recall = 1.0 * num_same / len(ground_truth)
    return (2 * precision * recall) / (precision + recall)


def qa_f1_score(prediction: str, ground_truth: str, gold_ans: Any = None) -> float:
    return f1_score(normalize_answer(prediction).split(), normalize_answer(ground_truth).split())


def qa_f1_score_with_gold_ans(prediction: str, ground_truth: str, gold_ans: Any = None) -> float:
    prediction_tokens = normalize_answer(prediction).split()
    ground_truth_tokens = normalize_answer(ground_truth).split()
    if gold_ans:
        gold_tokens = normalize_answer(gold_ans).split()
        common = Counter(prediction_tokens) & Counter(gold_tokens)
        num_same = sum(v for k, v in common.items() if k not in ABANDON_WORDS_EN)
        recall = 1.0 * num_same / len(gold_tokens)  # ZeroDivisionError when the keywords normalise to nothing
        if recall < 0.2:
            return 0.
    return f1_score(prediction_tokens, ground_truth_tokens)


def _zh_tokens(text: str) -> list[str]:
    return [token for token in (normalize_zh_answer(t) for t in _cut(text)) if len(token) > 0]


def qa_f1_zh_score(prediction: str, ground_truth: str, gold_ans: Any = None) -> float:
    return f1_score(_zh_tokens(prediction), _zh_tokens(ground_truth))


def qa_f1_zh_score_with_gold_ans(prediction: str, ground_truth: str, gold_ans: Any = None) -> float:
    prediction_tokens = _zh_tokens(prediction)
    ground_truth_tokens = _zh_tokens(ground_truth)
    if not gold_ans:
        gold_ans = ground_truth
    if gold_ans:
        gold_tokens = _zh_tokens(gold_ans)
        common = Counter(prediction_tokens) & Counter(gold_tokens)
        num_same = sum(v for k, v in common.items() if k not in ABANDON_WORDS_ZH)
        recall = 1.0 * num_same / len(gold_tokens)  # ZeroDivisionError when the keywords normalise to nothing
        if recall < 0.4:
            return 0.
    return f1_score(prediction_tokens, ground_truth_tokens)


def _sentences(text: str) -> list[str]:
    """How ``Rouge._get_avg_scores`` splits a text: on ASCII periods, whitespace squeezed."""
    return [" ".join(part.split()) for part in text.split(".") if len(part) > 0]


def recon_calls(reference_words: Sequence[str], evaluated_words: Sequence[str]) -> int:
    """Count the nested calls the rouge package's recursive LCS back-tracking makes."""
    n, m = len(reference_words), len(evaluated_words)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if reference_words[i - 1] == evaluated_words[j - 1]:
                table[i][j] = table[i - 1][j - 1] + 1
            else:
                table[i][j] = max(table[i - 1][j], table[i][j - 1])
    i, j, calls = n, m, 1
    while i and j:
        if reference_words[i - 1] == evaluated_words[j - 1]:
            i, j = i - 1, j - 1
        elif table[i - 1][j] > table[i][j - 1]:
            i -= 1
        else:
            j -= 1
        calls += 1
    return calls


def rouge_score(prediction: str, ground_truth: str, gold_ans: Any = None) -> float:
    """metrics.rouge_score: the package's averaged ROUGE-L F; any exception scores 0.0."""
    from rouge import Rouge

    hyp, ref = _sentences(prediction), _sentences(ground_truth)
    deepest = max((recon_calls(r.split(" "), h.split(" ")) for r in ref for h in hyp), default=0)
    if deepest > RECON_CALL_LIMIT:
        return 0.0  # upstream: RecursionError, swallowed by its bare except
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, deepest + 500))
    try:
        scores = Rouge().get_scores([prediction], [ground_truth], avg=True)
    except Exception:  # noqa: BLE001 - upstream's bare except (empty hypothesis or reference)
        return 0.0
    finally:
        sys.setrecursionlimit(limit)
    return scores["rouge-l"]["f"]


def rouge_zh_score_blacklist(prediction: str, ground_truth: str, gold_ans: Any = None) -> float:
    prediction = " ".join(_cut(prediction))
    ground_truth = " ".join(_cut(ground_truth))
    prediction_tokens = [normalize_zh_answer(t) for t in _cut(prediction)]
    ground_truth_tokens = [normalize_zh_answer(t) for t in _cut(ground_truth)]
    prediction = " ".join(t for t in prediction_tokens if t not in ABANDON_WORDS_ZH)
    ground_truth = " ".join(t for t in ground_truth_tokens if t not in ABANDON_WORDS_ZH)
    return rouge_score(prediction, ground_truth)


METRICS: dict[str, Callable[..., float]] = {
    "qa_f1_score": qa_f1_score,
    "qa_f1_score_with_gold_ans": qa_f1_score_with_gold_ans,
    "qa_f1_zh_score": qa_f1_zh_score,
    "qa_f1_zh_score_with_gold_ans": qa_f1_zh_score_with_gold_ans,
    "rouge_zh_score_blacklist": rouge_zh_score_blacklist,
}

# --- evaluation.py -----------------------------------------------------------------


def dataset_name(dataset: str) -> str:
    """``re.split('_.{1,3}k', dataset)[0]``: "cmrc_mixup_16k" gives "cmrc_mixup"."""
    return re.split("_.{1,3}k", dataset)[0]


def length_level(dataset: str) -> str:
    return dataset.split("_")[-1]


def custom_sort(name: str) -> tuple:
    letters = re.findall("[a-zA-Z]+", name)
    numbers = re.findall(r"\d+", name)
    return (letters, int(numbers[0])) if numbers else (letters, 0)


def row_score(dataset: str, row: dict) -> float:
    """Score one row as ``scorer`` does: the metric of its dataset on the first answer only."""
    metric = METRICS[DATASET_METRIC_NAME[dataset_name(dataset)]]
    gold_ans = row["gold_ans"] if "gold_ans" in row else None
    score = 0.
    for ground_truth in row["answers"]:
        score = max(score, metric(row["pred"], ground_truth, gold_ans))
        break
    return score


def scorer(dataset: str, rows: Sequence[dict]) -> tuple[float, list[float]]:
    """Return (the result.json number, the per-row scores) for one file's rows."""
    total_score = 0.
    total_sample = 0
    scores = []
    for row in rows:
        total_sample += 1
        score = row_score(dataset, row)
        total_score += score
        scores.append(score)
    return round(100 * total_score / total_sample, 2), scores


def read_rows(path: Path) -> list[dict]:
    """Read a file as evaluation.py does: text mode (universal newlines), one json.loads per line."""
    with open(path, "r", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def evaluate_folder(folder: str | Path) -> dict[str, Any]:
    """Run evaluation.py's main loop on a model folder.

    Returns ``result_json`` (dataset_level -> score, in file order), ``table``
    (dataset -> {level: score}, the rows of result.csv), ``row_scores``
    (dataset_level -> per-row scores) and ``result_json_text`` / ``result_csv_text``,
    the two files exactly as the reference writes them.
    """
    folder = Path(str(folder).rstrip("/"))
    names = [name for name in os.listdir(folder) if (folder / name).is_file()]
    names.sort(key=custom_sort)
    result_json: dict[str, float] = {}
    row_scores: dict[str, list[float]] = {}
    table: dict[str, dict[str, float]] = {}
    for name in names:
        if not name.endswith("jsonl"):
            continue
        dataset = name.split(".")[0]
        score, scores = scorer(dataset, read_rows(folder / name))
        result_json[dataset] = score
        row_scores[dataset] = scores
        table.setdefault(dataset_name(dataset), {})[length_level(dataset)] = score
    return {
        "result_json": result_json,
        "table": table,
        "row_scores": row_scores,
        "result_json_text": json.dumps(result_json, ensure_ascii=False, indent=4),
        "result_csv_text": result_csv(table),
    }


def result_csv(table: dict[str, dict[str, float]]) -> str:
    """Write result.csv as ``pd.DataFrame(rows).to_csv(index=False)`` does for this table."""
    columns: list[str] = []
    for levels in table.values():
        columns.extend(level for level in levels if level not in columns)
    lines = [",".join(["dataset_name", *columns])]
    for name, levels in table.items():
        cells = [repr(float(levels[c])) if c in levels else "" for c in columns]
        lines.append(",".join([name, *cells]))
    return "\n".join(lines) + "\n"


# --- the paper's averages ----------------------------------------------------------


def paper_averages(table: dict[str, dict[str, float]]) -> dict[str, Any]:
    """The averages LV-Eval's README and paper report, from the rounded table.

    ``per_dataset``: each dataset's mean over its levels ("average scores over all
    length levels on each dataset"); ``per_level``: each level's mean over the
    datasets (the "Overall Result" table); ``overall``: the mean over every cell.
    All rounded to 2 decimals.  With a complete table the three agree.
    """
    per_dataset = {name: round(sum(levels.values()) / len(levels), 2) for name, levels in table.items() if levels}
    per_level: dict[str, float] = {}
    for level in LEVELS:
        cells = [levels[level] for levels in table.values() if level in levels]
        if cells:
            per_level[level] = round(sum(cells) / len(cells), 2)
    cells = [value for levels in table.values() for value in levels.values()]
    overall = round(sum(cells) / len(cells), 2) if cells else None
    return {"per_dataset": per_dataset, "per_level": per_level, "overall": overall}
