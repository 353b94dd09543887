"""app.core.metrics against the LV-Eval oracle: every row, every file's cell, result.json and result.csv, byte for byte."""
from __future__ import annotations

import json
import random

import pytest

from app.core.metrics import evaluate_file, evaluate_rows
from app.core.metrics.files import FileFormatError, read_rows
from app.core.metrics.lveval.evaluation import evaluate_folder, parse_lveval_file, score_files
from app.core.metrics.lveval.rouge import RECON_CALL_LIMIT, RougeUnavailable, rouge_l
from app.core.metrics.lveval.rows import NOTE_STRING_ANSWERS, score_row
from app.core.metrics.lveval.table import averages, result_json_text
from tests.support import lveval_reference as ref
from tests.support.lveval_data import (write_bad_folder, write_lenient_folder, write_model, write_quirk_folder,
                                      write_rows)

pytestmark = pytest.mark.database_free  # a pure core: the PostgreSQL pass leaves it out


def _jsonl(folder):
    return sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith(".jsonl"))


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("lveval")
    return [
        write_model(root, "alpha-32k", seed=0, skill=0.8, window=32_000, long_answer=True),
        write_model(root, "beta-8k", seed=1, skill=0.55, window=8_000, rows=24),
        write_model(root, "gamma", seed=5, skill=0.3, rows=20),
        write_model(root, "partial", seed=3, datasets=["cmrc_mixup", "factrecall_en", "dureader_mixup"],
                    levels=["32k", "16k"]),
        write_quirk_folder(root),
    ]


def test_tables_equal_lvevals_result_files(folders):
    for folder in folders:
        expected = ref.evaluate_folder(folder)
        run = evaluate_folder(_jsonl(folder), folder.name)
        assert result_json_text(run.cells) == expected["result_json_text"], folder.name
        assert run.as_dict()["result_csv"] == expected["result_csv_text"], folder.name
        assert averages(run.cells)["per_dataset"] == ref.paper_averages(expected["table"])["per_dataset"]
        assert averages(run.cells)["per_level"] == ref.paper_averages(expected["table"])["per_level"]
        assert averages(run.cells)["overall"] == ref.paper_averages(expected["table"])["overall"]


def test_every_row_equals_the_oracle_bit_for_bit(folders):
    checked = 0
    for folder in folders:
        for path in _jsonl(folder):
            dataset = path.name.split(".")[0]
            rows = ref.read_rows(path)
            _, expected = ref.scorer(dataset, rows)
            for row, want in zip(rows, expected):
                got = score_row(dataset, row["pred"], row["answers"], row.get("gold_ans"))
                assert got.value == want and type(got.value) is float, (path.name, row)
                checked += 1
    assert checked > 3000


def test_evaluate_file_reports_lvevals_number(folders):
    for path in _jsonl(folders[1])[:12]:
        result = evaluate_file(path)
        assert result["metrics"]["lveval"] == ref.evaluate_folder(folders[1])["result_json"][path.name.split(".")[0]]


def test_a_file_is_rounded_once_from_raw_scores():
    rows = [{"pred": p, "answers": [a], "gold_ans": None, "input": "q", "length": 1} for p, a in (
        ("kip lor", "kip lor vem"), ("a1 a2 a3 a4 a5 a6 zz", "a1 a2 a3 a4 a5 a6 b1 b2"),
        ("c1 d2 d3 d4 d5", "c1 e2 e3 e4 e5"), ("f1 f2 f3 g4 g5 g6 g7 g8", "f1 f2 f3 h4 h5 h6 h7 h8"))]
    result = evaluate_rows(rows, task="factrecall_en_16k")
    assert result["metrics"]["lveval"] == 54.37 == ref.scorer("factrecall_en_16k", rows)[0]


def test_rouge_l_equals_the_rouge_package_on_random_texts():
    rng = random.Random(7)
    pieces = ["a", "b", "c", "d", "", " ", ".", "  ", "e f", ". .", "北京", "的"]
    for _ in range(3000):
        hyp = " ".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))
        reference = " ".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))
        try:
            got = rouge_l(hyp, reference)
        except RougeUnavailable:
            got = 0.0
        assert got == ref.rouge_score(hyp, reference), (hyp, reference)


