"""The seam every benchmark plugs into: what the app needs to know of it, in two halves.

`Benchmark` is the pure half (no database): its name, how its prediction files are named, its per-answer
measures that the results compare with human scores, its OpenCompass dataset names and its quirks.
`Plugin` is the half that reads and writes the database (each benchmark's service package builds one):
where its questions are stored, how its files are imported, previewed and scored, and what its leaderboard
shows. Both are registered in one place each: app/core/benchmarks (pure) and app/services/benchmarks.

L-Eval is the base benchmark: its questions are every question no plugin claims, and the metrics and
importer packages are its service half. LV-Eval and LongBench are plugins.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any


@dataclass(frozen=True)
class HumanMetric:
    """A per-answer automatic measure that Metrics vs humans compares with the human scores."""

    key: str  # the MetricResult metric
    label: str
    # Why a study may show no value while other metrics have some (e.g. only LV-Eval's questions have keywords).
    missing_note: str = ""


@dataclass(frozen=True)
class Benchmark:
    """The pure half of a benchmark: names, file layouts, measures, OpenCompass datasets, quirks."""

    key: str  # its name in URLs, reports and the API ("leval", "lveval", "longbench")
    label: str  # as people write it ("LV-Eval")
    human_metrics: tuple[HumanMetric, ...] = ()
    # Whether a prediction file of this path is one of this benchmark's (its layout); None: L-Eval's, the default.
    owns_file: Callable[[str | PurePath], bool] | None = None
    # Whether a file whose name says nothing is this benchmark's by its first row (a dict), to read it as one.
    owns_rows: Callable[[dict], bool] | None = None
    # OpenCompass dataset abbr (its file stem) -> this benchmark's task (or `<dataset>_<level>`).
    opencompass_datasets: Mapping[str, str] = field(default_factory=dict)
    # The prefix every OpenCompass dataset abbr of this benchmark starts with (an unknown one is refused).
    opencompass_prefix: str = ""
    quirks: tuple[dict, ...] = ()
    # How a metrics job's result counts this benchmark's rows: f"{key}_rows", and the unit of its table cells.
    cell_unit: str = "cell"


@dataclass(frozen=True)
class OpencompassReader:
    """How a plugin takes OpenCompass's predictions of its datasets (app/services/uploads/opencompass_files.py reads
    the files, checks their parts and calls these, one model's dataset at a time, all its parts together).

    Rows are app.core.opencompass.OcRow; `matched` is whatever `match` returns, with a `problems` list of
    (row, OcProblem) for the rows it refuses; previews are the upload's FilePreview, filled by attribute.
    """

    # Match a dataset's rows (all its parts, in dataset order) to this benchmark's questions (task: the
    # benchmark's own task name of the OpenCompass dataset, app.core.benchmarks.opencompass_datasets).
    match: Callable[[str, list], Any]
    # Fill one file's preview from the rows of that file (one part): matched, evaluations and, while the
    # preview has no errors, what storing it would do (new, unchanged, conflicts).
    preview: Callable[[Any, str, Any, list], None]
    # Store the dataset as one of the benchmark's own files (system, name, task, matched; sha256, stored_path,
    # user_id, replace as keywords) in the caller's transaction: the counts of ModelCounts.as_dict() shape.
    store: Callable[..., dict[str, Any]]


@dataclass(frozen=True)
class Plugin:
    """The database half of a benchmark other than L-Eval, built by its service package.

    Every callable takes and returns plain values (dicts, lists, the upload's preview objects, read by
    attribute), so the plugin's package never imports the packages that call it.
    """

    benchmark: Benchmark
    collection: str  # Document.collection of its questions (L-Eval's board and scoring leave them out)
    table_metrics: tuple[str, ...]  # the MetricAggregate metrics its scoring stores (off L-Eval's board)
    # How many of a system's predictions it scores, and scoring them: returns the job result's entries
    # (`<key>_rows`, `<key>_cells`) and a sentence for the job's progress (empty when it has none).
    prediction_count: Callable[[int], int]
    score_system: Callable[..., tuple[dict[str, Any], str]]
    # Import one model's files [(name, bytes)] in one transaction: the report of ModelReport.as_dict() shape.
    import_model: Callable[..., Any]
    # The system a file of a folder belongs to: "" for the benchmark's own data files (questions and documents).
    model_of: Callable[[PurePath], str]
    # The upload page: fill one file's preview, check a model's files together, import the previews.
    preview_file: Callable[[Any, Any], None]
    check_models: Callable[[list], None]
    import_previews: Callable[..., list[tuple[str, Any]]]
    # The leaderboard: its tab (template and values) and its part of the JSON export.
    leaderboard_tab: Callable[[str], tuple[str, dict[str, Any]]]
    leaderboard_json: Callable[[str], list[dict[str, Any]]]
    # The name a folder import gives one of its files (file, the folder named): by default its path from that
    # folder; a benchmark whose names say more than the folder does (LongBench-E's `pred_e/`) names them itself.
    payload_name: Callable[[Path, Path], str] | None = None
    # OpenCompass's predictions of the benchmark's datasets (its Benchmark names them): None, not read.
    opencompass: OpencompassReader | None = None
    # The per-system page's section (system, profile) -> (template, values), or None when the system has no
    # numbers of this benchmark under that profile.
    system_section: Callable[[Any, str], tuple[str, dict[str, Any]] | None] | None = None

    @property
    def key(self) -> str:
        return self.benchmark.key

    @property
    def label(self) -> str:
        return self.benchmark.label
