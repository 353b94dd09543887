"""`python run.py import-longbench` on folders as LongBench's pred.py writes them (pred/, pred_e/, v2's results/) and
LongBench's data files: rows keyed by question set, dataset and line, tied to the data rows when those are
imported; every model whole or not at all, errors naming file, line and field; `longbench-result` writes the
files eval.py and result.py write, to the digit (oracle: tests/support/longbench_reference.py)."""
from __future__ import annotations

import json
import math

from sqlalchemy import func, select

from app.core.metrics.longbench import DATASETS, E_DATASETS
from app.extensions import db
from app.models import (Document, LongbenchAnswer, LongbenchItem, MetricAggregate, MetricResult, Prediction,
                        Question, System)
from app.models.longbench import LONGBENCH
from app.services.metrics.compute import score_system
from tests.support import longbench_reference as ref
from tests.support.longbench_data import (full_data_rows, model_rows, write_data, write_model, write_rows,
                                          write_v2)


def _count(model, *where) -> int:
    return db.session.scalar(select(func.count()).select_from(model).where(*where))


def _system_id(name: str) -> int | None:
    return db.session.scalar(select(System.id).where(System.name == name))


def _aggregates(name: str, profile: str = "official") -> dict[str, float]:
    return {a.task: a.value for a in db.session.scalars(select(MetricAggregate).where(
        MetricAggregate.system_id == _system_id(name), MetricAggregate.profile == profile,
        MetricAggregate.metric == "longbench"))}


