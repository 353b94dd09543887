"""Test oracle: an independent re-statement of LongBench's scoring scripts.

Restates, step by step and quirks included, THUDM/LongBench at commit 2e00731f8d0bff23dc4325161044d0ed8af94c1e
(MIT): ``LongBench/metrics.py`` (the per-answer metrics), ``LongBench/eval.py`` (``scorer``, ``scorer_e`` and the
``result.json`` it writes) and ``result.py`` (LongBench v2's ``result.txt``), so that app.core.metrics.longbench
can be checked against it. It lives in the test folder only and is never imported by the application.

What it keeps from the reference, on purpose:

* ``classification_score`` removes items from the list it iterates (the class after each removed one is skipped);
  ``retrieval_score`` indexes the first "Paragraph N" of the answer (IndexError without one).
* ``rouge_score`` is the PyPI ``rouge`` package (1.0.1) itself, any exception scoring 0.0. Its LCS back-tracking
  recurses; as eval.py runs as a script on CPython's default limit (1000), 9 frames sit above the first
  ``_recon`` call for ``rouge_score`` and 10 for ``rouge_zh_score``. The oracle counts the nested calls itself
  (tests.support.lveval_reference.recon_calls) so its answer does not depend on the test's own stack depth.
* ``fuzz.ratio`` is fuzzywuzzy's as LongBench's requirements install it, without python-Levenshtein: 100 for equal
  texts, 0 when one is empty, else ``int(round(100 * difflib.SequenceMatcher(None, a, b).ratio()))``.
* ``eval.py`` keeps the last row's ``all_classes`` for the whole file; ``scorer`` sums in file order from ``0.``;
  ``scorer_e`` buckets by ``length`` and takes ``numpy.mean`` (NaN for an empty bucket).

Deliberate simplifications, none of which changes a reported number:

* ``os.listdir``'s order is replaced by sorted names (result.json and result.txt are compared by content).
* Console printing and folder creation are left out.
"""
from __future__ import annotations

import difflib
import json
import os
import re
import string
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Sequence

import jieba

from tests.support.lveval_reference import recon_calls

# --- metrics.py --------------------------------------------------------------------------------------------

_CN_PUNCTUATION = ("！？｡。＂＃＄％＆＇（）＊＋，－／：；＜＝＞＠［＼］＾＿｀｛｜｝～｟｠｢｣､、〃》「」『』【】〔〕〖〗〘〙〚〛〜〝〞〟"
                   "〰〾〿–—‘’‛“”„‟…‧﹏.")
RECON_LIMIT_EN = 1000 - 9  # eval.py: <module>, scorer, rouge_score, get_scores, _get_avg_scores, lambda,
RECON_LIMIT_ZH = 1000 - 10  # rouge_l_summary_level, _union_lcs, _recon_lcs; rouge_zh_score adds one


def normalize_answer(s: str) -> str:
    s = s.lower()
    exclude = set(string.punctuation)
    s = "".join(ch for ch in s if ch not in exclude)
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def normalize_zh_answer(s: str) -> str:
    s = s.lower()
    all_punctuation = set(string.punctuation + _CN_PUNCTUATION)
    s = "".join(ch for ch in s if ch not in all_punctuation)
    return "".join(s.split())


def count_score(prediction: str, ground_truth: str, **kwargs: Any) -> float:
    numbers = re.findall(r"\d+", prediction)
    right_num = sum(1 for number in numbers if str(number) == str(ground_truth))
    return float(0.0 if len(numbers) == 0 else right_num / len(numbers))


def _paragraph_score(pattern: str, prediction: str, ground_truth: str) -> float:
    ground_truth_id = re.findall(pattern, ground_truth)[0]  # IndexError without one, as upstream
    numbers = re.findall(r"\d+", prediction)
    right_num = sum(1 for number in numbers if str(number) == str(ground_truth_id))
    return float(0.0 if len(numbers) == 0 else right_num / len(numbers))


def retrieval_score(prediction: str, ground_truth: str, **kwargs: Any) -> float:
    return _paragraph_score(r"Paragraph (\d+)", prediction, ground_truth)


def retrieval_zh_score(prediction: str, ground_truth: str, **kwargs: Any) -> float:
    return _paragraph_score(r"段落(\d+)", prediction, ground_truth)


def fuzz_ratio(s1: str, s2: str) -> int:
    """fuzzywuzzy 0.18.0's fuzz.ratio without python-Levenshtein (its decorators, then difflib)."""
    if s1 is None or s2 is None:
        return 0
    if s1 == s2:
        return 100
    if len(s1) == 0 or len(s2) == 0:
        return 0
    return int(round(100 * difflib.SequenceMatcher(None, s1, s2).ratio()))


