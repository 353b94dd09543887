"""The benchmark report: run_all.py lists every benchmark, and each module, run quick, really produces rows."""
from __future__ import annotations

import importlib
import inspect
import math
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.shared import REPO_ROOT, require_shared

BENCH_DIR = REPO_ROOT / "tests" / "benchmarks"


@contextmanager
def imported_as_run_all_does():
    """Import from tests/benchmarks by bare name, as run_all.py does; forget those modules afterwards."""
    path = str(BENCH_DIR)
    sys.path.insert(0, path)
    try:
        yield
    finally:
        while path in sys.path:
            sys.path.remove(path)
        for name, module in list(sys.modules.items()):
            file = getattr(module, "__file__", None)
            if file and "." not in name and Path(file).parent == BENCH_DIR:
                del sys.modules[name]  # leave no second copy of tests.benchmarks.common behind


with imported_as_run_all_does():
    BENCHMARKS = dict(importlib.import_module("run_all").BENCHMARKS)
MODULES = [name for modules in BENCHMARKS.values() for name in modules]


def test_run_all_lists_every_benchmark_and_each_module_runs_quick():
    assert list(BENCHMARKS) == ["import", "metrics", "pages", "load", "judge", "generate", "results", "start",
                                "lveval", "uploads", "quotes", "allocation",
                                "connections", "scale"]
    assert BENCHMARKS["scale"] == ("bench_scale",)
    assert BENCHMARKS["start"] == ("bench_start",)
    with imported_as_run_all_does():
        for name in MODULES:
            run = importlib.import_module(name).run
            assert "quick" in inspect.signature(run).parameters, name
            assert inspect.signature(run).parameters["quick"].default is False, name


def _explicit(target) -> bool:
    return target not in (None, "", "-")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@pytest.mark.slow
@pytest.mark.sqlite_only("the benchmarks measure on instances of their own, each a SQLite file")
@pytest.mark.parametrize("module_name", MODULES)
def test_each_benchmark_run_quick_produces_rows(module_name):
    require_shared()  # every benchmark measures on ../shared/leval
    with imported_as_run_all_does():
        rows = importlib.import_module(module_name).run(quick=True)
    assert rows, f"{module_name}.run(quick=True) produced no rows"
    for r in rows:
        assert isinstance(r.get("name"), str) and r["name"].strip(), r
        assert _number(r.get("value")), r
        if r.get("target") == "0":  # counts that must be zero: errors, lost or duplicated writes
            assert r["value"] == 0, r
    compared = [r for r in rows if _number(r.get("baseline")) or _explicit(r.get("target"))]
    assert compared, f"{module_name}: no row has a baseline or a target: {rows}"
