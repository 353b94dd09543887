"""Synthetic LongBench files, built at test time in the layouts LongBench's own scripts write (no LongBench data is
in the repository): data rows as LongBench's data files hold them, model folders as LongBench/pred.py writes them
(`pred/<model>/<dataset>.jsonl`, `pred_e/<model>/<dataset>.jsonl`: `json.dump({"pred", "answers", "all_classes",
"length"}, ensure_ascii=False)` and a newline per row), and LongBench v2 results as its pred.py writes them
(`results/<model>.jsonl`, `<model>_cot.jsonl`: the data row with `response`, `pred`, `judge`, context cut to 1,000
characters).

Every dataset gets the rows that exercise its metric's edges: several answers, empty and punctuation-only
predictions, Chinese and English mixed, the first-line rule, classes inside other classes (metrics.py's skip),
a last row with other classes (eval.py keeps the last row's), answers naming no paragraph's neighbours, code
lines long enough for difflib's autojunk, and ROUGE sentences just inside and just past the `rouge` package's
recursion limit. LongBench-E's rows cover its three buckets and their edges (3999, 4000, 7999, 8000), and one
dataset leaves a bucket empty (eval.py writes NaN).
"""
from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

from app.core.metrics.longbench import DATASETS, E_DATASETS

EN_WORDS = ("orrin vale harbor lantern cedar meadow copper river signal winter archive beacon ledger quarry "
            "falcon garnet hollow island juniper kestrel").split()
ZH_WORDS = ["北京", "上海", "会议", "预算", "项目", "团队", "讨论", "方案", "市场", "数据", "报告", "用户", "产品", "研究"]
TREC_CLASSES = ["city", "state", "city state", "country", "Other location", "location", "Number", "Date", "Abbreviation"]
LSHT_CLASSES = ["体育", "新闻", "体育新闻", "财经", "科技", "教育"]
CODE_ANSWERS = ["        return self.value + 1", "    for item in items:",
                "            result = compute_total(values, weights, offset=1, scale=2.5, normalise=True) "
                "+ compute_total(other_values, other_weights, offset=2, scale=0.5, normalise=False) "
                "- adjust(result_cache[key], factor=3)",
                "        self.assertEqual(response.status_code, 200)"]


def _phrase(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(EN_WORDS) for _ in range(n))


def _zh(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(ZH_WORDS) for _ in range(n))


def _summary(rng: random.Random, sentences: int) -> str:
    return " ".join(_phrase(rng, rng.randint(4, 9)).capitalize() + "." for _ in range(sentences))


def _zh_summary(rng: random.Random, sentences: int) -> str:
    return "".join(_zh(rng, rng.randint(3, 6)) + "。" for _ in range(sentences))


def _answers(dataset: str, rng: random.Random, index: int) -> tuple[list[str], list[str] | None]:
    metric = DATASETS[dataset].metric
    if metric == "qa_f1_score":
        answers = [_phrase(rng, rng.randint(1, 3)).title()]
        if index % 3 == 0:
            answers.append(_phrase(rng, 2))
        return answers, None
    if metric == "qa_f1_zh_score":
        return [_zh(rng, rng.randint(1, 3))] + ([_zh(rng, 2)] if index % 3 == 0 else []), None
    if metric == "rouge_score":
        return [_summary(rng, rng.randint(2, 4))], None
    if metric == "rouge_zh_score":
        return [_zh_summary(rng, rng.randint(2, 3))], None
    if metric == "classification_score":
        classes = TREC_CLASSES if dataset == "trec" else LSHT_CLASSES
        return [rng.choice(classes[2:4] + classes[:2])], list(classes)
    if metric == "retrieval_score":
        return [f"Paragraph {rng.randint(1, 30)}"], None
    if metric == "retrieval_zh_score":
        return [f"段落{rng.randint(1, 30)}"], None
    if metric == "count_score":
        return [str(rng.randint(2, 25))], None
    return [rng.choice(CODE_ANSWERS)], None


E_LENGTHS = (1200, 3999, 4000, 7999, 8000, 15000, 2500, 6100, 9800, 30000)


def data_rows(dataset: str, *, e: bool = False, count: int = 14, seed: int = 0) -> list[dict[str, Any]]:
    """LongBench's data rows of one dataset (LongBench-E's with `e`): input, context, answers, length, …"""
    rng = random.Random(f"{dataset}-{e}-{seed}")
    language = DATASETS[dataset].language
    rows = []
    for index in range(count):
        answers, classes = _answers(dataset, rng, index)
        context = (_zh_summary(rng, 6) if language == "zh" else _summary(rng, 6)) + f" [{dataset} #{index}]"
        if e:
            length = E_LENGTHS[index % len(E_LENGTHS)]
            if dataset == "passage_count":
                length = min(length, 7999)  # LongBench-E's 8k+ bucket of this dataset stays empty: NaN
        else:
            length = 3000 + 997 * index
        rows.append({"input": _zh(rng, 4) + "？" if language == "zh" else _phrase(rng, 6) + "?",
                     "context": context if index % 5 != 4 else rows[-1]["context"],  # two questions, one document
                     "answers": answers, "length": length, "dataset": f"{dataset}_e" if e else dataset,
                     "language": language, "all_classes": classes, "_id": f"{dataset}{'-e' if e else ''}-{index:04d}"})
    if DATASETS[dataset].metric == "classification_score":
        rows[-1]["all_classes"] = rows[-1]["all_classes"][:-2] + ["Extra class"]  # eval.py keeps the last row's
    return rows


