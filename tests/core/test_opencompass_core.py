"""OpenCompass's layout and rows (app/core/opencompass.py), and the documented differences of its evaluators."""
from __future__ import annotations

from pathlib import Path

from app.core.metrics.quirks import OPENCOMPASS_DIFFERENCES
from app.core.opencompass import (
    describe_path,
    is_opencompass_file,
    LVEVAL_KEYWORDS_IN_GOLD,
    leval_gold,
    lveval_gold,
    parse_rows,
    part_problems,
    split_abbr,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "opencompass.md"


def test_dataset_names_parts_and_unknown_names():
    assert split_abbr("LEval_tpo") == ("LEval_tpo", None)
    assert split_abbr("LEval_tpo_12") == ("LEval_tpo", 12)
    assert split_abbr("LVEval_cmrc_mixup_16k") == ("LVEval_cmrc_mixup_16k", None)
    assert split_abbr("LVEval_cmrc_mixup_16k_0") == ("LVEval_cmrc_mixup_16k", 0)
    assert split_abbr("LEval_nosuch_1") == ("LEval_nosuch_1", None)
    name = describe_path("out/predictions/qwen-7b/LEval_nq_1.json")
    assert (name.model, name.abbr, name.part, name.benchmark, name.task) == (
        "qwen-7b", "LEval_nq", 1, "leval", "natural_question")
    assert describe_path("m/LVEval_factrecall_en_64k.json").task == "factrecall_en_64k"
    assert describe_path("m/LEval_nosuch.json").benchmark == ""
    assert is_opencompass_file("predictions/m/LEval_tpo.json")
    assert not is_opencompass_file("LEval_tpo.json")  # no model folder
    assert not is_opencompass_file("predictions/m/gsm8k.json")
    assert not is_opencompass_file("predictions/m/tmp_LEval_tpo.jsonl")


def test_parts_must_be_complete_and_not_beside_the_whole_file():
    names = [describe_path(f"m/{stem}.json") for stem in ("LEval_tpo_0", "LEval_tpo_2", "LEval_nq", "LEval_nq_0",
                                                         "LEval_quality_0", "LEval_quality_1")]
    problems = part_problems(names)
    assert "LEval_tpo_1.json are missing" in problems[names[0]]
    assert "both LEval_nq.json and its parts" in problems[names[3]]
    assert names[4] not in problems and names[5] not in problems
    twice = [describe_path("run1/predictions/m/LEval_tpo.json"), describe_path("run2/predictions/m/LEval_tpo.json")]
    assert "LEval_tpo of model m appears more than once" in part_problems(twice)[twice[1]]


def test_rows_are_read_as_openicl_writes_them_and_every_problem_names_its_key():
    data = {
        "0": {"origin_prompt": [{"role": "SYSTEM", "prompt": "be brief"}, {"role": "HUMAN", "prompt": "Q?"}],
              "prediction": "A", "gold": "A"},
        "1": {"origin_prompt": "Q2", "prediction": "B"},  # no gold: the answer was empty
        "2": {"origin_prompt": "Q3", "prediction": ["A", "B"]},
        "3": {"prediction": "x", "gold": 3},
        "x": {},
    }
    parsed = parse_rows(data, offset=10)
    assert [(row.key, row.index, row.prompt, row.gold) for row in parsed.rows] == [
        ("0", 10, "be brief\nQ?", "A"), ("1", 11, "Q2", None)]
    assert [(p.where, p.message.split(" (")[0]) for p in parsed.problems] == [
        ('"2".prediction', "must be a string"),
        ('"3".origin_prompt', "missing"),
        ('"3".gold', "must be a string, a list or an object"),
        # Five entries: OpenCompass reads "0" to "4", so "4" is the key it misses, and it never reads "x".
        ('"4"', 'missing: the file holds 5 rows, so OpenCompass reads the keys "0" to "4", and this one is not there'),
        ('"x"', "unexpected key: OpenCompass numbers a file's rows \"0\" to \"4\" and reads only those"),
    ]
    assert parsed.size == 5
    assert parse_rows([1, 2]).problems[0].where is None
    assert parse_rows({"0": data["0"], "k" * 500: {}}).problems[-1].where == '"' + "k" * 40 + '…"'


def test_a_missing_index_is_named_and_a_key_beyond_the_rows_is_unexpected():
    row = {"origin_prompt": "Q", "prediction": "A", "gold": "A"}
    parsed = parse_rows({"0": row, "1": row, "3": row}, offset=4)
    assert [p.where for p in parsed.problems] == ['"2"', '"3"']
    assert parsed.problems[0].message.startswith("missing: the file holds 3 rows")
    assert parsed.problems[1].message.startswith("unexpected key")
    assert [(r.key, r.index) for r in parsed.rows] == [("0", 4), ("1", 5)]


def test_every_lveval_gold_shape_of_opencompass_loaders():
    """Seven loaders append the keywords to the answers; the others pass the answers on (cmrc drops its keywords);
    save_results leaves an empty gold out."""
    gold = lveval_gold("lic_mixup", ["林远舟和周书雁", "沈知秋", "林远舟"])
    assert (gold.answers, gold.keywords, gold.has_keywords) == ((["林远舟和周书雁", "沈知秋"],), "林远舟", True)
    assert lveval_gold("loogle_SD_mixup", ["kw"]).answers == ([],)  # no answers, the keywords alone
    assert lveval_gold("multifieldqa_en_mixup", ["An answer", None]).keywords is None  # null keywords
    assert lveval_gold("cmrc_mixup", ["答案"]) == type(gold)((["答案"],))
    assert lveval_gold("dureader_mixup", None).answers == ([], "")
    assert lveval_gold("factrecall_en", "Orrin Vale").answers == ("Orrin Vale",)
    for bad, said in ((None, "is missing"), ("An answer", "is a string"), ([], "is empty"),
                      (["a", 3], "ends with int")):
        try:
            lveval_gold("hotpotwikiqa_mixup", bad)
        except ValueError as exc:
            assert str(exc).startswith(said) and "answers + [answer_keywords]" in str(exc), exc
        else:
            raise AssertionError(bad)
    assert len(LVEVAL_KEYWORDS_IN_GOLD) == 7


def test_quality_gold_is_the_option_letter():
    assert leval_gold("quality", "(B) Their subconscious knew") == "B"
    assert leval_gold("tpo", "C") == "C"
    assert leval_gold("gov_report_summ", "A summary.") == "A summary."


def test_every_difference_of_opencompass_evaluators_is_documented_with_its_profile():
    text = DOCS.read_text(encoding="utf-8")
    for difference in OPENCOMPASS_DIFFERENCES:
        assert f"| `{difference['id']}` |" in text, difference["id"]
        assert difference["profile"] in ("official", "fixed", "none")
        assert difference["opencompass"] and difference["leval"] and difference["tasks"]
