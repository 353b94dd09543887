"""`python run.py import-opencompass PATH [--model ABBR]`: OpenCompass output folders, all or nothing."""
from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import Job, Prediction, Question, System
from app.services.importers import import_path
from tests.support.opencompass import (
    leval_prompt,
    tiny_rows,
    write_dataset,
    write_tiny_task,
)


@pytest.fixture
def tasks(app, tmp_path):
    write_tiny_task(tmp_path / "tasks")
    with app.app_context():
        assert not import_path(tmp_path / "tasks").failed
    return tmp_path


def stored(app, system: str) -> list[str]:
    """A system's predictions, in question order."""
    with app.app_context():
        return list(db.session.scalars(select(Prediction.text).join(Question).join(System)
                                       .where(System.name == system).order_by(Question.id)))


def systems(app) -> list[str]:
    with app.app_context():
        return list(db.session.scalars(select(System.name).order_by(System.name)))


def test_a_split_dataset_is_imported_on_content_and_its_metrics_queued(app, runner, tasks):
    out = tasks / "outputs" / "20240601_101010"
    # The rows of the two documents that ask the same question are swapped: content decides, not position.
    rows = tiny_rows(("(B)", "(B)", "(A)"))
    rows[0], rows[2] = rows[2], rows[0]
    write_dataset(out, "qwen-7b-chat", "LEval_quality", rows, parts=2)
    result = runner.invoke(args=["import-opencompass", str(out)])
    assert result.exit_code == 0, result.output
    assert "ok      20240601_101010/predictions/qwen-7b-chat/LEval_quality_0.json" in result.output
    assert "Metrics: 1 job(s) queued" in result.output
    with app.app_context():
        rows_by_doc = db.session.execute(
            select(Question.document_id, Prediction.text, Prediction.line_no).join(Prediction)
            .order_by(Question.id)).all()
        assert db.session.scalar(select(func.count(Job.id)).where(Job.kind == "metrics")) == 1
    # Velmora's row (now key "0" of part 0 is the Ostrand row): each document got its own answer.
    assert [(text, line) for _, text, line in rows_by_doc] == [("(B)", 3), ("(B)", 2), ("(A)", 1)]
    assert systems(app) == ["qwen-7b-chat"]


def test_model_selects_one_folder_and_an_absent_model_is_an_error(app, runner, tasks):
    out = tasks / "out"
    write_dataset(out, "model-a", "LEval_quality", tiny_rows())
    write_dataset(out, "model-b", "LEval_quality", tiny_rows())
    (out / "predictions" / "model-a" / "gsm8k.json").write_text("{}")
    result = runner.invoke(args=["import-opencompass", str(out / "predictions"), "--model", "model-b"])
    assert result.exit_code == 0, result.output
    assert "Ignored 1 other .json file(s) (no benchmark's dataset): predictions/model-a/gsm8k.json" in result.output
    assert systems(app) == ["model-b"]
    missing = runner.invoke(args=["import-opencompass", str(out), "--model", "model-c"])
    assert missing.exit_code == 1
    assert "field '--model': no OpenCompass L-Eval, LV-Eval or LongBench file of model 'model-c'" in missing.output


