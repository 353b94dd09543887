"""The benchmarks the app knows, registered here (their pure half; the database half: app/services/benchmarks).

A benchmark is added by writing its own packages (its core under app/core/metrics/, its services under
app/services/) and naming its `BENCHMARK` here and its plugin in app/services/benchmarks. Everything that
differs between benchmarks (file layouts, measures, OpenCompass names, the leaderboard's tabs) is read from
these two registries, never from a benchmark's name.
"""
from __future__ import annotations

from pathlib import PurePath

from app.core.benchmarks.spec import Benchmark, HumanMetric, Plugin
from app.core.metrics.benchmark import BENCHMARK as LEVAL
from app.core.metrics.longbench.benchmark import BENCHMARK as LONGBENCH
from app.core.metrics.lveval.benchmark import BENCHMARK as LVEVAL

# L-Eval first: it is the base benchmark, and the order is the order of pages, tabs and columns.
BENCHMARKS: tuple[Benchmark, ...] = (LEVAL, LVEVAL, LONGBENCH)


def by_key(key: str) -> Benchmark | None:
    return next((b for b in BENCHMARKS if b.key == key), None)


def owner_of(path: str | PurePath) -> Benchmark | None:
    """The benchmark (other than L-Eval) whose prediction-file layout this path follows, else None."""
    return next((b for b in BENCHMARKS if b.owns_file is not None and b.owns_file(path)), None)


def owner_of_rows(row: dict) -> Benchmark | None:
    """The benchmark (other than L-Eval) whose rows look like this first row, whatever the file's name. A later
    benchmark's test is the more specific one (LongBench's rows are LV-Eval's without `input` and `gold_ans`), so
    the registry is searched from its end."""
    return next((b for b in reversed(BENCHMARKS) if b.owns_rows is not None and b.owns_rows(row)), None)


def human_metrics() -> tuple[HumanMetric, ...]:
    """Every per-answer measure compared with human scores, benchmark by benchmark."""
    return tuple(metric for benchmark in BENCHMARKS for metric in benchmark.human_metrics)


def opencompass_datasets() -> dict[str, tuple[str, str]]:
    """OpenCompass dataset abbr -> (benchmark key, task), over every benchmark."""
    return {abbr: (b.key, task) for b in BENCHMARKS for abbr, task in b.opencompass_datasets.items()}


def opencompass_prefixes() -> dict[str, str]:
    """The abbr prefix of each benchmark OpenCompass runs -> its key (an unknown dataset of one is refused)."""
    return {b.opencompass_prefix: b.key for b in BENCHMARKS if b.opencompass_prefix}


__all__ = ["BENCHMARKS", "Benchmark", "HumanMetric", "Plugin", "by_key", "human_metrics", "opencompass_datasets",
           "opencompass_prefixes", "owner_of", "owner_of_rows"]
