"""The benchmarks' database halves, registered here (their pure halves: app.core.benchmarks).

L-Eval is the base benchmark (services.metrics and services.importers are its service half); every other
benchmark is a plugin built by its own service package and named once below. The scoring job, the importers,
the upload page, the leaderboard and its JSON read the plugins from here, never a benchmark by name.
"""
from __future__ import annotations

from pathlib import PurePath

from app.core.benchmarks.registry import owner_of, owner_of_rows
from app.core.benchmarks.spec import Plugin
from app.services.longbench.benchmark import PLUGIN as LONGBENCH
from app.services.lveval.benchmark import PLUGIN as LVEVAL

PLUGINS: tuple[Plugin, ...] = (LVEVAL, LONGBENCH)


def plugin(key: str) -> Plugin | None:
    return next((p for p in PLUGINS if p.key == key), None)


def plugin_for_file(path: str | PurePath) -> Plugin | None:
    """The plugin whose prediction-file layout this path follows (None: an L-Eval file, or not a prediction file)."""
    owner = owner_of(path)
    return None if owner is None else plugin(owner.key)


def plugin_for_rows(row: dict) -> Plugin | None:
    """The plugin whose rows look like this first row of a file its name does not place."""
    owner = owner_of_rows(row)
    return None if owner is None else plugin(owner.key)


def plugin_collections() -> tuple[str, ...]:
    """The Document collections the plugins' questions are stored in: L-Eval's questions are all the others."""
    return tuple(p.collection for p in PLUGINS)


def plugin_table_metrics() -> tuple[str, ...]:
    """The MetricAggregate metrics the plugins store: never part of L-Eval's board."""
    return tuple(metric for p in PLUGINS for metric in p.table_metrics)


__all__ = ["PLUGINS", "plugin", "plugin_collections", "plugin_for_file", "plugin_for_rows",
           "plugin_table_metrics"]
