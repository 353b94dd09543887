"""The seam's registry: every benchmark's module loads first on its own, and the registry agrees with itself."""
from __future__ import annotations

import subprocess
import sys

import pytest

from app.core.benchmarks.registry import BENCHMARKS, by_key, human_metrics, opencompass_datasets, owner_of, owner_of_rows
from tests.support.shared import REPO_ROOT

pytestmark = pytest.mark.database_free

FIRST_IMPORTS = ("app.core.benchmarks.spec", "app.core.benchmarks.registry", "app.core.metrics.benchmark",
                 "app.core.metrics.lveval.benchmark", "app.core.metrics.longbench.benchmark", "app.core.opencompass")


@pytest.mark.parametrize("module", FIRST_IMPORTS)
def test_each_module_of_the_seam_loads_first_in_a_fresh_interpreter(module):
    """A benchmark's module imports the seam's spec, the registry imports every benchmark: no order may break."""
    done = subprocess.run([sys.executable, "-c", f"import {module}"], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_keys_metrics_and_names_are_unique_and_l_eval_comes_first():
    keys = [b.key for b in BENCHMARKS]
    assert keys[0] == "leval" and len(keys) == len(set(keys)) and by_key("longbench").label == "LongBench"
    metrics = [m.key for m in human_metrics()]
    assert metrics[:3] == ["f1", "rougeL", "keyword_f1"] and len(metrics) == len(set(metrics))
    names = [abbr for b in BENCHMARKS for abbr in b.opencompass_datasets]
    assert len(names) == len(set(names)) == len(opencompass_datasets())


def test_files_and_rows_find_their_benchmark():
    assert owner_of("m/cmrc_mixup_16k.jsonl").key == "lveval"
    assert owner_of("pred_e/m/trec.jsonl").key == "longbench"
    assert owner_of("m/quality.pred.jsonl") is None
    assert owner_of_rows({"pred": "x", "answers": ["x"], "gold_ans": "x", "input": "q", "all_classes": None}).key \
        == "lveval"
    assert owner_of_rows({"pred": "x", "answers": ["x"], "all_classes": None, "length": 3}).key == "longbench"
    assert owner_of_rows({"query": "q", "gt": "a", "m_pred": "a"}) is None
