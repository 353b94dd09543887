"""A folder import holds one file at a time (issue 38): its peak memory does not grow with the folder,
and each file is still imported whole or not at all.

Memory is measured with tracemalloc (allocations, not time) around import_path on folders of the same
files, one four times the other.
"""
from __future__ import annotations

import json
import shutil
import tracemalloc

from sqlalchemy import func, select

from app.extensions import db
from app.models import Prediction, System
from app.services.importers import import_path
from tests.support.study_data import write_study_set

SYSTEMS = [f"model-{i:02d}" for i in range(24)]


def _folder(tmp_path, name: str, systems: list[str], documents: int = 4):
    folder = write_study_set(tmp_path / name, documents=documents, questions_each=40, systems=systems)
    for system in systems:  # long answers, as models write them: the files weigh what real ones do
        path = folder / f"{system}.pred.jsonl"
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        for row in rows:
            row[f"{system}_pred"] += " " + " ".join(f"word{i}" for i in range(400))
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return folder


def _peak_of_import(app, folder) -> int:
    with app.app_context():
        tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            base, _ = tracemalloc.get_traced_memory()
            report = import_path(folder)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert not report.failed, report.failed
        return peak - base


def test_a_folder_import_s_peak_memory_does_not_grow_with_the_number_of_files(app, tmp_path):
    small = _folder(tmp_path, "small", SYSTEMS[:6])
    large = _folder(tmp_path, "large", SYSTEMS[6:])
    shutil.copy(small / "study.ref.jsonl", large / "study.ref.jsonl")  # the same documents: known by then
    small_peak = _peak_of_import(app, small)
    large_peak = _peak_of_import(app, large)
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(Prediction)) == 24 * 160
    assert large_peak < 1.3 * small_peak, (small_peak, large_peak)


def test_a_bad_line_still_leaves_its_whole_file_out_and_the_others_in(app, tmp_path):
    folder = _folder(tmp_path, "data", SYSTEMS[:3])
    bad = folder / f"{SYSTEMS[1]}.pred.jsonl"
    lines = bad.read_text().splitlines()
    lines[100] = lines[100][:-1]  # a broken JSON line deep in the file
    bad.write_text("\n".join(lines) + "\n")
    with app.app_context():
        report = import_path(folder)
        assert [(f.file, f.error["line"]) for f in report.failed] == [(bad.name, 101)]
        stored = dict(db.session.execute(select(System.name, func.count(Prediction.id))
                                         .join(Prediction, Prediction.system_id == System.id).group_by(System.name)).all())
        assert stored == {SYSTEMS[0]: 160, SYSTEMS[2]: 160}


# --- one long file: parsed, matched and written in chunks (importers/runner.import_prediction_file) ---------------

def _grown(tmp_path, name: str, documents: int):
    return _folder(tmp_path, name, [f"long-{name}"], documents)


def _peak_of_file(app, folder, system: str) -> int:
    """Peak memory of importing one prediction file whose documents are already stored."""
    documents = folder.parent / f"{folder.name}-documents"
    documents.mkdir()
    shutil.move(folder / "study.ref.jsonl", documents / "study.ref.jsonl")
    with app.app_context():
        assert not import_path(documents).failed
    return _peak_of_import(app, folder / f"{system}.pred.jsonl")


def test_one_file_s_peak_memory_does_not_grow_with_its_length(app, tmp_path, monkeypatch):
    from app.services.importers import runner

    monkeypatch.setattr(runner, "STAGE_ROWS", 40)
    short = _peak_of_file(app, _grown(tmp_path, "short", 4), "long-short")      # 160 rows, 4 chunks
    long = _peak_of_file(app, _grown(tmp_path, "long", 16), "long-long")        # 640 rows, 16 chunks
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(Prediction)) == 160 + 640
    assert long < 1.5 * short, (short, long)


def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write_rows(path, rows):
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def test_a_file_streamed_in_chunks_stores_every_row_against_its_own_question(app, tmp_path, monkeypatch):
    from app.models import PredictionFile, Question
    from app.services.importers import runner

    monkeypatch.setattr(runner, "STAGE_ROWS", 7)  # 45 rows: six full chunks and a short one
    folder = write_study_set(tmp_path / "data", documents=3, questions_each=15, systems=["chunked"])
    path = folder / "chunked.pred.jsonl"
    rows = _rows(path)
    rows[8]["query"] = "A question no document asks"           # line 9: unmatched, in the second chunk
    rows[43]["query"] = "这个问题没有任何文档提出"                  # line 44: unmatched, in the last chunk
    _write_rows(path, rows)
    with app.app_context():
        report = import_path(folder)
        assert not report.failed, report.failed
        counts = next(f for f in report.files if f.file == "chunked.pred.jsonl").counts
        assert (counts["rows"], counts["matched"], counts["created"], counts["unmatched"]) == (45, 43, 43, 2)
        assert counts["unmatched_lines"] == [9, 44]
        stored = db.session.execute(select(Prediction.line_no, Prediction.text, Question.instruction)
                                    .join(Question, Question.id == Prediction.question_id)).all()
        assert len(stored) == 43
        for line, text, instruction in stored:  # each row landed on the question its own line asks
            assert rows[line - 1]["query"] == instruction and rows[line - 1]["chunked_pred"] == text
        assert db.session.execute(select(PredictionFile.rows, PredictionFile.matched, PredictionFile.unmatched)).one() \
            == (45, 43, 2)
        # Again with one answer changed and --replace: the chunks find what is stored.
        rows[30]["chunked_pred"] = "A changed answer: 七十七 visitors."
        _write_rows(path, rows)
        counts = next(f for f in import_path(path, replace=True).files).counts
        assert (counts["replaced"], counts["unchanged"], counts["unmatched"]) == (1, 42, 2)
        assert db.session.scalar(select(Prediction.text).where(Prediction.line_no == 31)) == rows[30]["chunked_pred"]