def _recursion_pair(rng: random.Random, extra: int, chinese: bool) -> tuple[str, str]:
    """A prediction and an answer whose LCS back-tracking needs 300 + extra + 1 nested calls (one sentence each)."""
    words = [f"w{i}" for i in range(1, 301)]
    prediction = " ".join(words)
    answer = prediction + " " + " ".join(f"x{i}" for i in range(extra))
    return prediction, answer


def _prediction(dataset: str, row: dict, rng: random.Random, index: int, skill: float) -> str:
    metric = DATASETS[dataset].metric
    answer = row["answers"][0]
    special = index % 7
    if special == 1:
        return ""
    if special == 2:
        return "。，！" if DATASETS[dataset].language == "zh" else "... !!"
    good = rng.random() < skill
    if metric in ("qa_f1_score", "qa_f1_zh_score"):
        if special == 3:
            return f"\n\n{answer}\nExplanation: {_phrase(rng, 5)}"  # first line only for triviaqa
        if special == 4:
            return f"The {answer}." if metric == "qa_f1_score" else f"答案是{answer}，{_zh(rng, 1)}"
        if special == 5:
            return f"{answer} 北京" if metric == "qa_f1_score" else f"{answer} Orrin"
        return answer if good else (_phrase(rng, 3) if metric == "qa_f1_score" else _zh(rng, 2))
    if metric in ("rouge_score", "rouge_zh_score"):
        if special == 3:
            return "\n" + answer.replace(". ", ".\n")  # samsum: first line only
        if special == 4:
            return answer.upper()  # case counts in the `rouge` package
        sentences = answer if good else (_summary(rng, 2) if metric == "rouge_score" else _zh_summary(rng, 2))
        return sentences
    if metric == "classification_score":
        classes = row["all_classes"]
        if special == 3:
            return f"city state\n{answer}" if dataset == "trec" else f"体育新闻\n{answer}"
        if special == 4:
            return " ".join(classes[:3])  # classes inside another class: metrics.py's skip
        if special == 5:
            return f"{classes[2]} and {classes[0]}"
        return answer if good else rng.choice(classes)
    if metric in ("retrieval_score", "retrieval_zh_score"):
        number = answer[9:] if metric == "retrieval_score" else answer[2:]
        if special == 3:
            return f"Paragraph {number} and Paragraph {int(number) + 1}"
        if special == 4:
            return f"答案是段落{number}" if metric == "retrieval_zh_score" else f"{number}"
        if special == 5:
            return "Paragraph １２"  # a full-width number is still \d
        return answer if good else f"Paragraph {rng.randint(1, 30)}"
    if metric == "count_score":
        if special == 3:
            return f"There are {answer} unique paragraphs out of 30."
        if special == 4:
            return f"{int(answer) + 1}"
        return answer if good else str(rng.randint(1, 30))
    if special == 3:
        return f"```python\n{answer.strip()}\n```"
    if special == 4:
        return f"# the next line\n{answer}"
    if special == 5:
        return f"// comment\n{answer.replace(' ', '')}"
    return answer if good else answer.replace("1", "2").replace("item", "element")


def model_rows(dataset: str, *, e: bool = False, skill: float = 0.6, seed: int = 0,
               rows: list[dict] | None = None) -> list[dict[str, Any]]:
    """A model's rows for one dataset as pred.py writes them."""
    rows = rows if rows is not None else data_rows(dataset, e=e)
    rng = random.Random(f"{dataset}-{e}-{seed}-{skill}")
    out = []
    for index, row in enumerate(rows):
        pred = _prediction(dataset, row, rng, index, skill)
        out.append({"pred": pred, "answers": row["answers"], "all_classes": row["all_classes"], "length": row["length"]})
    metric = DATASETS[dataset].metric
    if metric in ("rouge_score", "rouge_zh_score") and not e:
        # The `rouge` package's recursion: 990 or 991 nested calls fit, one more scores 0 (per language).
        limit_extra = 690 if metric == "rouge_score" else 689
        for extra in (limit_extra, limit_extra + 1):
            prediction, answer = _recursion_pair(rng, extra, metric == "rouge_zh_score")
            out.append({"pred": prediction, "answers": [answer], "all_classes": None, "length": 5000})
    return out


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            json.dump(row, f, ensure_ascii=False)
            f.write("\n")
    return path


