"""LongBench's quirks: what the official profile reproduces of metrics.py, eval.py and result.py, and what fixed does.

Each entry has the shape of app.core.metrics.QUIRKS (``id``, ``metric``, ``official``, ``fixed``, ``changed``);
``metric`` is "longbench" (the per-row score, stored as `longbench_raw`) or "*" for reading the files.
"""
from __future__ import annotations


def _quirk(quirk_id: str, metric: str, official: str, fixed: str, changed: bool = True) -> dict:
    return {"id": quirk_id, "metric": metric, "official": official, "fixed": fixed, "changed": changed}


QUIRKS: tuple[dict, ...] = (
    _quirk("longbench_classification_skip", "longbench",
           "trec, lsht: classification_score drops the classes named in the prediction that are part of the answer "
           "(but not the answer) while iterating the same list, so the class after each dropped one is never looked "
           "at: with classes [\"city\", \"city state\", \"state\"] named and answer \"city state\", \"state\" stays "
           "and the row scores 1/2.",
           "Every named class is looked at: \"city\" and \"state\" both go and the row scores 1."),
    _quirk("longbench_all_classes", "longbench",
           "eval.py keeps the `all_classes` of a file's last row and scores every row against it.",
           "Each row is scored against its own `all_classes` (LongBench's data gives every row of trec and lsht "
           "the same list, so the numbers agree on its files)."),
    _quirk("longbench_rouge_recursion", "longbench",
           "ROUGE-L of the `rouge` package back-tracks its LCS recursively: past 991 nested calls (990 for "
           "Chinese, one frame deeper) as eval.py runs on CPython's default stack it raises RecursionError, which "
           "rouge_score's bare except turns into 0. Reproduced from the LCS itself, whatever the caller's stack; "
           "the row is noted.",
           "Long sentences are scored."),
    _quirk("longbench_code_sim_difflib", "longbench",
           "lcc, repobench-p: fuzz.ratio of fuzzywuzzy as LongBench's requirements install it, without "
           "python-Levenshtein: difflib's SequenceMatcher, whose autojunk heuristic ignores characters frequent in "
           "texts of 200 or more characters, so long lines of code score lower than they match.",
           "Levenshtein's ratio (what fuzz.ratio gives with python-Levenshtein installed): insertions and deletions "
           "over the summed lengths, rounded the same way."),
    _quirk("longbench_empty_bucket", "longbench",
           "LongBench-E: a length bucket without rows is numpy's mean of nothing, NaN (with a RuntimeWarning), "
           "and result.json holds NaN.",
           "The bucket is left out."),
    _quirk("longbench_rouge_words", "longbench",
           "ROUGE-L of the `rouge` package: sentences split on \".\", words on spaces as they are (case and "
           "punctuation kept: \"Summary,\" is not \"summary\"), distinct words counted, F divided by P + R + 1e-8, "
           "so a perfect answer scores 0.999999995; an empty text (or only periods) scores 0.",
           "Same: it is the metric LongBench reports.", changed=False),
    _quirk("longbench_sums", "longbench",
           "A dataset's score is round(100 × Σ / n, 2), the sum taken in file order; LongBench-E's bucket is "
           "round(100 × numpy.mean, 2): numpy sums pairwise and rounds with its own rule.",
           "Same: the table is computed from the stored raw row scores, LongBench-E's with numpy itself.",
           changed=False),
    _quirk("longbench_no_paragraph", "longbench",
           "passage_retrieval_en/zh: an answer naming no \"Paragraph N\" (\"段落N\") makes eval.py stop with an "
           "IndexError; here the row scores 0 and is noted by file and line.",
           "Same.", changed=False),
    _quirk("longbench_first_line", "longbench",
           "trec, triviaqa, samsum, lsht: only the prediction's first line counts, after leading newlines (\\n "
           "only: a leading \\r stays).",
           "Same.", changed=False),
    _quirk("longbench_crash_cases", "*",
           "A `pred` that is not a string, `answers` that are not a list of strings, a row without `all_classes`, "
           "trec or lsht without a list of classes, a blank line, an empty file or a file named after no dataset "
           "make eval.py stop (and a LongBench-E row without `length` makes its zip pair rows with other rows' "
           "lengths). Here each is an error naming the file, line and field, and nothing of that model is "
           "imported; blank lines are skipped.",
           "Same.", changed=False),
    _quirk("longbench_row_order", "*",
           "Prediction rows carry no question and no id: the k-th row answers the data file's k-th row (pred.py "
           "with several GPUs writes its processes' rows interleaved, and eval.py cannot tell). Here a row is "
           "keyed by its dataset and position and refused when its answers differ from those stored for that "
           "position (another model's row, or LongBench's data row).",
           "Same.", changed=False),
    _quirk("longbench_file_order", "*",
           "eval.py writes result.json's datasets, and result.py its models, in os.listdir's order (the file "
           "system's).",
           "Both profiles write them sorted by name.", changed=False),
    _quirk("longbench_v2_categories", "*",
           "result.py counts any difficulty but \"easy\" as hard and any length but \"short\" and \"medium\" as "
           "long, and stops (ZeroDivisionError) when a column has no row.",
           "Rows with other values are refused at import; an empty column is written \"-\".", changed=False),
    _quirk("longbench_v2_reading", "*",
           "result.py reads a results file as one JSON document first: a one-row JSON-lines file is one object, "
           "whose keys it then iterates as rows, and it stops. It trusts each row's `judge`.",
           "A one-row file is one row. A row whose `judge` disagrees with pred == answer (what pred.py writes) is "
           "refused.", changed=False),
)
