"""The benchmark report: every benchmark run_all.py lists exists and runs; the load benchmark, briefly."""
from __future__ import annotations

import importlib
import sys

import pytest

from tests.benchmarks import bench_load
from tests.conftest import REPO_ROOT


def test_run_all_lists_the_six_benchmarks_and_each_module_has_run(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO_ROOT / "tests" / "benchmarks"))  # as run_all.py imports them
    run_all = importlib.import_module("run_all")
    assert list(run_all.BENCHMARKS) == ["import", "metrics", "pages", "load", "judge", "results"]
    for modules in run_all.BENCHMARKS.values():
        for name in modules:
            assert callable(importlib.import_module(name).run), name
    for name in [m for modules in run_all.BENCHMARKS.values() for m in modules] + ["run_all", "common"]:
        sys.modules.pop(name, None)  # leave no second copy of tests.benchmarks.common behind


@pytest.mark.slow
def test_a_short_load_run_has_no_errors_and_no_lost_or_duplicated_scores():
    rows = {r["name"].split(": ", 1)[1]: r for r in bench_load.run(seconds=3, annotators=12, baseline_seconds=1)}
    assert rows["errors"]["value"] == 0
    assert rows["lost scores"]["value"] == 0
    assert rows["duplicated scores"]["value"] == 0
    assert rows["throughput (saves/s)"]["value"] > 5 and rows["save p99 (ms)"]["value"] > 0