def code_sim_score(prediction: str, ground_truth: str, **kwargs: Any) -> float:
    all_lines = prediction.lstrip("\n").split("\n")
    prediction = ""
    for line in all_lines:
        if ("`" not in line) and ("#" not in line) and ("//" not in line):
            prediction = line
            break
    return fuzz_ratio(prediction, ground_truth) / 100


def classification_score(prediction: str, ground_truth: str, **kwargs: Any) -> float:
    em_match_list = []
    for class_name in kwargs["all_classes"]:
        if class_name in prediction:
            em_match_list.append(class_name)
    for match_term in em_match_list:  # removing from the list being iterated: upstream's skip, kept
        if match_term in ground_truth and match_term != ground_truth:
            em_match_list.remove(match_term)
    if ground_truth in em_match_list:
        return 1.0 / len(em_match_list)
    return 0.0


def _sentences(text: str) -> list[str]:
    return [" ".join(part.split()) for part in text.split(".") if len(part) > 0]


def _rouge(prediction: str, ground_truth: str, limit: int) -> float:
    from rouge import Rouge

    hyp, ref = _sentences(prediction), _sentences(ground_truth)
    deepest = max((recon_calls(r.split(" "), h.split(" ")) for r in ref for h in hyp), default=0)
    if deepest > limit:
        return 0.0  # upstream: RecursionError, swallowed by its bare except
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, deepest + 500))
    try:
        scores = Rouge().get_scores([prediction], [ground_truth], avg=True)
    except Exception:  # noqa: BLE001 - upstream's bare except (an empty hypothesis or reference)
        return 0.0
    finally:
        sys.setrecursionlimit(old)
    return scores["rouge-l"]["f"]


def rouge_score(prediction: str, ground_truth: str, **kwargs: Any) -> float:
    return _rouge(prediction, ground_truth, RECON_LIMIT_EN)


def rouge_zh_score(prediction: str, ground_truth: str, **kwargs: Any) -> float:
    prediction = " ".join(list(jieba.cut(prediction, cut_all=False)))
    ground_truth = " ".join(list(jieba.cut(ground_truth, cut_all=False)))
    return _rouge(prediction, ground_truth, RECON_LIMIT_ZH)


def f1_score(prediction: Sequence[str], ground_truth: Sequence[str], **kwargs: Any) -> float:
    common = Counter(prediction) & Counter(ground_truth)
    num_same = sum(common.values())
    if num_same == 0:
        return 0  # an int, as upstream
    precision = 1.0 * num_same / len(prediction)
    recall = 1.0 * num_same / len(ground_truth)
    return (2 * precision * recall) / (precision + recall)


def qa_f1_score(prediction: str, ground_truth: str, **kwargs: Any) -> float:
    return f1_score(normalize_answer(prediction).split(), normalize_answer(ground_truth).split())


def qa_f1_zh_score(prediction: str, ground_truth: str, **kwargs: Any) -> float:
    prediction_tokens = [normalize_zh_answer(t) for t in jieba.cut(prediction, cut_all=False)]
    ground_truth_tokens = [normalize_zh_answer(t) for t in jieba.cut(ground_truth, cut_all=False)]
    return f1_score([t for t in prediction_tokens if len(t) > 0], [t for t in ground_truth_tokens if len(t) > 0])


# --- eval.py -----------------------------------------------------------------------------------------------

DATASET2METRIC: dict[str, Callable[..., float]] = {
    "narrativeqa": qa_f1_score, "qasper": qa_f1_score, "multifieldqa_en": qa_f1_score,
    "multifieldqa_zh": qa_f1_zh_score, "hotpotqa": qa_f1_score, "2wikimqa": qa_f1_score, "musique": qa_f1_score,
    "dureader": rouge_zh_score, "gov_report": rouge_score, "qmsum": rouge_score, "multi_news": rouge_score,
    "vcsum": rouge_zh_score, "trec": classification_score, "triviaqa": qa_f1_score, "samsum": rouge_score,
    "lsht": classification_score, "passage_retrieval_en": retrieval_score, "passage_count": count_score,
    "passage_retrieval_zh": retrieval_zh_score, "lcc": code_sim_score, "repobench-p": code_sim_score,
}
FIRST_LINE = ("trec", "triviaqa", "samsum", "lsht")


def row_score(dataset: str, prediction: str, ground_truths: Sequence[str], all_classes: Any) -> float:
    score = 0.
    if dataset in FIRST_LINE:
        prediction = prediction.lstrip("\n").split("\n")[0]
    for ground_truth in ground_truths:
        score = max(score, DATASET2METRIC[dataset](prediction, ground_truth, all_classes=all_classes))
    return score


