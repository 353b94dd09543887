"""Importers: the three L-Eval formats, transactions, idempotency, BOM/CRLF, clear errors."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import Prediction, Question, Reference, System
from app.services import summary
from app.services.importers import import_path
from app.core.metrics.files import parse_jsonl
from app.core.metrics.files import FileFormatError as ImportFailure

REF = {
    "instructions": ["What colour is the boat?", "Who sails it?"],
    "outputs": ["The boat is red.", "Mira sails it."],
    "gpt4_outputs": ["It is red.", "Mira."],
    "claude_outputs": ["The boat is painted red.", "A sailor named Mira."],
    "input": "Mira owns a red boat. She sails it every morning.\n\nThe harbour is calm.",
    "source": "multidoc_qa",
    "evaluation": "human",
}


def write_jsonl(path: Path, rows: list[dict], *, bom: bool = False, crlf: bool = False) -> Path:
    text = ("\r\n" if crlf else "\n").join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n"
    data = text.encode("utf-8")
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data)
    return path


def pred_rows(key: str = "tiny-model_pred") -> list[dict]:
    return [
        {"query": q, "gt": gt, key: f"answer {i}", "evaluation": "human"}
        for i, (q, gt) in enumerate(zip(REF["instructions"], REF["outputs"]))
    ]


@pytest.fixture
def tiny_set(tmp_path) -> Path:
    folder = tmp_path / "tiny"
    folder.mkdir()
    write_jsonl(folder / "tiny.ref.jsonl", [REF])
    write_jsonl(folder / "tiny-model.pred.jsonl", pred_rows())
    return folder


def test_reference_and_prediction_import(app, tiny_set):
    with app.app_context():
        report = import_path(tiny_set)
        assert not report.failed
        counts = summary.counts()
        assert (counts["documents"], counts["questions"], counts["references"]) == (1, 2, 6)
        assert (counts["systems"], counts["predictions"]) == (1, 2)
        kinds = db.session.scalars(select(Reference.kind).order_by(Reference.id)).all()
        assert sorted(set(kinds)) == ["claude-100k", "gpt4-32k", "human"]
        system = db.session.scalars(select(System)).one()
        assert system.name == "tiny-model" and system.pred_key == "tiny-model_pred" and not system.is_demo


def test_reimport_changes_nothing(app, tiny_set):
    with app.app_context():
        import_path(tiny_set)
        before = summary.counts()
        report = import_path(tiny_set)
        assert summary.counts() == before
        pred_report = next(f for f in report.files if f.format == "predictions")
        assert pred_report.counts["unchanged"] == 2 and pred_report.counts["created"] == 0


def test_bom_and_crlf_are_accepted(app, tmp_path):
    folder = tmp_path / "bom"
    folder.mkdir()
    write_jsonl(folder / "a.ref.jsonl", [REF], bom=True, crlf=True)
    write_jsonl(folder / "tiny-model.pred.jsonl", pred_rows(), bom=True, crlf=True)
    with app.app_context():
        report = import_path(folder)
        assert not report.failed
        assert summary.counts()["predictions"] == 2


def test_whitespace_differences_still_match(app, tmp_path):
    folder = tmp_path / "ws"
    folder.mkdir()
    write_jsonl(folder / "a.ref.jsonl", [REF])
    rows = pred_rows()
    rows[0]["query"] = "  What   colour is\nthe boat? "
    write_jsonl(folder / "tiny-model.pred.jsonl", rows)
    with app.app_context():
        report = import_path(folder)
        assert report.unmatched == 0 and summary.counts()["predictions"] == 2


def test_bad_line_rejects_whole_file_naming_line_and_field(app, tmp_path):
    folder = tmp_path / "bad"
    folder.mkdir()
    write_jsonl(folder / "a.ref.jsonl", [REF])
    rows = pred_rows()
    rows[1]["tiny-model_pred"] = 42
    write_jsonl(folder / "tiny-model.pred.jsonl", rows)
    with app.app_context():
        report = import_path(folder)
        [failed] = report.failed
        assert failed.error == {
            "file": "tiny-model.pred.jsonl", "line": 2, "field": "tiny-model_pred",
            "message": "expected a string, got int",
        }
        assert summary.counts()["predictions"] == 0
        assert summary.counts()["systems"] == 0  # nothing half-imported


def test_duplicate_query_gt_is_an_error(app, tmp_path):
    folder = tmp_path / "dup"
    folder.mkdir()
    write_jsonl(folder / "a.ref.jsonl", [REF])
    rows = pred_rows()
    write_jsonl(folder / "tiny-model.pred.jsonl", rows + [rows[0]])
    with app.app_context():
        [failed] = import_path(folder).failed
        assert failed.error["line"] == 3 and "duplicate" in failed.error["message"]
        assert summary.counts()["predictions"] == 0


def test_unmatched_rows_are_counted_with_examples(app, tmp_path):
    folder = tmp_path / "unmatched"
    folder.mkdir()
    write_jsonl(folder / "a.ref.jsonl", [REF])
    rows = pred_rows() + [{"query": "Unknown question?", "gt": "x", "tiny-model_pred": "y", "evaluation": "human"}]
    write_jsonl(folder / "tiny-model.pred.jsonl", rows)
    with app.app_context():
        report = import_path(folder)
        pred = next(f for f in report.files if f.format == "predictions")
        assert pred.counts["unmatched"] == 1 and pred.counts["unmatched_human"] == 1
        assert pred.counts["unmatched_examples"] == ["line 3: Unknown question?"]


def test_conflicting_prediction_is_kept_unless_replace(app, tmp_path, tiny_set):
    other = tmp_path / "other"
    other.mkdir()
    rows = pred_rows()
    rows[0]["tiny-model_pred"] = "a different answer"
    write_jsonl(other / "tiny-model.pred.jsonl", rows)
    with app.app_context():
        import_path(tiny_set)
        report = import_path(other)
        assert report.files[0].counts["conflicts"] == 1
        texts = db.session.scalars(select(Prediction.text).order_by(Prediction.id)).all()
        assert texts[0] == "answer 0"
        report = import_path(other, replace=True)
        assert report.files[0].counts["replaced"] == 1
        assert db.session.scalars(select(Prediction.text).order_by(Prediction.id)).first() == "a different answer"


def test_task_file_repeated_context_shares_one_document(app, tmp_path):
    task_dir = tmp_path / "LEval-data" / "Closed-ended-tasks"
    task_dir.mkdir(parents=True)
    context = "Shared few-shot context. " * 20
    rows = [
        {"instructions": [f"Question {i}?"], "outputs": [str(i)], "input": context, "evaluation": "exam"}
        for i in range(3)
    ]
    write_jsonl(task_dir / "gsm100.jsonl", rows)
    with app.app_context():
        import_path(tmp_path)
        import_path(tmp_path)
        counts = summary.counts()
        assert (counts["documents"], counts["questions"], counts["references"]) == (1, 3, 3)
        positions = db.session.scalars(select(Question.position).order_by(Question.position)).all()
        assert positions == [0, 1, 2]


@pytest.mark.parametrize(
    ("raw", "line", "message"),
    [
        (b'{"a": 1}\n{"a": \n', 2, "invalid JSON"),
        (b'{"a": 1}\n[1, 2]\n', 2, "expected a JSON object"),
        (b'{"a": 1}\n{"a": "\xff"}\n', 2, "not valid UTF-8"),
        (b"\n\n", None, "no JSON lines"),
    ],
)
def test_parse_jsonl_locates_problems(raw, line, message):
    with pytest.raises(ImportFailure) as info:
        parse_jsonl(raw, "x.jsonl")
    assert info.value.line == line and message in info.value.message and info.value.file == "x.jsonl"


# --- the published L-Eval data (../shared/leval) ---------------------------------------


def test_human_eval_subset_counts(app, shared_leval):
    with app.app_context():
        report = import_path(shared_leval / "Predictions" / "human_eval")
        assert not report.failed and report.unmatched == 0
        counts = summary.counts()
        assert {k: counts[k] for k in ("documents", "questions", "references", "systems", "predictions")} == {
            "documents": 12, "questions": 85, "references": 255, "systems": 7, "predictions": 595,
        }
        gpt4 = db.session.scalars(select(System).where(System.name == "gpt4-32k")).one()
        assert gpt4.pred_key == "gpt4-x_pred"
        import_path(shared_leval / "Predictions" / "human_eval")
        assert summary.counts() == counts


def test_truncated_fourth_line_rejects_file(app, shared_leval, tmp_path):
    folder = tmp_path / "human_eval"
    folder.mkdir()
    source = shared_leval / "Predictions" / "human_eval"
    shutil.copy(source / "claude.gpt4.ref.jsonl", folder)
    lines = (source / "turbo-16k-0613.pred.jsonl").read_bytes().split(b"\n")
    lines[3] = lines[3][: len(lines[3]) // 2]
    (folder / "turbo-16k-0613.pred.jsonl").write_bytes(b"\n".join(lines))
    with app.app_context():
        report = import_path(folder)
        [failed] = report.failed
        assert failed.error["line"] == 4 and failed.error["file"] == "turbo-16k-0613.pred.jsonl"
        assert summary.counts()["predictions"] == 0
