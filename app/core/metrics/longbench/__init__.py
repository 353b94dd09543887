"""LongBench (THUDM/LongBench): its 21 datasets, their metrics, languages and categories, and LongBench-E's buckets.

Restated from LongBench/eval.py (`dataset2metric`, the first-line rule, `scorer_e`'s buckets) and
LongBench/pred.py (the LongBench-E datasets) at commit 2e00731f8d0bff23dc4325161044d0ed8af94c1e; the
categories and the language groups are those of LongBench's README and OpenCompass's summarizer
(opencompass/configs/summarizers/groups/longbench.py: the code datasets count in both languages).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Dataset:
    name: str
    metric: str  # the metrics.py function eval.py's dataset2metric names
    language: str  # "en", "zh" or "code"
    category: str


# In eval.py's dataset2metric order (also pred.py's).
DATASETS: dict[str, Dataset] = {d.name: d for d in (
    Dataset("narrativeqa", "qa_f1_score", "en", "Single-Document QA"),
    Dataset("qasper", "qa_f1_score", "en", "Single-Document QA"),
    Dataset("multifieldqa_en", "qa_f1_score", "en", "Single-Document QA"),
    Dataset("multifieldqa_zh", "qa_f1_zh_score", "zh", "Single-Document QA"),
    Dataset("hotpotqa", "qa_f1_score", "en", "Multi-Document QA"),
    Dataset("2wikimqa", "qa_f1_score", "en", "Multi-Document QA"),
    Dataset("musique", "qa_f1_score", "en", "Multi-Document QA"),
    Dataset("dureader", "rouge_zh_score", "zh", "Multi-Document QA"),
    Dataset("gov_report", "rouge_score", "en", "Summarization"),
    Dataset("qmsum", "rouge_score", "en", "Summarization"),
    Dataset("multi_news", "rouge_score", "en", "Summarization"),
    Dataset("vcsum", "rouge_zh_score", "zh", "Summarization"),
    Dataset("trec", "classification_score", "en", "Few-shot Learning"),
    Dataset("triviaqa", "qa_f1_score", "en", "Few-shot Learning"),
    Dataset("samsum", "rouge_score", "en", "Few-shot Learning"),
    Dataset("lsht", "classification_score", "zh", "Few-shot Learning"),
    Dataset("passage_count", "count_score", "en", "Synthetic Tasks"),
    Dataset("passage_retrieval_en", "retrieval_score", "en", "Synthetic Tasks"),
    Dataset("passage_retrieval_zh", "retrieval_zh_score", "zh", "Synthetic Tasks"),
    Dataset("lcc", "code_sim_score", "code", "Code Completion"),
    Dataset("repobench-p", "code_sim_score", "code", "Code Completion"),
)}
CATEGORIES = tuple(dict.fromkeys(d.category for d in DATASETS.values()))
# eval.py scores only the first line of the prediction (after leading newlines) on these datasets.
FIRST_LINE_DATASETS = frozenset({"trec", "triviaqa", "samsum", "lsht"})
# pred.py --e: LongBench-E's datasets, `load_dataset('THUDM/LongBench', f"{dataset}_e")`.
E_DATASETS = ("qasper", "multifieldqa_en", "hotpotqa", "2wikimqa", "gov_report", "multi_news", "trec", "triviaqa",
              "samsum", "passage_count", "passage_retrieval_en", "lcc", "repobench-p")
# scorer_e's buckets of a row's `length` (words, or characters for Chinese), in its order.
BUCKETS = ("0-4k", "4-8k", "8k+")

# The three question sets: LongBench v1 (`pred/`), LongBench-E (`pred_e/`, the same dataset file names over
# another sample) and LongBench v2 (`results/`, 503 multiple-choice questions).
V1, E, V2 = "v1", "e", "v2"
VARIANTS = (V1, E, V2)
VARIANT_LABELS = {V1: "LongBench", E: "LongBench-E", V2: "LongBench v2"}


def bucket_of(length: int | float) -> str:
    """scorer_e's bucket: under 4000, under 8000, else 8k+."""
    if length < 4000:
        return BUCKETS[0]
    if length < 8000:
        return BUCKETS[1]
    return BUCKETS[2]


def in_language(dataset: str, language: str) -> bool:
    """Whether a dataset counts in a language's average (code datasets count in both, as OpenCompass groups them)."""
    own = DATASETS[dataset].language
    return own == language or own == "code"
