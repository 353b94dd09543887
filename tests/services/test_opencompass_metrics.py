"""OpenCompass's output for L-Eval predictions scores exactly as the same predictions in L-Eval's own format."""
from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import select

from app.core.metrics import PROFILES
from app.extensions import db
from app.models import MetricAggregate, MetricResult, Prediction, System
from app.services.importers import import_path
from app.services.metrics import score_system
from app.services.uploads.opencompass_folder import import_opencompass_folder
from tests.support.opencompass import rows_from_leval, write_dataset

MODEL = "turbo-16k-0613"
# (task file, predictions, OpenCompass abbr, parts, documents kept): a split dataset (topic_retrieval_longchat's
# 1st/2nd/3rd-topic groups run across its parts), both prompt forms, exam, F1 and ROUGE rows, quality's letter
# gold, copies of documents and questions. The first documents of a long task keep the test fast; L-Eval's
# prediction files follow their task file's order, so the same predictions are kept on both sides.
DATASETS = [
    ("Closed-ended-tasks/quality.jsonl", "exam_eval", "LEval_quality", 1, 5),
    ("Closed-ended-tasks/topic_retrieval_longchat.jsonl", "exam_eval", "LEval_topic_retrieval", 3, 20),
    ("Open-ended-tasks/gov_report_summ.jsonl", "ngram_eval", "LEval_gov_report_summ", 1, None),
    ("Open-ended-tasks/financial_qa.jsonl", "ngram_eval", "LEval_financialqa", 2, None),
]


def first_lines(path: Path, count: int | None) -> bytes:
    lines = path.read_bytes().splitlines(keepends=True)
    return b"".join(lines if count is None else lines[:count])


def stored_metrics(name: str) -> tuple[dict, dict]:
    sid = db.session.scalar(select(System.id).where(System.name == name))
    aggregates = {(a.task, a.metric, a.profile): (a.value, a.n) for a in
                  db.session.scalars(select(MetricAggregate).where(MetricAggregate.system_id == sid))}
    per_question = {(p.question_id, r.metric, r.profile): r.value for r, p in db.session.execute(
        select(MetricResult, Prediction).join(Prediction, MetricResult.prediction_id == Prediction.id)
        .where(MetricResult.system_id == sid))}
    return aggregates, per_question


def test_opencompass_folder_scores_as_leval_format(app, shared_leval, tmp_path):
    tasks, leval_format = tmp_path / "tasks", tmp_path / "leval" / MODEL
    tasks.mkdir()
    leval_format.mkdir(parents=True)
    opencompass = tmp_path / "outputs" / "20240101_000000"
    for i, (task_file, folder, abbr, parts, documents) in enumerate(DATASETS):
        source = shared_leval / "LEval-data" / task_file
        task_copy = tasks / source.name
        task_copy.write_bytes(first_lines(source, documents))
        questions = sum(len(json.loads(line)["instructions"]) for line in task_copy.read_text().splitlines())
        pred_file = shared_leval / "Predictions" / folder / MODEL / f"{source.stem}.pred.jsonl"
        pred_copy = leval_format / pred_file.name
        pred_copy.write_bytes(first_lines(pred_file, questions if documents else None))
        rows = rows_from_leval(task_copy, pred_copy, as_messages=i % 2 == 0)
        write_dataset(opencompass, "turbo-oc", abbr, rows, parts=parts)
    assert (opencompass / "predictions" / "turbo-oc" / "LEval_topic_retrieval_2.json").exists()
    with app.app_context():
        assert not import_path(tasks).failed
        report = import_path(tmp_path / "leval")
        assert not report.failed and report.unmatched == 0
        result = import_opencompass_folder(opencompass)
        assert result.error is None and not result.invalid, [p.errors for p in result.previews]
        assert sum(item["created"] for item in result.imported) == sum(f.counts["created"] for f in report.files)
        for name in (MODEL, "turbo-oc"):
            score_system(db.session.scalar(select(System.id).where(System.name == name)), profiles=PROFILES)
        expected_aggregates, expected_items = stored_metrics(MODEL)
        aggregates, items = stored_metrics("turbo-oc")
    assert expected_aggregates and expected_items
    assert aggregates == expected_aggregates
    assert items == expected_items
    assert {task for task, _, _ in aggregates} >= {"quality", "topic_retrieval_longchat", "gov_report_summ",
                                                    "financial_qa"}


def test_opencompass_lveval_folder_scores_as_lveval_format(app, tmp_path):
    """LV-Eval datasets (demo data: the model's own files first, which store the questions), one of them split;
    two of them of loaders that append the keywords to the gold (restated in tests/support/opencompass_lveval.py)."""
    from app.services.demo import DEMO_PATH
    from tests.support.opencompass_lveval import rows_from_lveval

    source = DEMO_PATH / "lveval" / "heron-13b-128k"
    files = [source / f"{d}_16k.jsonl" for d in ("cmrc_mixup", "hotpotwikiqa_mixup", "lic_mixup", "factrecall_zh")]
    own = tmp_path / "lveval" / "heron-13b-128k"
    own.mkdir(parents=True)
    out = tmp_path / "outputs"
    for i, path in enumerate(files):
        (own / path.name).write_bytes(path.read_bytes())
        write_dataset(out, "heron-oc", f"LVEval_{path.stem}", rows_from_lveval(path), parts=2 if i == 0 else 1)
    with app.app_context():
        assert not import_path(tmp_path / "lveval").failed
        result = import_opencompass_folder(out)
        assert result.error is None and not result.invalid, [p.errors for p in result.previews]
        assert sum(item["created"] for item in result.imported) == sum(
            len(path.read_text(encoding="utf-8").splitlines()) for path in files)
        assert all(item["questions_new"] == 0 for item in result.imported)
        for name in ("heron-13b-128k", "heron-oc"):
            score_system(db.session.scalar(select(System.id).where(System.name == name)), profiles=PROFILES)
        expected_aggregates, expected_items = stored_metrics("heron-13b-128k")
        aggregates, items = stored_metrics("heron-oc")
    assert expected_aggregates and expected_items
    assert aggregates == expected_aggregates
    assert items == expected_items
