"""Build, at test time, prediction files in the layout L-Eval's Baselines scripts write.

Run with ``--task_name`` (or ``--task_path``), a Baselines script walks every document of a
task and writes one row per instruction, in document order, each row carrying its
document's ``evaluation``: ``f1``/``rouge``/``exam`` rows beside ``LLM`` and ``human`` rows.
The published prediction folders split those rows by purpose (``ngram_eval``/``exam_eval``
hold the metric rows, ``llm_turbo_eval`` the LLM- and human-evaluation rows), so this module
puts them back together: for each task file of ``LEval-data`` and each model whose published
answers cover every instruction of it, it writes ``<dest>/<model>/<task>.pred.jsonl``.

Nothing here is committed data: the files are derived from ``../shared/leval`` into a
temporary folder by the tests that need them.
"""
from __future__ import annotations

import json
from collections import defaultdict, deque
from dataclasses import dataclass, field
from pathlib import Path

# Which published folder holds a row of each evaluation. Metric rows come from the n-gram and
# exam folders (one file per model and task); LLM and human rows from llm_turbo_eval, the only
# folder holding both subsets (181 rows per model).
METRIC_FOLDERS = {"f1": "ngram_eval", "rouge": "ngram_eval", "exam": "exam_eval"}
JUDGED_FOLDER = "llm_turbo_eval"
JUDGED_EVALUATIONS = ("LLM", "human")
TASK_FOLDERS = ("Closed-ended-tasks", "Open-ended-tasks")


@dataclass
class BuiltFile:
    """One written file: where, whose, which task, and how many rows of each evaluation."""

    path: Path
    model: str
    pred_key: str
    task: str
    counts: dict[str, int]

    @property
    def rows(self) -> int:
        return sum(self.counts.values())


@dataclass
class Layout:
    """Everything one build wrote, and the (model, task) pairs it could not cover."""

    root: Path
    files: list[BuiltFile] = field(default_factory=list)
    incomplete: dict[tuple[str, str], int] = field(default_factory=dict)  # (model, task) -> rows missing

    def file(self, model: str, task: str) -> BuiltFile:
        for built in self.files:
            if built.model == model and built.task == task:
                return built
        raise KeyError(f"no Baselines-layout file for {model}/{task}")

    def models(self) -> list[str]:
        return sorted({built.model for built in self.files})

    def tasks(self) -> list[str]:
        return sorted({built.task for built in self.files})


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def pred_key_of(row: dict) -> str:
    """The first key containing ``_pred``, as L-Eval's scripts find it."""
    return next(key for key in row if "_pred" in key)


def _model_name(pred_key: str) -> str:
    return pred_key[: -len("_pred")] if pred_key.endswith("_pred") else pred_key


class _Pools:
    """Published answers by (model key, evaluation, query, gt), first come first served."""

    def __init__(self) -> None:
        self._rows: dict[tuple[str, str, str, str], deque[dict]] = defaultdict(deque)
        self.keys: set[str] = set()

    def add_file(self, path: Path, evaluations: tuple[str, ...] | None = None) -> None:
        for row in read_jsonl(path):
            if evaluations is not None and row.get("evaluation") not in evaluations:
                continue
            key = pred_key_of(row)
            self.keys.add(key)
            self._rows[(key, row["evaluation"], row["query"], row["gt"])].append(row)

    def take(self, key: str, evaluation: str, query: str, gt: str) -> dict | None:
        queue = self._rows.get((key, evaluation, query, gt))
        return queue.popleft() if queue else None


def _pools_for_task(shared: Path, task: str) -> _Pools:
    predictions = shared / "Predictions"
    pools = _Pools()
    for folder in sorted(set(METRIC_FOLDERS.values())):
        for path in sorted((predictions / folder).glob(f"*/{task}.pred.jsonl")):
            pools.add_file(path, tuple(e for e, f in METRIC_FOLDERS.items() if f == folder))
    for path in sorted((predictions / JUDGED_FOLDER).glob("*.pred.jsonl")):
        pools.add_file(path, JUDGED_EVALUATIONS)
    return pools


def task_files(shared: Path) -> dict[str, Path]:
    """Every L-Eval task with a data file in ``LEval-data``: {task: path}."""
    found = {}
    for folder in TASK_FOLDERS:
        for path in sorted((shared / "LEval-data" / folder).glob("*.jsonl")):
            found[path.stem] = path
    return found


def instructions(task_path: Path) -> list[tuple[str, str, str]]:
    """(query, gt, evaluation) for every instruction of a task file, in document order."""
    rows = []
    for document in read_jsonl(task_path):
        for query, gt in zip(document["instructions"], document["outputs"]):
            rows.append((query, gt, document["evaluation"]))
    return rows


def build_layout(shared: Path, dest: Path, *, tasks: list[str] | None = None,
                 models: list[str] | None = None) -> Layout:
    """Write ``<dest>/<model>/<task>.pred.jsonl`` for every model that answered every instruction.

    ``models`` filters by model name (the prediction key without ``_pred``). Each row is the
    published row itself (query, gt, prompt, ``<model>_pred``, in the published key order),
    with the document's ``evaluation``.
    """
    layout = Layout(root=dest)
    available = task_files(shared)
    for task in tasks or sorted(available):
        if task not in available:
            raise KeyError(f"no LEval-data file for task {task!r}")
        wanted = instructions(available[task])
        pools = _pools_for_task(shared, task)
        for key in sorted(pools.keys):
            model = _model_name(key)
            if models is not None and model not in models:
                continue
            rows, missing = [], 0
            for query, gt, evaluation in wanted:
                found = pools.take(key, evaluation, query, gt)
                if found is None:
                    missing += 1
                    continue
                rows.append({**found, "evaluation": evaluation})
            if missing:
                layout.incomplete[(model, task)] = missing
                continue
            path = dest / model / f"{task}.pred.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
            counts: dict[str, int] = defaultdict(int)
            for _query, _gt, evaluation in wanted:
                counts[evaluation] += 1
            layout.files.append(BuiltFile(path, model, key, task, dict(counts)))
    return layout