def test_rouge_recursion_limit_is_lvevals():
    prediction = " ".join(f"w{i}" for i in range(1, 301))
    fits = prediction + " " + " ".join(f"x{i}" for i in range(689))
    assert rouge_l(prediction, fits) == ref.rouge_score(prediction, fits) > 0
    with pytest.raises(RougeUnavailable):
        rouge_l(prediction, fits + " x689")
    assert RECON_CALL_LIMIT == ref.RECON_CALL_LIMIT
    row = score_row("dureader_mixup_16k", prediction, [fits + " x689"])
    assert row.value == 0.0 and "recursive" in row.note
    assert score_row("dureader_mixup_16k", prediction, [fits + " x689"], profile="fixed").value > 0.4


def test_crashes_of_lveval_become_notes_not_exceptions(tmp_path):
    folder, cases = write_bad_folder(tmp_path)
    crashing = [c for c in cases if c.upstream == "ZeroDivisionError" and c.line]
    assert len(crashing) == 3
    for case in crashing:
        parsed = parse_lveval_file(case.file, (folder / case.file).read_bytes())
        run = score_files("broken", [parsed])
        assert [(n["file"], n["line"]) for n in run.notes] == [(case.file, case.line)]
        assert "normalises to nothing" in run.notes[0]["note"] and "divides by zero" in run.notes[0]["note"]
        assert run.notes[0]["note"].startswith("gold_ans" if case.field == "gold_ans" else "the answer")
        assert run.cells[(parsed.dataset, parsed.level)] == round(100 * (len(parsed.rows) - 1) / len(parsed.rows), 2)


@pytest.mark.parametrize("problem", ["unknown dataset", "unknown level", "missing", "invalid JSON", "not a string",
                                     "not a list", "no rows", "a string or null"])
def test_bad_files_are_refused_with_file_line_and_field(tmp_path, problem):
    folder, cases = write_bad_folder(tmp_path)
    for case in (c for c in cases if c.problem == problem):
        with pytest.raises(FileFormatError) as caught:
            parse_lveval_file(case.file, (folder / case.file).read_bytes())
        assert caught.value.file == case.file
        assert caught.value.line == case.line
        if case.field:
            assert caught.value.field == case.field


def test_two_files_for_one_cell_are_refused(tmp_path):
    row = {"pred": "a", "answers": ["a"], "gold_ans": None, "input": "q", "length": 1}
    first = write_rows(tmp_path / "m" / "cmrc_mixup_16k.jsonl", [row])
    second = write_rows(tmp_path / "m" / "cmrc_mixup_16k.v2.jsonl", [row])
    with pytest.raises(FileFormatError, match="second file for cmrc_mixup_16k"):
        evaluate_folder([first, second], "m")


def test_string_answers_official_first_character_fixed_whole_string():
    official = score_row("factrecall_en_16k", "Orrin Vale", "Orrin Vale")
    assert (official.value, official.note) == (0.0, NOTE_STRING_ANSWERS)
    assert score_row("factrecall_en_16k", "Orrin Vale", "Orrin Vale", profile="fixed").value == 1.0


def test_fixed_dureader_does_not_match_punctuation_to_punctuation():
    assert score_row("dureader_mixup_16k", "！？！", ["。。！！"]).value == pytest.approx(0.999999995)
    assert score_row("dureader_mixup_16k", "！？！", ["。。！！"], profile="fixed").value == 0.0


def test_u2028_inside_a_row_is_read_whole(tmp_path):
    path = write_rows(tmp_path / "m" / "factrecall_en_16k.jsonl",
                      [{"pred": "Orrin\u2028Vale", "answers": ["Orrin Vale"], "gold_ans": None, "input": "q"}])
    run = evaluate_folder([path], "m")
    assert run.cells[("factrecall_en", "16k")] == 100.0
    assert json.loads(result_json_text(run.cells)) == {"factrecall_en_16k": 100.0}


