"""OpenCompass's LongBench output, all 21 datasets as its loaders and inferencer write them, imports whole and scores
exactly as LongBench's own pred.py folder of the same answers (tests/support/opencompass_longbench.py restates them);
rows that do not fit the stored rows are refused by key and field."""
from __future__ import annotations

import json

from sqlalchemy import func, select

from app.core.metrics import PROFILES
from app.core.metrics.longbench import DATASETS
from app.core.metrics.longbench.benchmark import OPENCOMPASS_DATASETS, OPENCOMPASS_WITHOUT_INPUT
from app.core.opencompass import describe_path
from app.extensions import db
from app.models import Prediction, Question, System
from app.services.longbench.importer import import_path
from app.services.metrics import score_system
from app.services.uploads.opencompass_folder import import_opencompass_folder
from tests.services.test_opencompass_metrics import stored_metrics
from tests.support.longbench_data import full_data_rows, write_data
from tests.support.opencompass import write_dataset
from tests.support.opencompass_longbench import PROMPTS, WITHOUT_INPUT, load, opencompass_rows, write_both


def stored_rows(name: str) -> dict[int, str]:
    return dict(db.session.execute(select(Prediction.question_id, Prediction.text).join(System)
                                   .where(System.name == name)).all())


def test_the_names_and_loaders_restated_are_the_apps():
    assert set(WITHOUT_INPUT) == OPENCOMPASS_WITHOUT_INPUT and set(PROMPTS) == set(DATASETS)
    assert all(("{input}" in PROMPTS[d]) == (d not in WITHOUT_INPUT) for d in DATASETS)
    name = describe_path("predictions/m/LongBench_repobench-p_1.json")
    assert (name.benchmark, name.task, name.part) == ("longbench", "repobench-p", 1)
    assert len(OPENCOMPASS_DATASETS) == 22 and describe_path("predictions/m/LongBenchv2.json").task == "v2"


def _score(*names: str) -> None:
    for name in names:
        score_system(db.session.scalar(select(System.id).where(System.name == name)), profiles=PROFILES)


def test_all_21_datasets_import_whole_and_score_as_the_native_folder(app, tmp_path):
    write_data(tmp_path / "lb")  # LongBench's data files first: the prompts are checked against them
    native, outputs, total = write_both(tmp_path / "lb", native_model="model-b", opencompass_model="model-b-oc",
                                        seed=1, split={"trec": 2, "dureader": 3})
    with app.app_context():
        assert not import_path(tmp_path / "lb" / "data").failed
        result = import_opencompass_folder(outputs)
        assert result.error is None and not result.invalid, [(p.name, p.errors) for p in result.previews if p.errors]
        imported = sum(item["created"] for item in result.imported)
        assert imported == total and all(item["questions_new"] == 0 for item in result.imported)
        assert len(result.imported) == 21 and ("outputs/predictions/model-b-oc/LongBench_trec_0.json, "
                                              "outputs/predictions/model-b-oc/LongBench_trec_1.json") in {
            item["file"] for item in result.imported}
        assert not import_path(native).failed  # model-b's own pred.py files, the same answers
        _score("model-b", "model-b-oc")
        expected_aggregates, expected_items = stored_metrics("model-b")
        aggregates, items = stored_metrics("model-b-oc")
        native_rows, oc_rows = stored_rows("model-b"), stored_rows("model-b-oc")
    assert oc_rows == native_rows and len(oc_rows) == total
    assert expected_aggregates and expected_items
    assert aggregates == expected_aggregates
    assert items == expected_items
    print(f"\nOpenCompass LongBench rows imported: {imported} of {total} (21 datasets); {len(items)} row scores and "
          f"{len(aggregates)} aggregates equal to the native pred.py folder")


def test_without_data_the_rows_create_their_questions_as_pred_py_rows_do(app, tmp_path):
    native, outputs, total = write_both(tmp_path, native_model="model-b", opencompass_model="model-b-oc", seed=2)
    with app.app_context():
        result = import_opencompass_folder(outputs)
        assert result.error is None and not result.invalid
        assert sum(item["questions_new"] for item in result.imported) == total
        assert not import_path(native).failed
        questions = db.session.scalar(select(func.count(Question.id)))
        _score("model-b", "model-b-oc")
        assert stored_metrics("model-b") == stored_metrics("model-b-oc")
    assert questions == total  # the native folder found every question the OpenCompass rows made


