"""Importing LV-Eval model folders: upload (preview, line-numbered errors, a model whole or not at all),
`python run.py import-lveval`, questions matched across models, and the metrics job's table."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import Document, Job, LvevalItem, MetricAggregate, MetricResult, Prediction, Question, System
from app.models.corpus import LVEVAL
from app.services.lveval import import_models
from app.services.metrics.compute import score_system
from tests.support import lveval_reference as ref
from tests.support.lveval_data import DATASETS, LEVELS, write_bad_folder, write_lenient_folder, write_model, write_rows
from tests.support.predictions import batch_id, confirm, make_zip, post_upload


def zip_folder(folder: Path) -> bytes:
    return make_zip({f"{folder.name}/{p.name}": p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()})


def lveval_counts(app) -> tuple[int, int, int]:
    with app.app_context():
        documents = db.session.scalar(select(func.count()).select_from(Document).where(Document.collection == LVEVAL))
        questions = db.session.scalar(select(func.count()).select_from(Question).join(Document)
                                      .where(Document.collection == LVEVAL))
        predictions = db.session.scalar(select(func.count()).select_from(Prediction))
        return documents, questions, predictions


def cells(app, system: str, profile: str = "official") -> dict[str, float]:
    with app.app_context():
        system_id = db.session.scalar(select(System.id).where(System.name == system))
        return {a.task: a.value for a in db.session.scalars(select(MetricAggregate).where(
            MetricAggregate.system_id == system_id, MetricAggregate.profile == profile,
            MetricAggregate.metric == "lveval"))}


@pytest.fixture
def researcher(app, client, auth):
    auth.login("researcher")
    return client


def test_upload_previews_then_imports_a_model_whole(app, researcher, auth, tmp_path):
    folder = write_model(tmp_path, "alpha-32k", rows=10, window=32_000)
    response = post_upload(researcher, auth, [("alpha.zip", zip_folder(folder))])
    page = researcher.get(f"/predictions/uploads/{batch_id(response)}").get_data(as_text=True)
    assert page.count('class="file-preview is-ok"') == 55
    assert "LV-Eval (dataset and level from the file name" in page
    assert 'data-field="new-questions">10<' in page  # nothing stored yet: every question is new
    assert "answers is empty: LV-Eval&#39;s loop never runs" in page  # notes name the line
    assert lveval_counts(app) == (0, 0, 0), "the preview writes nothing"
    result = confirm(researcher, auth, batch_id(response))
    assert result.status_code == 302
    assert lveval_counts(app) == (55, 550, 550)
    with app.app_context():
        job = db.session.scalars(select(Job).where(Job.kind == "metrics")).one()
        assert job.params["system"] == "alpha-32k"
        score_system(job.params["system_id"])
        db.session.commit()
        items = db.session.scalar(select(func.count()).select_from(LvevalItem))
        assert items == 550
    assert cells(app, "alpha-32k") == ref.evaluate_folder(folder)["result_json"]


def test_a_second_model_reuses_the_questions(app, tmp_path):
    alpha = write_model(tmp_path, "alpha", seed=1, rows=8, datasets=["factrecall_zh", "lic_mixup"])
    beta = write_model(tmp_path, "beta", seed=2, rows=8, datasets=["factrecall_zh", "lic_mixup"], skill=0.2)
    with app.app_context():
        first = import_models(alpha)
        second = import_models(beta)
        assert first.models[0].counts["questions_new"] == 80
        assert second.models[0].counts["questions_new"] == 0 and second.models[0].counts["created"] == 80
        # factrecall repeats one question per row: the k-th row is matched to the k-th question.
        alpha_q = db.session.scalars(select(Prediction.question_id).join(System)
                                     .where(System.name == "alpha").order_by(Prediction.question_id)).all()
        beta_q = db.session.scalars(select(Prediction.question_id).join(System)
                                    .where(System.name == "beta").order_by(Prediction.question_id)).all()
        assert alpha_q == beta_q
        for name in ("alpha", "beta"):
            score_system(db.session.scalar(select(System.id).where(System.name == name)))
        db.session.commit()
    assert cells(app, "alpha") == ref.evaluate_folder(alpha)["result_json"]
    assert cells(app, "beta") == ref.evaluate_folder(beta)["result_json"]


def test_bad_upload_names_file_line_and_field_and_imports_nothing_of_that_model(app, researcher, auth, tmp_path):
    folder, cases = write_bad_folder(tmp_path)
    good = write_rows(folder / "cmrc_mixup_16k.jsonl", [{"pred": "林远舟", "answers": ["林远舟"], "input": "谁？"}])
    response = post_upload(researcher, auth, [("broken.zip", zip_folder(folder))])
    page = researcher.get(f"/predictions/uploads/{batch_id(response)}").get_data(as_text=True)
    assert "<strong>line 2</strong> field <code>answers</code>: missing" in page
    assert "unknown LV-Eval length level in &#39;cmrc_mixup_48k&#39;" in page
    assert "unknown LV-Eval dataset in &#39;narrativeqa_mixup_16k&#39;" in page
    assert "<strong>line 1</strong> field <code>pred</code>: is null" in page
    assert f"broken-model/{good.name}" in page and "model broken-model is imported whole" in page
    assert "No file can be imported" in page
    # gold_ans normalising to nothing is not an error: the row is imported and noted.
    assert "gold_ans normalises to nothing: LV-Eval divides by zero here" in page
    assert lveval_counts(app) == (0, 0, 0)


def test_cli_import_reports_and_refuses_a_broken_model(app, runner, tmp_path):
    folder, _ = write_bad_folder(tmp_path)
    result = runner.invoke(args=["import-lveval", str(folder)])
    assert result.exit_code == 1
    assert "FAILED  broken-model: nothing imported" in result.output
    assert "broken-model/hotpotwikiqa_mixup_16k.jsonl, line 2, field 'answers': missing" in result.output
    assert lveval_counts(app)[2] == 0


def test_cli_import_then_conflicts_until_replace(app, runner, tmp_path):
    folder = write_model(tmp_path, "gamma", rows=6, datasets=["cmrc_mixup"], levels=["16k"])
    result = runner.invoke(args=["import-lveval", str(folder)])
    assert result.exit_code == 0, result.output
    assert "ok      gamma: 1 files, 6 rows; 6 new questions; predictions 6 new" in result.output
    rows = [json.loads(line) for line in (folder / "cmrc_mixup_16k.jsonl").read_text(encoding="utf-8").splitlines()]
    rows[0]["pred"] = "完全不同的回答"
    write_rows(folder / "cmrc_mixup_16k.jsonl", rows[:5])
    again = runner.invoke(args=["import-lveval", str(folder)])
    assert "0 new, 4 unchanged, 0 replaced, 1 conflicts" in again.output
    replaced = runner.invoke(args=["import-lveval", "--replace", str(folder)])
    assert "0 new, 4 unchanged, 1 replaced, 0 conflicts" in replaced.output
    with app.app_context():
        texts = db.session.scalars(select(Prediction.text).order_by(Prediction.line_no)).all()
        assert texts[0] == "完全不同的回答" and len(texts) == 5  # the dropped row went with --replace


def test_every_dataset_and_level_becomes_a_document_of_the_benchmark(app, tmp_path):
    folder = write_model(tmp_path, "m", rows=3)
    with app.app_context():
        import_models(folder)
        tasks = set(db.session.scalars(select(Document.task).where(Document.collection == LVEVAL)))
        assert tasks == {f"{d}_{level}" for d in DATASETS for level in LEVELS}
        # LV-Eval's rows are scored by the LV-Eval scorer only: raw values in [0, 1].
        score_system(db.session.scalar(select(System.id)))
        db.session.commit()
        metrics = set(db.session.scalars(select(MetricResult.metric).distinct()))
        assert metrics == {"lveval_raw"}


def test_fields_lveval_never_reads_do_not_block_an_import(app, researcher, auth, tmp_path):
    folder = write_lenient_folder(tmp_path)
    response = post_upload(researcher, auth, [("lenient.zip", zip_folder(folder))])
    page = researcher.get(f"/predictions/uploads/{batch_id(response)}").get_data(as_text=True)
    assert page.count('class="file-preview is-ok"') == 4
    assert "length: expected a whole number of words, got str; LV-Eval does not read it" in page
    with app.app_context():
        report = import_models(folder)
        model = report.models[0]
        assert model.errors == [] and model.counts["rows"] == 14
        assert {(w["file"], w["line"]) for w in model.warnings} >= {
            ("lenient-model/factrecall_zh_16k.jsonl", 1), ("lenient-model/hotpotwikiqa_mixup_16k.jsonl", 1)}
        score_system(db.session.scalar(select(System.id).where(System.name == "lenient-model")))
        db.session.commit()
    assert cells(app, "lenient-model") == ref.evaluate_folder(folder)["result_json"]


def test_each_model_is_scored_with_its_own_folder_s_gold_ans_as_evaluation_py_does(app, tmp_path):
    """Two folders answer the same questions alike but give other keywords: the second is scored (official)
    with its own, as LV-Eval's evaluation.py scores each folder; the fixed profile gives both the question's."""
    datasets = ["lic_mixup", "loogle_SD_mixup"]
    alpha = write_model(tmp_path, "alpha", seed=1, rows=8, datasets=datasets, levels=["16k"])
    beta = tmp_path / "beta"
    beta.mkdir()
    for path in sorted(alpha.iterdir()):
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        keywords = "鑫淼" if path.name.startswith("lic") else "Zzyzx Quillon"
        write_rows(beta / path.name, [{**row, "gold_ans": keywords} for row in rows])
    with app.app_context():
        import_models(alpha)
        assert import_models(beta).models[0].counts["questions_new"] == 0  # the same questions
        for name in ("alpha", "beta"):
            score_system(db.session.scalar(select(System.id).where(System.name == name)))
        db.session.commit()
    expected_alpha, expected_beta = (ref.evaluate_folder(folder)["result_json"] for folder in (alpha, beta))
    assert expected_beta != expected_alpha  # the keywords decide
    assert cells(app, "alpha") == expected_alpha
    assert cells(app, "beta") == expected_beta
    assert cells(app, "beta", "fixed") == cells(app, "alpha", "fixed")  # one set of keywords per question