def test_needle_depth_comes_from_a_depth_field_or_the_rows_context(tmp_path):
    from app.core.metrics.files import Row, parse_lveval_row

    base = {"pred": "Orrin Vale", "answers": ["Orrin Vale"], "input": "Who founded Lumeria?"}
    assert parse_lveval_row(Row(1, {**base, "depth": 0.25}), "f.jsonl").depth == 0.25
    context = "x" * 300 + "Orrin Vale founded Lumeria." + "y" * 673
    assert parse_lveval_row(Row(2, {**base, "context": context}), "f.jsonl").depth == 0.3
    assert parse_lveval_row(Row(3, {**base, "context": "no needle here"}), "f.jsonl").depth is None
    assert parse_lveval_row(Row(4, base), "f.jsonl").depth is None  # LV-Eval's own rows: unknown, not guessed
    # LV-Eval never reads `depth`, so a bad one cannot keep the row out: it is dropped and noted.
    outside = parse_lveval_row(Row(5, {**base, "depth": 1.5}), "f.jsonl")
    assert outside.depth is None and outside.notes[0].startswith("depth: not between 0")


def test_fields_lveval_never_reads_are_ignored_and_noted_not_refused(tmp_path):
    """Lone CR and mixed line ends, non-string tails of `answers`, an object as `answers`, empty or unread
    `gold_ans` of any type, and bad `input` / `length` / `depth`: LV-Eval scores all of them, and so do we."""
    folder = write_lenient_folder(tmp_path)
    expected = ref.evaluate_folder(folder)
    run = evaluate_folder(_jsonl(folder), folder.name)
    assert result_json_text(run.cells) == expected["result_json_text"]
    assert run.as_dict()["result_csv"] == expected["result_csv_text"]
    notes = {}
    for path in _jsonl(folder):
        parsed = parse_lveval_file(path.name, path.read_bytes())
        dataset = path.name.split(".")[0]
        want = expected["row_scores"][dataset]
        assert len(parsed.rows) == len(want), path.name  # a lone CR ends a line, as in text mode
        assert [score_row(dataset, r.pred, r.answers, r.gold_ans).value for r in parsed.rows] == want, path.name
        assert [row["pred"] for row in read_rows(path)] == [r.pred for r in parsed.rows]  # `eval FILE` too
        notes.update({(path.name, r.line): r.notes for r in parsed.rows if r.notes})
    assert [n.split(":")[0] for n in notes[("factrecall_zh_16k.jsonl", 1)]] == ["gold_ans"]
    assert "ignored" in notes[("factrecall_zh_16k.jsonl", 2)][0] and "length" in notes[("factrecall_zh_16k.jsonl", 2)][0]
    assert notes[("factrecall_zh_16k.jsonl", 3)][0].startswith("input")
    assert notes[("factrecall_zh_16k.jsonl", 4)][0].startswith("depth")
    assert "first key" in notes[("hotpotwikiqa_mixup_16k.jsonl", 1)][0]
    assert all(notes[("hotpotwikiqa_mixup_16k.jsonl", line)][0].startswith("gold_ans: an empty") for line in (2, 3, 4))
    assert notes[("hotpotwikiqa_mixup_16k.jsonl", 5)][0].startswith("depth")
    assert ("cmrc_mixup_32k.jsonl", 1) in notes and ("dureader_mixup_32k.jsonl", 2) in notes


def test_lenient_folder_rows_keep_their_first_answer_and_drop_unread_values(tmp_path):
    folder = write_lenient_folder(tmp_path)
    parsed = parse_lveval_file("hotpotwikiqa_mixup_16k.jsonl", (folder / "hotpotwikiqa_mixup_16k.jsonl").read_bytes())
    assert parsed.rows[0].answers == ("Orrin Vale", "Other")
    assert [r.gold_ans for r in parsed.rows] == [None, None, None, None, "Orrin Vale"]
    assert parsed.rows[3].length is None and parsed.rows[4].depth is None
    dureader = parse_lveval_file("dureader_mixup_32k.jsonl", (folder / "dureader_mixup_32k.jsonl").read_bytes())
    assert dureader.rows[0].answers == ("星海城是林远舟创建的", 3, None) and dureader.rows[0].gold_ans is None