def test_every_problem_is_reported_by_file_and_key_and_nothing_is_imported(app, runner, tasks):
    out = tasks / "out"
    good = tiny_rows()
    write_dataset(out, "m", "LEval_coursera", good)  # no coursera question is stored
    (out / "predictions" / "m" / "LEval_nosuch.json").write_text("{}")
    bad = tiny_rows(as_messages=True)
    bad[1]["gold"] = "C"  # matches no stored question
    del bad[2]["prediction"]
    both = leval_prompt("quality", good[0]["origin_prompt"] + " " + good[2]["origin_prompt"],
                        "Which harbour froze? (A) Velmora (B) Ostrand", "(A)", as_messages=False)
    bad.append({"origin_prompt": both, "prediction": "(A)", "gold": "(A)"})  # both documents: ambiguous
    write_dataset(out, "m", "LEval_quality", bad, parts=2)
    write_dataset(out, "n", "LEval_quality", tiny_rows())  # valid, but the import is all or nothing
    result = runner.invoke(args=["import-opencompass", str(out)])
    assert result.exit_code == 1
    output = result.output
    assert "out/predictions/m/LEval_nosuch.json: unknown dataset 'LEval_nosuch'" in output
    assert ("out/predictions/m/LEval_coursera.json, field '\"0\"': no question of L-Eval's coursera is stored: "
            "import its task file first") in output
    assert "out/predictions/m/LEval_quality_0.json, field '\"1\"': matches no stored question of quality" in output
    assert "out/predictions/m/LEval_quality_1.json, field '\"0\".prediction': missing" in output
    assert ("out/predictions/m/LEval_quality_0.json: not importable on its own: the parts of a dataset are "
            "imported together, and out/predictions/m/LEval_quality_1.json has errors") not in output
    assert "Nothing was imported: 4 file(s) have errors" in output
    assert systems(app) == []
    with app.app_context():
        assert db.session.scalar(select(func.count(Job.id))) == 0


def test_an_ambiguous_row_names_its_key(app, runner, tasks):
    out = tasks / "out"
    rows = tiny_rows()
    rows[2]["origin_prompt"] = leval_prompt("quality", rows[0]["origin_prompt"] + " " + rows[2]["origin_prompt"],
                                            "Which harbour froze? (A) Velmora (B) Ostrand", "(A)", as_messages=False)
    write_dataset(out, "m", "LEval_quality", rows)
    result = runner.invoke(args=["import-opencompass", str(out), "--json"])
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert report["files"][0]["errors"][0]["field"] == '"2"'
    assert report["files"][0]["errors"][0]["message"].startswith("matches 2 different stored questions of quality")
    assert report["imported"] == [] and systems(app) == []


def test_missing_or_doubled_parts_are_errors_and_skip_invalid_imports_the_rest(app, runner, tasks):
    out = tasks / "out"
    parts = write_dataset(out, "m", "LEval_quality", tiny_rows(), parts=3)
    parts[1].unlink()
    write_dataset(out, "n", "LEval_quality", tiny_rows())
    write_dataset(out, "n", "LEval_quality", tiny_rows(), parts=2)
    write_dataset(out, "ok", "LEval_quality", tiny_rows())
    result = runner.invoke(args=["import-opencompass", str(out), "--skip-invalid"])
    assert result.exit_code == 1
    assert "LEval_quality is split into parts, but part(s) LEval_quality_1.json are missing" in result.output
    assert "both LEval_quality.json and its parts LEval_quality_N.json are present" in result.output
    assert "Summary: 1 file(s) imported for ok; 5 with errors skipped." in result.output
    assert systems(app) == ["ok"]
    assert stored(app, "ok") == ["(A)", "(B)", "(A)"]


def test_one_file_is_named_with_its_model_folder(app, runner, tasks):
    (path,) = write_dataset(tasks / "out", "solo-7b", "LEval_quality", tiny_rows())
    result = runner.invoke(args=["import-opencompass", str(path)])
    assert result.exit_code == 0, result.output
    assert "ok      solo-7b/LEval_quality.json: system solo-7b, 3 rows matched (3 new" in result.output
    assert stored(app, "solo-7b") == ["(A)", "(B)", "(A)"]


def test_lveval_rows_need_the_lveval_questions_stored_first(app, runner, tasks):
    out = tasks / "out"
    write_dataset(out, "m", "LVEval_factrecall_en_16k", [{"origin_prompt": "Question: Who?\nAnswer:",
                                                         "prediction": "x", "gold": ["y"]}])
    result = runner.invoke(args=["import-opencompass", str(out)])
    assert result.exit_code == 1
    assert ("out/predictions/m/LVEval_factrecall_en_16k.json, field '\"0\"': no question of LV-Eval's "
            "factrecall_en_16k is stored: upload LV-Eval's own <model>/factrecall_en_16k.jsonl first") in result.output
    assert systems(app) == []