def scorer(dataset: str, predictions, answers, all_classes) -> float:
    total_score = 0.
    for prediction, ground_truths in zip(predictions, answers):
        total_score += row_score(dataset, prediction, ground_truths, all_classes)
    return round(100 * total_score / len(predictions), 2)


def scorer_e(dataset: str, predictions, answers, lengths, all_classes) -> dict:
    import numpy as np

    scores: dict[str, list[float]] = {"0-4k": [], "4-8k": [], "8k+": []}
    for prediction, ground_truths, length in zip(predictions, answers, lengths):
        score = row_score(dataset, prediction, ground_truths, all_classes)
        if length < 4000:
            scores["0-4k"].append(score)
        elif length < 8000:
            scores["4-8k"].append(score)
        else:
            scores["8k+"].append(score)
    import warnings

    result = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's "Mean of empty slice": NaN, as upstream
        for key in scores:
            result[key] = round(100 * np.mean(scores[key]), 2)
    return result


def read_file(path: Path):
    """eval.py's reading: text mode, one json.loads per line; the last row's all_classes stays."""
    predictions, answers, lengths = [], [], []
    all_classes = None
    with open(path, "r", encoding="utf-8") as f:
        for line in f:
            data = json.loads(line)
            predictions.append(data["pred"])
            answers.append(data["answers"])
            all_classes = data["all_classes"]
            if "length" in data:
                lengths.append(data["length"])
    return predictions, answers, lengths, all_classes


def evaluate_model(folder: str | Path, *, e: bool = False) -> dict[str, Any]:
    """eval.py's main loop on one model folder: {dataset: score} (dict of buckets with --e)."""
    folder = Path(folder)
    scores: dict[str, Any] = {}
    for filename in sorted(os.listdir(folder)):
        if not filename.endswith("jsonl"):
            continue
        dataset = filename.split(".")[0]
        predictions, answers, lengths, all_classes = read_file(folder / filename)
        if e:
            scores[dataset] = scorer_e(dataset, predictions, answers, lengths, all_classes)
        else:
            scores[dataset] = scorer(dataset, predictions, answers, all_classes)
    return scores


def result_json_text(scores: dict[str, Any]) -> str:
    """result.json as eval.py writes it, with the datasets by name (eval.py: os.listdir's order)."""
    return json.dumps({k: scores[k] for k in sorted(scores)}, ensure_ascii=False, indent=4)


def canonical_result_json(text: str) -> str:
    """A result.json eval.py wrote, its datasets sorted by name and nothing else changed (NaN stays NaN)."""
    return result_json_text(json.loads(text))


# --- result.py (LongBench v2) ---------------------------------------------------------------------------


def v2_line(name: str, pred_data: list[dict]) -> str:
    easy = hard = short = medium = long = 0
    easy_acc = hard_acc = short_acc = medium_acc = long_acc = 0
    for pred in pred_data:
        acc = int(pred["judge"])
        if pred["difficulty"] == "easy":
            easy += 1
            easy_acc += acc
        else:
            hard += 1
            hard_acc += acc
        if pred["length"] == "short":
            short += 1
            short_acc += acc
        elif pred["length"] == "medium":
            medium += 1
            medium_acc += acc
        else:
            long += 1
            long_acc += acc
    return "\t".join([name, str(round(100 * (easy_acc + hard_acc) / len(pred_data), 1)),
                      str(round(100 * easy_acc / easy, 1)), str(round(100 * hard_acc / hard, 1)),
                      str(round(100 * short_acc / short, 1)), str(round(100 * medium_acc / medium, 1)),
                      str(round(100 * long_acc / long, 1))])


def v2_result_txt(folder: str | Path) -> str:
    """result.py on a results folder: each file read as one JSON document, else as JSON lines; models by name."""
    folder = Path(folder)
    output = ["Model\tOverall\tEasy\tHard\tShort\tMedium\tLong"]
    for file in sorted(os.listdir(folder)):
        filename = folder / file
        try:
            pred_data = json.load(open(filename, encoding="utf-8"))
        except Exception:  # noqa: BLE001 - upstream's fallback to JSON lines
            pred_data = [json.loads(line) for line in open(filename, encoding="utf-8")]
        output.append(v2_line(".".join(file.split(".")[:-1]), pred_data))
    return "\n".join(output)


def canonical_result_txt(text: str) -> str:
    """A result.txt result.py wrote, its model lines sorted by name."""
    header, *lines = text.split("\n")
    return "\n".join([header, *sorted(lines)])
