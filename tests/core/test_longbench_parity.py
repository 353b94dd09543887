"""app.core.metrics.longbench against the LongBench oracle (tests/support/longbench_reference.py): every row of every
dataset, both languages, LongBench-E's buckets and v2's columns, result.json and result.txt byte for byte."""
from __future__ import annotations

import math

import pytest

from app.core.metrics.longbench import BUCKETS, DATASETS, E, E_DATASETS, V1, V2
from app.core.metrics.longbench.evaluation import evaluate_files, score_dataset
from app.core.metrics.longbench.files import collect_file
from app.core.metrics.longbench.table import result_txt, v2_table
from tests.support import longbench_reference as ref
from tests.support.longbench_data import write_model, write_v2

pytestmark = pytest.mark.database_free  # a pure core: the PostgreSQL pass leaves it out

MODELS = (("alpha", 0.8, 0), ("beta", 0.45, 1))


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("longbench")
    for model, skill, seed in MODELS:
        write_model(root, model, skill=skill, seed=seed)
        write_model(root, model, e=True, skill=skill, seed=seed)
        write_v2(root, model, skill=skill, seed=seed)
        write_v2(root, model, cot=True, skill=skill, seed=seed)
    return root


def _files(root, folder):
    parsed = []
    for path in sorted(folder.glob("*.jsonl")):
        item, errors = collect_file(str(path.relative_to(root)), path.read_bytes())
        assert not errors, errors
        parsed.append(item)
    return parsed


@pytest.mark.parametrize("variant", [V1, E])
@pytest.mark.parametrize("model", [m for m, _, _ in MODELS])
def test_every_row_and_dataset_equals_eval_py(root, model, variant):
    folder = root / ("pred_e" if variant == E else "pred") / model
    files = _files(root, folder)
    assert {f.dataset for f in files} == set(E_DATASETS if variant == E else DATASETS)
    assert all(f.variant == variant for f in files)
    compared = 0
    for file in files:
        predictions, answers, _, all_classes = ref.read_file(folder / f"{file.dataset}.jsonl")
        scored, _ = score_dataset(file.dataset, variant, file.rows)
        expected = [ref.row_score(file.dataset, p, a, all_classes) for p, a in zip(predictions, answers)]
        assert [s.value for s in scored] == expected, file.dataset
        compared += len(expected)
    assert compared > 10 * len(files)
    result = evaluate_files(files, variant)
    assert result.result_json_text == ref.result_json_text(ref.evaluate_model(folder, e=variant == E))


def test_longbench_e_covers_every_bucket_and_keeps_an_empty_one_nan(root):
    result = evaluate_files(_files(root, root / "pred_e" / "alpha"), E)
    assert all(list(cell) == list(BUCKETS) for cell in result.cells.values())
    assert math.isnan(result.cells["passage_count"]["8k+"])
    assert '"8k+": NaN' in result.result_json_text
    fixed = evaluate_files(_files(root, root / "pred_e" / "alpha"), E, profile="fixed")
    assert list(fixed.cells["passage_count"]) == ["0-4k", "4-8k"]


def test_both_languages_and_every_metric_are_covered(root):
    used = {DATASETS[f.dataset].metric for f in _files(root, root / "pred" / "alpha")}
    assert used == {d.metric for d in DATASETS.values()} and len(used) == 9
    assert {DATASETS[name].language for name in DATASETS} == {"en", "zh", "code"}


def test_rouge_rows_just_past_the_packages_recursion_score_zero_and_are_noted(root):
    result = evaluate_files(_files(root, root / "pred" / "alpha"), V1)
    noted = {note["file"].split("/")[-1] for note in result.notes if "recursive LCS" in note["note"]}
    assert noted == {f"{d}.jsonl" for d in ("gov_report", "qmsum", "multi_news", "samsum", "dureader", "vcsum")}


def test_v2_table_equals_result_py(root):
    tables = {}
    for path in sorted((root / "results").glob("*.jsonl")):
        item, errors = collect_file(path.name, path.read_bytes(), variant=V2)
        assert not errors
        tables[path.stem] = v2_table((int(r.judge), r.difficulty, r.length) for r in item.rows)
    assert len(tables) == 4 and all(None not in t.values() for t in tables.values())
    assert result_txt(tables) == ref.v2_result_txt(root / "results")