def recursion_data_rows(dataset: str) -> list[dict]:
    """The data rows answered by model_rows' two recursion rows (appended after a ROUGE dataset's rows)."""
    rng = random.Random(0)
    out = []
    for extra in ((690, 691) if DATASETS[dataset].metric == "rouge_score" else (689, 690)):
        _, answer = _recursion_pair(rng, extra, False)
        out.append({"input": "Summarise.", "context": f"A long document {extra}.", "answers": [answer],
                    "length": 5000, "dataset": dataset, "language": DATASETS[dataset].language,
                    "all_classes": None, "_id": f"{dataset}-long-{extra}"})
    return out


def full_data_rows(dataset: str, *, e: bool = False) -> list[dict]:
    """The data file a model's rows answer, row for row (ROUGE datasets' recursion rows included, v1)."""
    rows = data_rows(dataset, e=e)
    if not e and DATASETS[dataset].metric in ("rouge_score", "rouge_zh_score"):
        rows += recursion_data_rows(dataset)
    return rows


def write_model(root: Path, model: str, *, e: bool = False, skill: float = 0.6, seed: int = 0,
                datasets: list[str] | None = None) -> Path:
    """`pred/<model>/` (or `pred_e/<model>/`) with one file per dataset, as pred.py writes it."""
    folder = root / ("pred_e" if e else "pred") / model
    for dataset in datasets or (E_DATASETS if e else list(DATASETS)):
        write_rows(folder / f"{dataset}.jsonl", model_rows(dataset, e=e, skill=skill, seed=seed))
    return folder


def write_data(root: Path, *, e: bool = False, datasets: list[str] | None = None) -> Path:
    """LongBench's data files: `data/<dataset>.jsonl` (LongBench-E's: `data/<dataset>_e.jsonl`)."""
    folder = root / "data"
    for dataset in datasets or (E_DATASETS if e else list(DATASETS)):
        write_rows(folder / f"{dataset}{'_e' if e else ''}.jsonl", full_data_rows(dataset, e=e))
    return folder


# --- LongBench v2 --------------------------------------------------------------------------------------------

V2_DOMAINS = ("Single-Document QA", "Multi-Document QA", "Long In-context Learning", "Long-dialogue History "
              "Understanding", "Code Repository Understanding", "Long Structured Data Understanding")


def v2_data(count: int = 36, seed: int = 0) -> list[dict[str, Any]]:
    """LongBench v2's data rows (the fields pred.py keeps), every difficulty and length category present."""
    rng = random.Random(f"v2-{seed}")
    rows = []
    for index in range(count):
        rows.append({"_id": f"66f{index:05d}", "domain": V2_DOMAINS[index % 6], "sub_domain": "synthetic",
                     "difficulty": ("easy", "hard")[index % 2], "length": ("short", "medium", "long")[index % 3],
                     "question": _phrase(rng, 7) + "?", "choice_A": _phrase(rng, 3), "choice_B": _phrase(rng, 3),
                     "choice_C": _phrase(rng, 3), "choice_D": _phrase(rng, 3), "answer": "ABCD"[rng.randrange(4)],
                     "context": _summary(rng, 40)})
    return rows


def extract_answer(response: str) -> str | None:
    """LongBench v2's pred.py `extract_answer` (THUDM/LongBench at 2e00731f8d0bff23dc4325161044d0ed8af94c1e,
    pred.py lines 58-68), restated: asterisks dropped, then "The correct answer is (X)", else "… is X"."""
    response = response.replace("*", "")
    match = re.search(r"The correct answer is \(([A-D])\)", response)
    if match:
        return match.group(1)
    match = re.search(r"The correct answer is ([A-D])", response)
    return match.group(1) if match else None


def v2_results(*, cot: bool = False, skill: float = 0.5, seed: int = 0) -> list[dict[str, Any]]:
    """A model's results rows as v2's pred.py writes them (`--cot` adds response_cot)."""
    rng = random.Random(f"v2-pred-{seed}-{cot}-{skill}")
    out = []
    for item in v2_data():
        item = dict(item)
        letter = item["answer"] if rng.random() < skill else "ABCD"[rng.randrange(4)]
        if cot:
            item["response_cot"] = f"Let me think. {_phrase(rng, 12)}."
        kind = rng.randrange(5)
        response = {0: f"The correct answer is ({letter})", 1: f"The correct answer is {letter}.",
                    2: f"**The correct answer is ({letter})**", 3: "I cannot tell from the text.",
                    4: f"The answer is {letter}"}[kind]
        # pred.py's last lines: `item['response'] = response; item['pred'] = extract_answer(response);
        # item['judge'] = item['pred'] == item['answer']; item['context'] = context[:1000]`.
        pred = extract_answer(response)
        item.update(response=response, pred=pred, judge=pred == item["answer"], context=item["context"][:1000])
        out.append(item)
    return out


def write_v2(root: Path, model: str, *, cot: bool = False, skill: float = 0.5, seed: int = 0) -> Path:
    return write_rows(root / "results" / f"{model}{'_cot' if cot else ''}.jsonl",
                      v2_results(cot=cot, skill=skill, seed=seed))
