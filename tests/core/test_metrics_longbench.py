"""LongBench's metrics one by one: values worked out from metrics.py, its quirks and what the fixed profile does."""
from __future__ import annotations

import difflib
import json
import math

import pytest

from app.core.metrics.longbench import bucket_of
from app.core.metrics.longbench.files import FileName, collect_file, describe_name
from app.core.metrics.longbench.scores import (RECON_CALLS_EN, RECON_CALLS_ZH, classification_score, code_sim_score,
                                              count_score, fuzz_ratio, qa_f1_score, qa_f1_zh_score, retrieval_score,
                                              rouge_score, rouge_zh_score, row_score)
from app.core.metrics.longbench.table import averages, bucket_scores, file_score, result_txt, v2_table
from app.core.metrics.lveval import _ZH_PUNCTUATION
from tests.support import longbench_reference as ref
from tests.support.lveval_reference import _ZH_PUNCT

pytestmark = pytest.mark.database_free


def f1(overlap: int, predicted: int, answer: int) -> float:
    precision, recall = overlap / predicted, overlap / answer
    return 2 * precision * recall / (precision + recall)


def test_qa_f1_in_english_and_chinese():
    assert qa_f1_score("The Orrin Vale.", "orrin vale") == 1.0
    assert qa_f1_score("Orrin", "Orrin Vale harbor") == pytest.approx(f1(1, 1, 3))
    assert qa_f1_score("", "Orrin") == 0.0
    assert qa_f1_zh_score("北京和上海", "北京，上海") == pytest.approx(f1(2, 3, 2))
    assert qa_f1_zh_score("。，！", "北京") == 0.0
    assert _ZH_PUNCTUATION == frozenset(_ZH_PUNCT)  # LongBench's and LV-Eval's sets are one set


def test_rouge_is_the_packages_with_its_sentences_case_and_epsilon():
    assert rouge_score("Orrin met Vale.", "Orrin met Vale.") == 2.0 * (1.0 / (2.0 + 1e-8))
    assert rouge_score("orrin met vale", "Orrin met Vale") < 0.5  # case counts
    assert rouge_score("", "Orrin") == 0.0 and rouge_score("...", "Orrin") == 0.0  # the package raises: 0
    assert rouge_zh_score("我们讨论预算。", "我们讨论预算。") == pytest.approx(0.999999995)


@pytest.mark.parametrize("chinese, limit", [(False, RECON_CALLS_EN), (True, RECON_CALLS_ZH)])
def test_rouge_scores_zero_one_call_past_eval_pys_stack(chinese, limit):
    prediction = " ".join(f"w{i}" for i in range(1, 301))
    fits = prediction + " " + " ".join(f"x{i}" for i in range(limit - 301))
    score = rouge_zh_score if chinese else rouge_score
    assert ref.recon_calls(fits.split(), prediction.split()) == limit
    assert score(prediction, fits) > 0.4
    assert score(prediction, fits + " y") == 0.0
    assert score(prediction, fits + " y", profile="fixed") > 0.4
    assert (limit, chinese) in ((991, False), (990, True))


def test_classification_skips_the_class_after_each_one_it_drops():
    classes = ["city", "state", "city state", "country"]
    # named [city, state, city state]: city goes, then the iterator lands on "city state" and never sees state.
    assert classification_score("city state", "city state", classes) == 0.5
    assert ref.classification_score("city state", "city state", all_classes=classes) == 0.5
    assert classification_score("city state", "city state", classes, profile="fixed") == 1.0
    assert classification_score("country", "city state", classes) == 0.0
    assert classification_score("体育新闻", "体育新闻", ["体育", "新闻", "体育新闻"]) == 0.5


def test_retrieval_and_count_share_of_equal_numbers():
    assert retrieval_score("Paragraph 12 or Paragraph 3", "Paragraph 12") == 0.5
    assert retrieval_score("Paragraph １２", "Paragraph 12") == 0.0  # \d reads １２, which is not "12"
    assert count_score("There are 7 of 30", "7") == 0.5
    assert count_score("seven", "7") == 0.0
    note = row_score("passage_retrieval_zh", "段落3", ["没有段落"])
    assert note.value == 0.0 and "IndexError" in note.note