def _errors(result) -> dict[str, list[tuple[str, str]]]:
    return {p.name: [(e["field"], e["message"]) for e in p.errors] for p in result.previews if p.errors}


def test_rows_that_do_not_fit_are_refused_by_key_and_field_and_nothing_is_imported(app, tmp_path):
    write_data(tmp_path / "lb", datasets=["trec", "multifieldqa_zh", "gov_report"])
    outputs = tmp_path / "outputs"
    rows = {d: opencompass_rows(d, load(d, full_data_rows(d)), ["答案"] * len(full_data_rows(d)))
            for d in ("trec", "multifieldqa_zh", "gov_report")}
    rows["trec"][0]["gold"] = rows["trec"][0]["gold"]["answers"]  # a list where the config reads all_labels
    rows["multifieldqa_zh"][1]["gold"] = ["别的答案"]  # not the answers of the data file's second row
    zh_row = full_data_rows("multifieldqa_zh")[2]  # its document, another question
    rows["multifieldqa_zh"][2]["origin_prompt"] = PROMPTS["multifieldqa_zh"].format(context=zh_row["context"],
                                                                                  input="另一个问题？")
    rows["gov_report"][3]["origin_prompt"] = "Report:\nanother report"  # another document
    for dataset, written in rows.items():
        write_dataset(outputs, "m", f"LongBench_{dataset}", written)
    write_dataset(outputs, "m", "LongBenchv2", [{"origin_prompt": "Q", "prediction": "The correct answer is (A)",
                                                 "gold": "A"}])
    with app.app_context():
        assert not import_path(tmp_path / "lb" / "data").failed
        result = import_opencompass_folder(outputs)
        stored = db.session.scalar(select(func.count(Prediction.id)))
    errors = _errors(result)
    assert errors["outputs/predictions/m/LongBench_trec.json"][0][0] == '"0".gold'
    assert "all_labels" in errors["outputs/predictions/m/LongBench_trec.json"][0][1]
    zh = dict(errors["outputs/predictions/m/LongBench_multifieldqa_zh.json"])
    assert zh['"1".gold'].startswith("its answers differ from row 2 of LongBench's multifieldqa_zh as stored")
    assert zh['"2".origin_prompt'].startswith("does not hold the question of row 3")
    assert dict(errors["outputs/predictions/m/LongBench_gov_report.json"])['"3".origin_prompt'].startswith(
        "does not hold the document of row 4")
    assert "LongBench v2 is not read from OpenCompass" in errors["outputs/predictions/m/LongBenchv2.json"][0][1]
    assert result.imported == [] and stored == 0


def test_the_gold_shapes_of_the_loaders(app):
    from app.services.longbench.opencompass import read_gold
    assert read_gold("lsht", {"answers": ["体育"], "all_classes": ["体育", "财经"]}) == (("体育",), ("体育", "财经"))
    assert read_gold("narrativeqa", ["Orrin Vale", "Vale"]) == (("Orrin Vale", "Vale"), None)
    for dataset, gold in (("narrativeqa", None), ("narrativeqa", "Orrin"), ("trec", ["city"]),
                          ("trec", {"answers": ["city"]}), ("lsht", {"answers": [1], "all_classes": []})):
        try:
            read_gold(dataset, gold)
        except ValueError as exc:
            assert str(exc)
        else:
            raise AssertionError(f"{dataset} {gold!r} was read")
    assert json.dumps(["体育"], ensure_ascii=False) == '["体育"]'


def test_every_plugin_whose_benchmark_names_opencompass_datasets_reads_them():
    from app.core.benchmarks.registry import BENCHMARKS
    from app.services.benchmarks import plugin
    named = [b.key for b in BENCHMARKS if b.opencompass_datasets and b.key != "leval"]
    assert named == ["lveval", "longbench"]
    assert all(plugin(key).opencompass is not None for key in named)