def test_a_bad_row_in_the_last_chunk_leaves_the_whole_file_out(app, tmp_path, monkeypatch):
    from app.models import PredictionFile
    from app.services.importers import runner

    monkeypatch.setattr(runner, "STAGE_ROWS", 7)
    folder = write_study_set(tmp_path / "data", documents=3, questions_each=15, systems=["chunked"])
    path = folder / "chunked.pred.jsonl"
    rows = _rows(path)
    del rows[41]["gt"]  # line 42: six chunks were written before it
    _write_rows(path, rows)
    with app.app_context():
        report = import_path(folder)
        [failed] = report.failed
        assert (failed.file, failed.error["line"], failed.error["field"]) == ("chunked.pred.jsonl", 42, "gt")
        assert db.session.scalar(select(func.count()).select_from(Prediction)) == 0
        assert db.session.scalar(select(func.count()).select_from(PredictionFile)) == 0
        assert db.session.scalar(select(func.count()).select_from(System)) == 0


def test_a_row_repeated_in_a_later_chunk_is_a_duplicate_naming_the_first_line(app, tmp_path, monkeypatch):
    from app.services.importers import runner

    monkeypatch.setattr(runner, "STAGE_ROWS", 7)
    folder = write_study_set(tmp_path / "data", documents=3, questions_each=15, systems=["chunked"])
    path = folder / "chunked.pred.jsonl"
    rows = _rows(path)
    rows[20] = dict(rows[1])  # line 21 repeats line 2's (query, gt), two chunks later
    _write_rows(path, rows)
    with app.app_context():
        [failed] = import_path(folder).failed
        assert failed.error["line"] == 21 and "already on line 2" in failed.error["message"]
        assert db.session.scalar(select(func.count()).select_from(Prediction)) == 0


def test_l_eval_s_own_files_streamed_in_chunks_match_as_the_whole_file_preview_does(app, tmp_path, monkeypatch):
    """L-Eval's published files (../shared, copied to a temp folder): the human-evaluation subset's seven systems
    (gpt4-32k's key is gpt4-x_pred) and three systems' financial_qa answers against the task file. Streamed seven
    rows at a time, each file matches exactly what the whole-file preview counts, and every stored answer is its
    own line's text on its own line's question."""
    from app.core.metrics.files import describe_file, parse_jsonl
    from app.core.text import match_key
    from app.models import PredictionFile, Question
    from app.services.importers import runner
    from app.services.importers.predictions import parse_prediction_rows, preview_predictions
    from tests.support.shared import PREDICTIONS, SHARED_LEVAL, require_human_eval

    human_eval = require_human_eval()
    documents, answers = tmp_path / "documents", tmp_path / "answers"
    documents.mkdir()
    shutil.copy(human_eval / "claude.gpt4.ref.jsonl", documents)
    shutil.copy(SHARED_LEVAL / "LEval-data" / "Open-ended-tasks" / "financial_qa.jsonl", documents)
    for path in human_eval.glob("*.pred.jsonl"):
        (answers / "human_eval").mkdir(parents=True, exist_ok=True)
        shutil.copy(path, answers / "human_eval")
    for model in ("llama2-13b-chat-4k", "turbo-16k-0613", "vicuna-13b-16k"):
        (answers / model).mkdir(parents=True)
        shutil.copy(PREDICTIONS / "ngram_eval" / model / "financial_qa.pred.jsonl", answers / model)
    monkeypatch.setattr(runner, "STAGE_ROWS", 7)
    with app.app_context():
        assert not import_path(documents).failed
        files = sorted(answers.rglob("*.pred.jsonl"))
        expected = {}
        for path in files:  # what one pass over the whole file counts
            task, system = describe_file(path, fallback=False)
            rows = parse_jsonl(path.read_bytes(), path.name)
            counts = preview_predictions(parse_prediction_rows(rows, path.name, system, task), name=path.name)
            expected[str(path.relative_to(answers))] = (counts.rows, counts.matched, counts.unmatched, counts.created)
        report = import_path(answers)
        assert not report.failed, report.failed
        got = {f.file: tuple(f.counts[k] for k in ("rows", "matched", "unmatched", "created")) for f in report.files}
        assert got == expected
        assert sum(matched for _, matched, _, _ in got.values()) >= 7 * 85 + 3 * 40
        lines = {str(path.relative_to(answers)): path.read_text(encoding="utf-8").splitlines() for path in files}
        stored = db.session.execute(
            select(PredictionFile.filename, System.pred_key, Prediction.line_no, Prediction.text, Question.match_key)
            .join(PredictionFile, PredictionFile.id == Prediction.file_id).join(System, System.id == Prediction.system_id)
            .join(Question, Question.id == Prediction.question_id)).all()
        assert len(stored) == sum(matched for _, matched, _, _ in got.values())
        for filename, pred_key, line, text, key in stored:
            row = json.loads(lines[filename][line - 1])
            assert row[pred_key] == text and match_key(row["query"], row["gt"]) == key, (filename, line)
