"""The LV-Eval oracle and the synthetic LV-Eval folders that the LV-Eval tests build on.

The oracle (tests/support/lveval_reference.py) is checked here against values worked
out by hand from LV-Eval's code, against the averages in LV-Eval's README,
and, when a checkout of LV-Eval and an interpreter with its packages are
given (LVEVAL_SOURCE, LVEVAL_PYTHON), against LV-Eval's own evaluation.py.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support import lveval_reference as ref
from tests.support.lveval_data import (
    DATASETS, LEVELS, model_rows, questions, write_bad_folder, write_lenient_folder, write_model, write_quirk_folder,
    write_rows,
)


def f1(overlap: int, predicted: int, answer: int) -> float:
    precision, recall = overlap / predicted, overlap / answer
    return 2 * precision * recall / (precision + recall)


def row(pred, answers, gold_ans=None, **extra) -> dict:
    return {"pred": pred, "answers": answers, "gold_ans": gold_ans, "input": "q", "all_classes": None,
            "length": 16000, **extra}


# --- rows -------------------------------------------------------------------------------


def test_only_the_first_answer_counts_and_a_string_answers_is_read_character_by_character():
    assert ref.row_score("factrecall_en_16k", row("Tobiah", ["Maelis", "Tobiah"])) == 0.0
    assert ref.row_score("factrecall_en_16k", row("O", "Orrin Vale")) == 1.0  # the reference is "O"
    assert ref.row_score("factrecall_en_16k", row("Orrin Vale", "Orrin Vale")) == 0.0
    assert ref.row_score("hotpotwikiqa_mixup_16k", row("Orrin", [])) == 0.0  # the loop never runs


def test_english_gate_is_recall_0_2_with_blacklisted_keywords_in_the_denominator():
    answer = "Ysolde Corvane mapped the coast with Bram"  # ysolde corvane mapped coast with bram
    keywords = "Ysolde Corvane Bram Halloway Saltmere"
    assert ref.row_score("loogle_SD_mixup_16k", row("Bram", [answer], keywords)) == pytest.approx(f1(1, 1, 6))
    assert ref.row_score("loogle_SD_mixup_16k", row("Bram", [answer], keywords + " Marrow")) == 0.0  # 1/6
    # "with" is blacklisted: it matches but is not recalled; 0/1 fails although the F1 would be positive.
    assert ref.row_score("loogle_SD_mixup_16k", row("with", ["with"], "with")) == 0.0
    # Falsy keywords skip the gate in English.
    assert ref.row_score("loogle_SD_mixup_16k", row("Bram", [answer], "")) == pytest.approx(f1(1, 1, 6))


def test_chinese_gate_is_recall_0_4_and_falls_back_to_the_answer():
    keywords = "北京 上海 广州 深圳 天津"
    assert ref.row_score("lic_mixup_16k", row("北京 上海", ["北京和上海"], keywords)) == pytest.approx(f1(2, 2, 3))
    assert ref.row_score("lic_mixup_16k", row("北京", ["北京和上海"], keywords)) == 0.0  # 1/5 < 0.4
    # No keywords: the answer [北京, 和, 上海] gates; 北京 alone recalls 1 of 3 < 0.4.
    assert ref.row_score("cmrc_mixup_16k", row("北京", ["北京和上海"])) == 0.0
    assert ref.row_score("cmrc_mixup_16k", row("北京上海", ["北京和上海"])) == pytest.approx(f1(2, 2, 3))


def test_factrecall_is_plain_f1_whatever_gold_ans_says():
    assert ref.row_score("factrecall_en_16k", row("Orrin", ["Orrin Vale"], "Garrick")) == pytest.approx(f1(1, 1, 2))
    assert ref.row_score("factrecall_zh_16k", row("林远舟", ["林远舟"], "陈知秋")) == 1.0


@pytest.mark.parametrize("dataset, data", [
    ("loogle_SD_mixup_16k", row("Orrin", ["Orrin"], "The !!!")),
    ("multifieldqa_zh_mixup_16k", row("北京", ["北京"], "，。！")),
    ("lic_mixup_16k", row("北京", ["。"])),  # no keywords: the answer gates, and it is empty
])
def test_keywords_that_normalise_to_nothing_crash_the_reference(dataset, data):
    with pytest.raises(ZeroDivisionError):
        ref.row_score(dataset, data)


def test_dureader_rouge_l_over_the_blacklist():
    score = ref.row_score("dureader_mixup_16k", row("北京上海", ["北京和上海"]))
    # 和 is blacklisted: [北京, 上海] against itself; the package's F carries a 1e-8 in its denominator.
    assert score == 2.0 * ((1.0 * 1.0) / (1.0 + 1.0 + 1e-8))
    assert ref.row_score("dureader_mixup_16k", row("的", ["北京"])) == 0.0  # empty hypothesis: an exception, 0
    assert ref.row_score("dureader_mixup_16k", row("北京", ["的的的"])) == 0.0  # empty reference
    # Two punctuation-only texts each become one empty "word", and they match.
    assert ref.row_score("dureader_mixup_16k", row("！？！", ["。。！！"])) == pytest.approx(0.999999995)


def test_dureader_scores_zero_where_the_packages_recursion_overflows():
    prediction = " ".join(f"w{i}" for i in range(1, 301))
    fits = prediction + " " + " ".join(f"x{i}" for i in range(689))  # back-tracking: 689 up + 300 diagonal
    assert ref.recon_calls(fits.split(), prediction.split()) == ref.RECON_CALL_LIMIT
    assert ref.row_score("dureader_mixup_16k", row(prediction, [fits])) > 0.4
    assert ref.row_score("dureader_mixup_16k", row(prediction, [fits + " x689"])) == 0.0


# --- files and tables -------------------------------------------------------------------


def test_file_score_sums_raw_scores_in_file_order_then_rounds_once():
    # F1 values 0.8, f1(6,7,8), 0.2 and 0.375: LV-Eval writes 54.37; averaging 100x values gives 54.38.
    rows = [row("kip lor", ["kip lor vem"]),
            row("a1 a2 a3 a4 a5 a6 zz", ["a1 a2 a3 a4 a5 a6 b1 b2"]),
            row("c1 d2 d3 d4 d5", ["c1 e2 e3 e4 e5"]),
            row("f1 f2 f3 g4 g5 g6 g7 g8", ["f1 f2 f3 h4 h5 h6 h7 h8"])]
    score, scores = ref.scorer("factrecall_en_16k", rows)
    assert scores == [f1(2, 2, 3), f1(6, 7, 8), f1(1, 5, 5), f1(3, 8, 8)]
    assert score == 54.37
    assert round(sum(100 * s for s in scores) / 4, 2) == 54.38


def test_result_json_and_csv_layout(tmp_path):
    folder = write_quirk_folder(tmp_path)
    result = ref.evaluate_folder(folder)
    assert list(result["result_json"]) == ["cmrc_mixup_64k", "cmrc_mixup_256k", "factrecall_en_16k",
                                           "factrecall_en_32k", "factrecall_en_64k", "lic_mixup_16k"]
    assert result["result_json"]["factrecall_en_16k"] == 50.0  # "O" against "O", then against "O" again: 1, 0
    assert result["result_json"]["factrecall_en_32k"] == round(100 * (1.0 + f1(2, 4, 2)) / 2, 2)
    assert json.loads(result["result_json_text"]) == result["result_json"]
    assert result["result_csv_text"] == (
        "dataset_name,64k,256k,16k,32k\n"
        "cmrc_mixup,100.0,0.0,,\n"
        "factrecall_en,100.0,,50.0,83.33\n"
        "lic_mixup,,,100.0,\n"
    )


def test_custom_sort_orders_datasets_by_letters_and_levels_by_number():
    names = [f"{d}_{level}.jsonl" for d in DATASETS for level in reversed(LEVELS)]
    ordered = sorted(names, key=ref.custom_sort)
    assert ordered[:5] == [f"cmrc_mixup_{level}.jsonl" for level in LEVELS]
    assert [ref.dataset_name(n.split(".")[0]) for n in ordered[::5]] == [
        "cmrc_mixup", "dureader_mixup", "factrecall_en", "factrecall_zh", "hotpotwikiqa_mixup", "lic_mixup",
        "loogle_CR_mixup", "loogle_MIR_mixup", "loogle_SD_mixup", "multifieldqa_en_mixup", "multifieldqa_zh_mixup"]


# ChatGLM3-6B-32k in LV-Eval's README: per dataset, 16k..256k.
README_CHATGLM3 = {
    "loogle_SD_mixup": (41.82, 30.31, 19.07, 11.34, 8.92), "cmrc_mixup": (51.21, 46.34, 20.71, 14.16, 8.38),
    "multifieldqa_en_mixup": (25.40, 12.78, 12.32, 9.89, 4.24),
    "multifieldqa_zh_mixup": (32.38, 24.48, 20.97, 10.00, 7.05),
    "factrecall_en": (91.50, 89.00, 46.00, 24.00, 12.5), "factrecall_zh": (0, 2.00, 12.50, 9.00, 7.00),
    "dureader_mixup": (23.99, 25.21, 22.01, 17.94, 8.72), "loogle_CR_mixup": (14.41, 14.10, 9.92, 6.95, 5.46),
    "loogle_MIR_mixup": (15.83, 11.62, 7.00, 7.24, 3.82), "hotpotwikiqa_mixup": (16.98, 14.76, 9.02, 8.31, 6.68),
    "lic_mixup": (24.15, 22.27, 14.33, 8.30, 6.07),
}


def test_paper_averages_match_the_readme():
    table = {name: dict(zip(LEVELS, scores)) for name, scores in README_CHATGLM3.items()}
    averages = ref.paper_averages(table)
    # The README's "Overall Result" row: the mean over the 11 datasets at each level.
    assert averages["per_level"] == {"16k": 30.70, "32k": 26.62, "64k": 17.62, "128k": 11.56, "256k": 7.17}
    # Its per-dataset averages over the levels (multifieldqa_zh reads 18.99 there; its own row gives 18.976).
    expected = {"loogle_SD_mixup": 22.29, "cmrc_mixup": 28.16, "multifieldqa_en_mixup": 12.93,
                "multifieldqa_zh_mixup": 18.98, "factrecall_en": 52.60, "factrecall_zh": 6.10,
                "dureader_mixup": 19.57, "loogle_CR_mixup": 10.17, "loogle_MIR_mixup": 9.10,
                "hotpotwikiqa_mixup": 11.15, "lic_mixup": 15.02}
    assert averages["per_dataset"] == expected
    assert averages["overall"] == round(sum(sum(v) for v in README_CHATGLM3.values()) / 55, 2)


# --- the synthetic folders ------------------------------------------------------------------


def test_model_folder_covers_every_dataset_level_and_language(tmp_path):
    folder = write_model(tmp_path, "m", rows=16)
    files = sorted(p.name for p in folder.iterdir())
    assert files == sorted(f"{d}_{level}.jsonl" for d in DATASETS for level in LEVELS)
    assert {language for language, _ in DATASETS.values()} == {"en", "zh"}
    result = ref.evaluate_folder(folder)  # LV-Eval's reading and scoring run on every file without a crash
    assert set(result["table"]) == set(DATASETS)
    assert all(list(levels) == list(LEVELS) for levels in result["table"].values())


def test_every_file_carries_the_adversarial_rows(tmp_path):
    for dataset in DATASETS:
        rows = model_rows(dataset, "64k", count=16)
        preds = [r["pred"] for r in rows]
        language = DATASETS[dataset][0]
        assert "" in preds, dataset
        assert any(p and not any(ch.isalnum() for ch in p) for p in preds), dataset  # punctuation only
        assert any(p and all(ref.normalize_answer(w) in ref.ABANDON_WORDS_EN + ["", "the"] for w in p.split())
                   for p in preds) or language == "zh", dataset  # blacklist only
        assert any(p and all(t in ref.ABANDON_WORDS_ZH for t in ref._zh_tokens(p)) for p in preds) \
            or language == "en", dataset
        assert any(any("\u4e00" <= ch <= "\u9fff" for ch in p) and any(ch.isascii() and ch.isalpha() for ch in p)
                   for p in preds), dataset  # mixed scripts
        if dataset not in ("factrecall_en", "factrecall_zh", "dureader_mixup"):
            assert any(len(r["answers"]) > 1 for r in rows), dataset  # several answers
            assert any("gold_ans" not in r for r in rows) and any(r.get("gold_ans") == "" for r in rows)


def test_questions_are_shared_across_levels_and_models(tmp_path):
    a = write_model(tmp_path, "a", seed=1, rows=10, datasets=["cmrc_mixup"])
    b = write_model(tmp_path, "b", seed=2, rows=10, datasets=["cmrc_mixup"], skill=0.2)
    inputs = {(m.name, p.name): [r["input"] for r in ref.read_rows(p)] for m in (a, b) for p in m.iterdir()}
    assert len({tuple(v) for v in inputs.values()}) == 1
    assert [q.input for q in questions("factrecall_zh", 3)] == [questions("factrecall_zh", 1)[0].input] * 3


def test_bad_folder_cases_do_what_they_say_upstream(tmp_path):
    folder, cases = write_bad_folder(tmp_path)
    assert {p.name for p in folder.iterdir()} == {case.file for case in cases}
    for case in cases:
        try:
            ref.scorer(case.file.split(".")[0], ref.read_rows(folder / case.file))
            outcome = "scored"
        except Exception as error:  # noqa: BLE001 - recording which exception the reference dies with
            outcome = type(error).__name__
        assert outcome == case.upstream, case


def test_rows_with_u2028_and_crlf_are_read_whole(tmp_path):
    path = write_rows(tmp_path / "factrecall_en_16k.jsonl", [row("a\u2028b", ["a b"]), row("c\x85d", ["c"])],
                      newline="\r\n")
    assert [r["pred"] for r in ref.read_rows(path)] == ["a\u2028b", "c\x85d"]


# --- against LV-Eval itself, when it is at hand ---------------------------------------------


def _lveval_checkout() -> tuple[Path, str]:
    source, python = os.environ.get("LVEVAL_SOURCE"), os.environ.get("LVEVAL_PYTHON")
    if not source or not python or not (Path(source) / "evaluation.py").is_file():
        pytest.skip("set LVEVAL_SOURCE (an LV-Eval checkout) and LVEVAL_PYTHON (with pandas, jieba, rouge)")
    return Path(source), python


def test_oracle_equals_lveval_evaluation_py(tmp_path):
    source, python = _lveval_checkout()
    scripts = tmp_path / "lveval"
    scripts.mkdir()
    for name in ("evaluation.py", "config.py", "metrics.py"):
        shutil.copy(source / name, scripts / name)
    # evaluation.py needs only ensure_dir from utils.py, whose other imports (torch, datasets) are not needed.
    (scripts / "utils.py").write_text("import os\n\ndef ensure_dir(path):\n    os.makedirs(path, exist_ok=True)\n")
    folders = [write_model(tmp_path / "runs", "alpha", seed=0, skill=0.8, window=32000, long_answer=True),
               write_model(tmp_path / "runs", "beta", seed=1, skill=0.5, rows=30),
               write_quirk_folder(tmp_path / "runs"), write_lenient_folder(tmp_path / "runs")]
    for folder in folders:
        expected = ref.evaluate_folder(folder)
        subprocess.run([python, "evaluation.py", "--input-dir", str(folder)], cwd=scripts, check=True,
                       capture_output=True)
        out = folder / "eval_result"
        assert (out / "result.json").read_text(encoding="utf-8") == expected["result_json_text"]
        assert (out / "result.csv").read_text(encoding="utf-8") == expected["result_csv_text"]