def test_a_missing_row_key_is_named(app, runner, tasks):
    out = tasks / "out"
    (path,) = write_dataset(out, "m", "LEval_quality", tiny_rows())
    rows = json.loads(path.read_text(encoding="utf-8"))
    rows["3"] = rows.pop("1")  # "0", "2", "3": OpenCompass reads "0" to "2" and finds no "1"
    path.write_text(json.dumps(rows), encoding="utf-8")
    result = runner.invoke(args=["import-opencompass", str(out)])
    assert result.exit_code == 1
    assert ("out/predictions/m/LEval_quality.json, field '\"1\"': missing: the file holds 3 rows, so OpenCompass "
            "reads the keys \"0\" to \"2\", and this one is not there") in result.output
    assert "field '\"3\"': unexpected key" in result.output
    assert systems(app) == []


def test_lveval_keywords_in_gold_are_read_as_the_loader_writes_them(app, runner, tmp_path):
    from tests.support.lveval_data import write_model
    from tests.support.opencompass_lveval import data_rows, load, opencompass_rows, predictions

    write_model(tmp_path / "lveval", "own-model", rows=10, datasets=("lic_mixup",), levels=("16k",))
    assert runner.invoke(args=["import-lveval", str(tmp_path / "lveval")]).exit_code == 0
    rows = opencompass_rows("lic_mixup", load("lic_mixup", data_rows("lic_mixup", "16k", 10)),
                            predictions("lic_mixup", "16k", 10, seed=3))
    assert rows[0]["gold"] == ["林远舟和周书雁", "沈知秋", "林远舟"]  # answers + [answer_keywords]
    write_dataset(tmp_path / "out", "oc-model", "LVEval_lic_mixup_16k", rows)
    result = runner.invoke(args=["import-opencompass", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "system oc-model, 10 rows matched (10 new" in result.output
    rows[0]["gold"] = rows[0]["gold"][:-1]  # the answers alone: not what lic_mixup's loader writes
    rows[1]["gold"] = "沈知秋"
    write_dataset(tmp_path / "bad", "oc-bad", "LVEval_lic_mixup_16k", rows)
    result = runner.invoke(args=["import-opencompass", str(tmp_path / "bad")])
    assert result.exit_code == 1
    assert ("field '\"0\"': matches no stored question of lic_mixup_16k: no question whose answers equal the answers "
            "before its last item (the keywords) has its text in origin_prompt") in result.output
    assert ("field '\"1\".gold': is a string: OpenCompass's loader of lic_mixup writes answers + [answer_keywords]"
            in result.output)


def test_a_file_nested_too_deep_or_with_a_huge_number_is_an_error_line_not_a_traceback(app, runner, tasks):
    out = tasks / "out"
    write_dataset(out, "m", "LEval_quality", tiny_rows())
    folder = out / "predictions" / "m"
    (folder / "LEval_quality.json").write_text('{"0": {"origin_prompt": ' + "{\"k\": " * 200_000 + "0"
                                               + "}" * 200_000 + "}}")
    result = runner.invoke(args=["import-opencompass", str(out)])
    assert result.exit_code == 1 and (result.exception is None or isinstance(result.exception, SystemExit))
    assert ('FAILED  out/predictions/m/LEval_quality.json, field \'"0".origin_prompt\': JSON nested deeper than '
            "100 levels (line 1, column") in result.output
    (folder / "LEval_quality.json").write_text('{"0": {"gold": -' + "1" * 5000 + "}}")
    result = runner.invoke(args=["import-opencompass", str(out)])
    assert result.exit_code == 1 and "field '\"0\".gold': a number of 5,001 characters" in result.output
    assert systems(app) == []
