"""Test oracle: an independent re-statement of L-Eval's reference scorers.

This module restates, in our own code, the algorithms of L-Eval's
``Evaluation/auto_eval.py``, ``em.py``, ``f1.py`` and ``rouge.py``
(OpenLMLab/LEval, GPL-3.0; the SCROLLS-derived f1/rouge helpers it ships).
It deliberately mirrors their behaviour step by step, quirks included, so
that ``app.core.metrics`` can be checked against it on every published
prediction file.  It lives in the test folder only and is never imported by
the application.

Deliberate simplifications, none of which changes a reported number:

* ``rouge.postprocess_text`` re-joins NLTK sentences with newlines.  Only
  whitespace between sentences changes, and rouge-score's tokenizer treats
  every non-alphanumeric run as a separator, so rouge1/rouge2/rougeL are
  unaffected (rougeLsum, which it exists for, is not reported by L-Eval).
* Console printing, the ``datasets.Metric`` wrapper and the process pool are
  left out; the arithmetic and its order are kept.
"""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from pathlib import Path

from rouge_score import rouge_scorer

_OPTION_TASKS = ("coursera", "quality", "tpo")  # Baselines/LEval_config.py
_SUPPORTED = ("f1", "rouge", "exam")
_ASCII_PUNCT = set(string.punctuation)


# --- em.py -----------------------------------------------------------------

def em_normalize(text: str) -> str:
    """Drop ASCII punctuation, then the articles, then extra whitespace (no lowercasing)."""
    text = "".join(ch for ch in text if ch not in _ASCII_PUNCT)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def em_score(prediction: str, ground_truth: str) -> float:
    """Score one prediction against one answer the way em.exact_match_score does."""
    norm_gt = em_normalize(ground_truth)
    is_option_answer = all(ch in "ABCD" for ch in norm_gt)
    if is_option_answer:
        norm_pred = em_normalize(prediction)
        if norm_pred == norm_gt:
            return 1
        if set(norm_pred).issubset(set(norm_gt)):
            return 0.25
        return 0
    try:
        return int(float(prediction) == float(ground_truth))
    except ValueError:
        squeezed_gt = ground_truth.lower().replace(" ", "")
        return int(squeezed_gt in prediction.lower().replace(" ", ""))


def compute_exact_match(predictions: list[str], references: list[list[str]]) -> float:
    total = 0
    for prediction, answers in zip(predictions, references):
        total += max(em_score(prediction, answer) for answer in answers)
    return 100.0 * total / len(predictions)


# --- f1.py -------------------------------------------------------------------

def f1_normalize(text: str) -> str:
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _ASCII_PUNCT)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def f1_pair(prediction: str, ground_truth: str) -> float:
    pred_tokens = f1_normalize(prediction).split()
    gt_tokens = f1_normalize(ground_truth).split()
    overlap = sum((Counter(pred_tokens) & Counter(gt_tokens)).values())
    if overlap == 0:
        return 0
    precision = 1.0 * overlap / len(pred_tokens)
    recall = 1.0 * overlap / len(gt_tokens)
    return (2 * precision * recall) / (precision + recall)


def compute_f1(predictions: list[str], references: list[list[str]]) -> float:
    total = 0
    for prediction, answers in zip(predictions, references):
        total += max(f1_pair(prediction, answer) for answer in answers)
    return 100.0 * total / len(predictions)


# --- rouge.py + the auto_eval aggregation -----------------------------------

_SCORER = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=False)


def compute_rouge_rows(predictions: list[str], references: list[list[str]]) -> list[dict[str, float]]:
    """Per row: fmeasure x 100 for each type, maximised over the references type by type."""
    rows = []
    for prediction, answers in zip(predictions, references):
        scored = [_SCORER.score(answer, prediction) for answer in answers]
        rows.append({key: max(s[key].fmeasure * 100 for s in scored) for key in ("rouge1", "rouge2", "rougeL")})
    return rows


def compute_rouge(predictions: list[str], references: list[list[str]],
                  rows_out: list | None = None) -> dict[str, float]:
    rows = compute_rouge_rows(predictions, references)
    if rows_out is not None:
        rows_out.extend(rows)
    result = {key: sum(row[key] for row in rows) / len(rows) for key in ("rouge1", "rouge2", "rougeL")}
    result["geometric_mean"] = (result["rouge1"] * result["rouge2"] * result["rougeL"]) ** (1.0 / 3.0)
    return result


# --- auto_eval.py pre-processing ---------------------------------------------

def process_output_mc(response: str, coursera: bool) -> str:
    if len(response.strip()) == 0:
        return "None"
    if response in "ABCD":  # a substring test, so "" and "BC" pass too
        return response
    if not coursera:
        for ch in response:
            if ch in "ABCD":
                return ch
    letters = ""
    rest = response
    for ch in response:
        if ch not in "ABCD":
            break
        letters += ch
        rest = rest[1:]
    if len(letters) > 1:
        return "".join(sorted(set(letters)))
    rest = rest.split("Question")[0]
    letters += " ".join(re.findall(r"\s*[A-Z](?=[\s.)])", rest)).strip()
    letters = "".join(sorted(set(re.sub(r"[^A-D]", "", letters))))
    if not letters:
        seen = False
        for ch in rest:
            if ch in "ABCD":
                letters += ch
                seen = True
            elif seen:
                break
    return letters or "A"