def test_import_then_result_equals_eval_py_and_result_py_on_every_dataset_bucket_and_column(app, runner, tmp_path):
    for model, skill, seed in (("alpha", 0.8, 0), ("beta", 0.4, 1)):
        write_model(tmp_path, model, skill=skill, seed=seed)
        write_model(tmp_path, model, e=True, skill=skill, seed=seed)
        write_v2(tmp_path, model, skill=skill, seed=seed)
    write_v2(tmp_path, "alpha", cot=True, skill=0.7, seed=3)
    result = runner.invoke(args=["import-longbench", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "ok      alpha: 35 files" in result.output and "ok      alpha_cot: 1 files" in result.output
    with app.app_context():
        # pred/ and pred_e/ share file names but are two question sets; each model answers the same questions.
        v1_rows = sum(len(model_rows(d)) for d in DATASETS)
        e_rows = sum(len(model_rows(d, e=True)) for d in E_DATASETS)
        assert _count(LongbenchItem, LongbenchItem.variant == "v1") == v1_rows
        assert _count(LongbenchItem, LongbenchItem.variant == "e") == e_rows
        assert _count(LongbenchItem, LongbenchItem.variant == "v2") == 36
        assert _count(Prediction) == 2 * (v1_rows + e_rows) + 3 * 36
        assert _count(LongbenchAnswer) == 3 * 36
        for name in ("alpha", "beta", "alpha_cot"):
            score_system(_system_id(name))
    for model in ("alpha", "beta"):
        out = tmp_path / f"{model}.json"
        done = runner.invoke(args=["longbench-result", model, "--out", str(out)])
        assert done.exit_code == 0, done.output
        assert out.read_text(encoding="utf-8") == ref.result_json_text(ref.evaluate_model(tmp_path / "pred" / model))
        done = runner.invoke(args=["longbench-result", model, "--e", "--out", str(out)])
        assert done.exit_code == 0, done.output
        expected = ref.evaluate_model(tmp_path / "pred_e" / model, e=True)
        assert out.read_text(encoding="utf-8") == ref.result_json_text(expected)
        assert math.isnan(json.loads(out.read_text(encoding="utf-8"))["passage_count"]["8k+"])
    out = tmp_path / "result.txt"
    done = runner.invoke(args=["longbench-result", "--v2", "alpha", "alpha_cot", "beta", "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert out.read_text(encoding="utf-8") == ref.v2_result_txt(tmp_path / "results")
    with app.app_context():
        # The stored tables are eval.py's numbers too (NaN buckets not stored), and every row has its raw score.
        expected = ref.evaluate_model(tmp_path / "pred" / "beta")
        stored = _aggregates("beta")
        assert {d: stored[d] for d in DATASETS} == expected
        expected_e = ref.evaluate_model(tmp_path / "pred_e" / "beta", e=True)
        assert {t: v for t, v in stored.items() if "_e@" in t} == {
            f"{d}_e@{b}": v for d, cell in expected_e.items() for b, v in cell.items() if not math.isnan(v)}
        assert _count(MetricResult, MetricResult.metric == "longbench_raw", MetricResult.profile == "official") == \
            _count(Prediction)


def test_a_bad_row_names_file_line_and_field_and_nothing_of_that_model_is_imported(app, runner, tmp_path):
    write_model(tmp_path, "good", datasets=["trec", "lsht"])
    folder = write_model(tmp_path, "broken", datasets=["narrativeqa", "trec", "multifieldqa_zh"])
    rows = model_rows("trec")
    rows[2]["answers"] = "city"  # a string: eval.py would score it character by character
    del rows[4]["all_classes"]
    write_rows(folder / "trec.jsonl", rows)
    e_folder = write_model(tmp_path, "broken", e=True, datasets=["qasper"])
    e_rows = model_rows("qasper", e=True)
    del e_rows[1]["length"]
    write_rows(e_folder / "qasper.jsonl", e_rows)
    result = runner.invoke(args=["import-longbench", str(tmp_path)])
    assert result.exit_code == 1
    assert "FAILED  broken: nothing imported" in result.output and "ok      good" in result.output
    assert "pred/broken/trec.jsonl, line 3, field 'answers': expected a list of strings, got str" in result.output
    assert "pred/broken/trec.jsonl, line 5, field 'all_classes': missing" in result.output
    assert "pred_e/broken/qasper.jsonl, line 2, field 'length': missing" in result.output
    with app.app_context():
        assert _system_id("broken") is None or _count(Prediction, Prediction.system_id == _system_id("broken")) == 0
        assert _count(Prediction, Prediction.system_id == _system_id("good")) == len(model_rows("trec")) + len(
            model_rows("lsht"))
        # Only the good model's questions: none of the broken model's datasets half-stored.
        assert {d for (d,) in db.session.execute(select(LongbenchItem.dataset).distinct())} == {"trec", "lsht"}


def test_rows_are_tied_to_the_data_rows_whichever_comes_first(app, runner, tmp_path):
    datasets = ["multifieldqa_zh", "qmsum"]
    write_model(tmp_path / "first", "alpha", datasets=datasets)
    write_data(tmp_path / "later", datasets=datasets)
    assert runner.invoke(args=["import-longbench", str(tmp_path / "first")]).exit_code == 0
    with app.app_context():
        assert _count(Question, Question.instruction == "") == sum(len(full_data_rows(d)) for d in datasets)
        assert {d.text for d in db.session.scalars(select(Document).where(Document.collection == LONGBENCH))} == {""}
    result = runner.invoke(args=["import-longbench", str(tmp_path / "later")])
    assert result.exit_code == 0, result.output
    assert "ok      LongBench's data" in result.output and "questions given their text" in result.output
    with app.app_context():
        rows = full_data_rows("multifieldqa_zh")
        stmt = (select(Question.instruction, Document.text, Prediction.line_no)
                .join(LongbenchItem, LongbenchItem.question_id == Question.id)
                .join(Document, Document.id == Question.document_id)
                .join(Prediction, Prediction.question_id == Question.id)
                .where(LongbenchItem.dataset == "multifieldqa_zh").order_by(LongbenchItem.position))
        stored = db.session.execute(stmt).all()
        assert [(q, t, line) for q, t, line in stored] == [
            (row["input"], row["context"], index + 1) for index, row in enumerate(rows)]
        # Two questions of one context share one document; no empty placeholder is left.
        assert _count(Document, Document.collection == LONGBENCH, Document.text == "") == 0
        assert _count(Document, Document.collection == LONGBENCH) < _count(LongbenchItem)
    # Data first, then a model: its rows land on the questions with text, and a row out of order is refused.
    write_model(tmp_path / "beta", "beta", datasets=datasets)
    assert runner.invoke(args=["import-longbench", str(tmp_path / "beta")]).exit_code == 0
    shuffled = model_rows("qmsum")
    shuffled[0], shuffled[1] = shuffled[1], shuffled[0]
    write_rows(tmp_path / "gamma" / "pred" / "gamma" / "qmsum.jsonl", shuffled)
    refused = runner.invoke(args=["import-longbench", str(tmp_path / "gamma")])
    assert refused.exit_code == 1
    assert "pred/gamma/qmsum.jsonl, line 1, field 'answers': differs from row 1 of qmsum as stored" in refused.output
    with app.app_context():
        assert _count(Question, Question.instruction == "") == 0
        assert _system_id("gamma") is None


def test_reimport_is_unchanged_and_replace_rescoring_only_what_changed(app, runner, tmp_path):
    folder = write_model(tmp_path, "alpha", datasets=["triviaqa"])
    assert runner.invoke(args=["import-longbench", str(tmp_path)]).exit_code == 0
    again = runner.invoke(args=["import-longbench", str(tmp_path)])
    rows = len(model_rows("triviaqa"))
    assert f"predictions 0 new, {rows} unchanged, 0 replaced, 0 conflicts" in again.output
    changed = model_rows("triviaqa")
    changed[0]["pred"] = "上海 Orrin"
    write_rows(folder / "triviaqa.jsonl", changed)
    kept = runner.invoke(args=["import-longbench", str(tmp_path)])
    assert "1 conflicts" in kept.output
    replaced = runner.invoke(args=["import-longbench", "--replace", str(tmp_path)])
    assert replaced.exit_code == 0 and "1 replaced" in replaced.output
    with app.app_context():
        score_system(_system_id("alpha"))
    out = tmp_path / "r.json"
    assert runner.invoke(args=["longbench-result", "alpha", "--out", str(out)]).exit_code == 0
    assert out.read_text(encoding="utf-8") == ref.result_json_text(ref.evaluate_model(folder))


def test_one_models_folder_with_system_and_e_flags_and_unknown_names(app, runner, tmp_path):
    folder = tmp_path / "my-run"
    for dataset in ("hotpotqa", "lcc"):
        write_rows(folder / f"{dataset}.jsonl", model_rows(dataset, e=True))
    result = runner.invoke(args=["import-longbench", "--e", "--system", "model-x", str(folder)])
    assert result.exit_code == 0, result.output
    with app.app_context():
        assert {(i.variant, i.dataset) for i in db.session.scalars(select(LongbenchItem))} == {
            ("e", "hotpotqa"), ("e", "lcc")}
        assert _count(Prediction, Prediction.system_id == _system_id("model-x")) == 2 * len(model_rows("lcc", e=True))
    both = runner.invoke(args=["import-longbench", "--e", "--v2", str(folder)])
    assert both.exit_code != 0 and "--e and --v2" in both.output
    missing = runner.invoke(args=["longbench-result", "nobody"])
    assert missing.exit_code != 0 and "no such system: nobody" in missing.output
    none = runner.invoke(args=["longbench-result", "model-x"])
    assert none.exit_code != 0 and "model-x has no LongBench predictions" in none.output