@pytest.mark.parametrize("first, second", [
    ("return x + 1", "return x+1"),
    ("a" * 150 + "b" * 100, "a" * 140 + "c" * 110),
    ("            result = compute_total(values, weights, offset=1, scale=2.5, normalise=True)" * 3,
     "            result = compute_total(values, weights, offset=2, scale=2.5, normalise=False)" * 3),
])
def test_fuzz_ratio_is_difflibs_with_autojunk_and_fixed_is_levenshteins(first, second):
    assert fuzz_ratio(first, second) == int(round(100 * difflib.SequenceMatcher(None, first, second).ratio()))
    assert fuzz_ratio(first, second) == ref.fuzz_ratio(first, second)
    from rapidfuzz.distance import Indel

    exact = int(round(100 * (1 - Indel.distance(first, second) / (len(first) + len(second)))))
    assert fuzz_ratio(first, second, profile="fixed") == exact
    assert fuzz_ratio("", "") == 100 and fuzz_ratio("", "x") == 0


def test_long_code_lines_differ_between_the_profiles():
    line = "            result = compute_total(values, weights, offset=1, scale=2.5, normalise=True) + adjust(cache)"
    other = line.replace("offset=1", "offset=2").replace("True", "False") + " - correction(factor=3, mode='fast')"
    assert len(other) >= 200 or len(line) < 200
    assert code_sim_score(f"# comment\n{other}", line) == ref.code_sim_score(f"# comment\n{other}", line)
    assert code_sim_score("```python\nx = 1\n```", "x = 1") == 1.0  # the fence lines are skipped


def test_first_line_rule_on_trec_triviaqa_samsum_and_lsht():
    assert row_score("triviaqa", "\n\nOrrin Vale\nBecause.", ["Orrin Vale"]).value == 1.0
    assert row_score("narrativeqa", "\n\nOrrin Vale\nBecause.", ["Orrin Vale"]).value == pytest.approx(f1(2, 3, 2))
    # lstrip("\n") leaves a leading \r: the first line is "\r" alone, naming no class.
    assert row_score("trec", "\r\ncity\nstate", ["city"], ["city", "state"]).value == 0.0
    assert row_score("trec", "\ncity\nstate", ["city"], ["city", "state"]).value == 1.0


def test_bucket_edges_and_file_rounding():
    assert [bucket_of(n) for n in (3999, 4000, 7999, 8000)] == ["0-4k", "4-8k", "4-8k", "8k+"]
    assert file_score([0.1, 0.2, 0.3]) == round(100 * (0.1 + 0.2 + 0.3) / 3, 2)
    cells = bucket_scores([(0.1, 10), (0.2, 20), (1.0, 5000)])
    assert cells["0-4k"] == 15.0 and cells["4-8k"] == 100.0 and math.isnan(cells["8k+"])
    assert "8k+" not in bucket_scores([(0.1, 10)], profile="fixed")


def test_averages_group_by_category_and_language():
    cells = {"narrativeqa": 20.0, "multifieldqa_zh": 40.0, "lcc": 60.0, "trec": 10.0}
    summary = averages(cells)
    assert summary["per_category"] == {"Single-Document QA": 30.0, "Few-shot Learning": 10.0, "Code Completion": 60.0}
    assert summary["per_language"] == {"en": 30.0, "zh": 50.0}  # code counts in both
    assert summary["overall"] == round((30 + 10 + 60) / 3, 2) and not summary["complete"]
    e = averages({"qasper": {"0-4k": 10.0, "4-8k": 20.0, "8k+": math.nan}, "lcc": {"0-4k": 30.0, "4-8k": 40.0,
                                                                                 "8k+": 50.0}})
    assert e["per_bucket"] == {"0-4k": 20.0, "4-8k": 30.0, "8k+": 50.0}


def test_v2_table_and_result_txt():
    rows = [(1, "easy", "short"), (0, "hard", "medium"), (1, "hard", "long"), (0, "easy", "long")]
    table = v2_table(rows)
    assert table == {"Overall": 50.0, "Easy": 50.0, "Hard": 50.0, "Short": 100.0, "Medium": 0.0, "Long": 50.0}
    assert result_txt({"m": table, "a": v2_table(rows[:1])}).split("\n") == [
        "Model\tOverall\tEasy\tHard\tShort\tMedium\tLong", "a\t100.0\t100.0\t-\t100.0\t-\t-",
        "m\t50.0\t50.0\t50.0\t100.0\t0.0\t50.0"]