def process_gt_mc(answer: str) -> str:
    return re.sub(r"[^A-D]", "", answer.split()[0]) or "A"


def process_math(text: str) -> str:
    match = re.search(r"The answer is (\S+)", text)
    if match:
        token = match.group(1)
    else:
        token = ""
        for word in reversed(text.split("\n\n")[0].split(" ")):
            if any(ch.isdigit() for ch in word):
                token = word
                break
    digits = ""
    for ch in token:
        if ch.isdigit():
            digits += ch
        if ch == ".":
            break
    return digits


def process_gt_code(text: str) -> str:
    text = re.sub(r"\s+", " ", text)
    for old, new in ((",", ""), ("'", ""), ("\\", ""), (".0", ""), ("] [", "]["), ("[ [", "[["), ("] ]", "]]")):
        text = text.replace(old, new)
    return text


def process_output_code(response: str, gt: str) -> str:
    keep = len(gt.split()) + 3
    response = process_gt_code(response)
    for filler in ("will be", "of the code", "is", "would be", "the value of", "the result of", "printed"):
        response = response.replace(filler, "")
    if "the final output" in response:
        words = re.split(r"\s+", response.split("the final output")[-1])[:keep]
    else:
        words = re.split(r"\s+", response)[-keep:]
    return " ".join(words)


def process_gt_judge(text: str) -> list[str]:
    parts = text.lower().split("[fact:")
    return [parts[0].strip(), parts[1][:-1].strip()]  # IndexError without "[fact:"


def process_output_judge(response: str) -> list[str]:
    found = []
    for part in process_gt_judge(response):
        verdict = "<error>"
        for word in part.split():
            if "true" in word:
                verdict = "true"
                break
            if "false" in word:
                verdict = "false"
                break
        found.append(verdict)
    return found


# --- the driver (auto_eval.py __main__) --------------------------------------

def _round_all(metrics: dict[str, float]) -> dict[str, float]:
    return {key: round(value, 4) for key, value in metrics.items()}


def evaluate_pred_file(path: Path, dispatch_name: str, rouge_rows_out: list | None = None) -> dict[str, float]:
    """Score one L-Eval prediction file; ``dispatch_name`` plays the role of ``--pred_file``.

    Pass a path relative to the data root: the reference dispatches on
    substrings of the path, so an absolute path could mis-route a file.
    ``rouge_rows_out`` receives the per-row ROUGE scores of a rouge file.
    """
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    pred_key = next(key for key in rows[0] if "_pred" in key)
    with_options = any(task in dispatch_name for task in _OPTION_TASKS)
    grouped = "topic_retrieval_longchat" in dispatch_name or "sci_fi" in dispatch_name
    n_groups = 3 if "topic_retrieval_longchat" in dispatch_name else 2
    predictions: list = [[] for _ in range(n_groups)] if grouped else []
    references: list = [[] for _ in range(n_groups)] if grouped else []
    config_name = None
    for i, row in enumerate(rows):
        if row["evaluation"] not in _SUPPORTED:
            continue
        pred, gt = row[pred_key], row["gt"]
        if with_options:
            references.append([process_gt_mc(gt)])
            predictions.append(process_output_mc(pred, "coursera" in dispatch_name))
        elif "gsm" in dispatch_name:
            references.append([process_math(gt)])
            predictions.append(process_math(pred))
        elif "codeU" in dispatch_name:
            references.append([process_gt_code(gt)])
            predictions.append(process_output_code(pred, gt))
        elif "topic_retrieval_longchat" in dispatch_name:
            references[i % 3].append([gt])
            predictions[i % 3].append(pred)
        elif "sci_fi" in dispatch_name:
            for group, (ref, out) in enumerate(zip(process_gt_judge(gt), process_output_judge(pred))):
                references[group].append([ref])
                predictions[group].append(out)
        else:
            references.append([gt])
            predictions.append(pred)
        config_name = row["evaluation"]
    assert config_name is not None

    if config_name == "exam" and grouped:
        # Each group's score is rounded before the unweighted average, as upstream does.
        group_scores = [round(compute_exact_match(p, r), 4) for p, r in zip(predictions, references)]
        return {"exact_match": round(sum(group_scores) / n_groups, 4)}
    if config_name == "exam":
        return _round_all({"exact_match": compute_exact_match(predictions, references)})
    if config_name == "f1":
        return _round_all({"f1": compute_f1(predictions, references)})
    rouge = compute_rouge(predictions, references, rouge_rows_out)
    return _round_all({
        "rouge1": rouge["rouge1"], "rouge2": rouge["rouge2"], "rougeL": rouge["rougeL"],
        "rouge_geo": rouge["geometric_mean"],
    })