def test_names_say_the_question_set():
    assert describe_name("pred/m/trec.jsonl") == FileName("v1", "trec", False)
    assert describe_name("LongBench/pred_e/m/trec.jsonl") == FileName("e", "trec", False)
    assert describe_name("data/trec_e.jsonl") == FileName("e", "trec", True)
    assert describe_name("m/narrative_qa.jsonl") is None and describe_name("m/dureader_e.jsonl") is None


def _jsonl(*rows) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


@pytest.mark.parametrize("name, row, field", [
    ("m/qasper.jsonl", {"pred": 3, "answers": ["a"], "all_classes": None}, "pred"),
    ("m/qasper.jsonl", {"pred": "a", "answers": "a", "all_classes": None}, "answers"),
    ("m/qasper.jsonl", {"pred": "a", "answers": ["a", 2], "all_classes": None}, "answers"),
    ("m/qasper.jsonl", {"pred": "a", "answers": ["a"]}, "all_classes"),
    ("m/trec.jsonl", {"pred": "a", "answers": ["a"], "all_classes": None}, "all_classes"),
    ("pred_e/m/qasper.jsonl", {"pred": "a", "answers": ["a"], "all_classes": None}, "length"),
    ("pred_e/m/qasper.jsonl", {"pred": "a", "answers": ["a"], "all_classes": None, "length": "long"}, "length"),
])
def test_what_eval_py_stops_on_is_an_error_naming_file_line_and_field(name, row, field):
    parsed, errors = collect_file(name, _jsonl({"pred": "x", "answers": ["x"], "all_classes": ["a", "x"],
                                                "length": 10}, row))
    assert parsed is None and len(errors) == 1
    assert (errors[0].file, errors[0].line, errors[0].field) == (name, 2, field)


def test_longbench_e_has_only_its_datasets_and_unread_fields_are_noted():
    _, errors = collect_file("pred_e/m/dureader.jsonl", _jsonl({"pred": "a", "answers": ["a"], "all_classes": None,
                                                                "length": 1}))
    assert "LongBench-E has no dureader" in errors[0].message
    parsed, errors = collect_file("pred/m/qasper.jsonl", _jsonl({"pred": "a", "answers": ["a"], "all_classes": 3,
                                                                "length": "x"}))
    assert not errors and len(parsed.rows[0].notes) == 2


def test_v2_rows_are_checked_as_result_py_reads_them():
    good = {"_id": "1", "domain": "d", "sub_domain": "s", "difficulty": "easy", "length": "short", "question": "q",
            "choice_A": "a", "choice_B": "b", "choice_C": "c", "choice_D": "d", "answer": "A", "context": "c",
            "response": "The correct answer is (A)", "pred": "A", "judge": True}
    parsed, errors = collect_file("results/m.jsonl", _jsonl(good), variant="v2")
    assert not errors and parsed.rows[0].judge is True  # a one-row file: result.py would stop, here one row
    parsed, errors = collect_file("results/m.json", json.dumps([good, good | {"_id": "2"}]).encode(), variant="v2")
    assert not errors and len(parsed.rows) == 2
    for change, field in (({"judge": False}, "judge"), ({"difficulty": "medium"}, "difficulty"),
                          ({"length": "huge"}, "length"), ({"pred": "E", "judge": False}, "pred")):
        _, errors = collect_file("results/m.jsonl", _jsonl(good | change), variant="v2")
        assert errors[0].field == field, change
    _, errors = collect_file("results/m.jsonl", _jsonl(good, good), variant="v2")
    assert "a second row for _id" in errors[0].message


def test_every_quirk_is_documented_with_both_profiles():
    from app.core.metrics.longbench.quirks import QUIRKS
    from tests.support.shared import REPO_ROOT

    page = (REPO_ROOT / "docs" / "longbench.md").read_text(encoding="utf-8")
    ids = [quirk["id"] for quirk in QUIRKS]
    assert len(ids) == len(set(ids)) and all(quirk["official"] and quirk["fixed"] for quirk in QUIRKS)
    assert [i for i in ids if f"| `{i}` |" not in page] == []
    assert sum(quirk["changed"] for quirk in QUIRKS) == 5 and "corrects the first five" in page
