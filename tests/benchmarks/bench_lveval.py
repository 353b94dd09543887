"""Benchmark LV-Eval: import plus the metrics job on a synthetic run of 11 datasets x 5 levels x 100 rows.

Run as ``python tests/benchmarks/bench_lveval.py``. Baselines measured in the same run:

* plain JSON parsing of the same 55 files (json.loads per line, nothing else);
* the LV-Eval oracle (tests/support/lveval_reference.py: LV-Eval's algorithm with the PyPI `rouge` package),
  scoring the folder in this process;
* LV-Eval's own evaluation.py, when LVEVAL_SOURCE names a checkout of infinigence/LVEval and
  LVEVAL_PYTHON an interpreter with its PyPI packages (pandas, jieba==0.42.1, rouge==1.0.1); its code
  is copied to a temporary folder at run time, never into this repository.

Every run checks that the stored table equals the oracle's result.json (and LV-Eval's, when run).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO_ROOT, print_table, row  # noqa: E402

ROWS_PER_FILE = 100
TARGET_SECONDS = 5.0


def _write_run(root: Path, rows: int) -> Path:
    from tests.support.lveval_data import write_model

    return write_model(root, "bench-model", seed=7, rows=rows, skill=0.6, window=32_768)


def _plain_json(folder: Path) -> int:
    count = 0
    for path in sorted(folder.glob("*.jsonl")):
        with open(path, encoding="utf-8") as handle:
            count += len([json.loads(line) for line in handle if line.strip()])
    return count


def _import_and_score(folder: Path, instance: Path) -> tuple[float, dict]:
    """Time the import (validation, questions, predictions) and the metrics job's scoring, both profiles."""
    from flask_migrate import upgrade
    from sqlalchemy import select

    from app import create_app
    from app.extensions import db
    from app.models import MetricAggregate, System
    from app.services.lveval import import_models
    from app.services.metrics.compute import score_system

    app = create_app({"INSTANCE_PATH": instance}, web=False)
    with app.app_context():
        upgrade()
        started = time.perf_counter()
        report = import_models(folder)
        if report.failed:
            raise AssertionError(report.failed[0].errors[:3])
        system_id = db.session.scalar(select(System.id).where(System.name == folder.name))
        score_system(system_id)
        db.session.commit()
        seconds = time.perf_counter() - started
        cells = {a.task: a.value for a in db.session.scalars(select(MetricAggregate).where(
            MetricAggregate.system_id == system_id, MetricAggregate.profile == "official",
            MetricAggregate.metric == "lveval"))}
        db.session.remove()
        db.engine.dispose()
    return seconds, cells


def _lveval_itself(folder: Path, work: Path) -> tuple[float, dict] | None:
    source, python = os.environ.get("LVEVAL_SOURCE"), os.environ.get("LVEVAL_PYTHON")
    if not source or not python or not (Path(source) / "evaluation.py").is_file():
        return None
    scripts = work / "lveval-scripts"
    scripts.mkdir()
    for name in ("evaluation.py", "config.py", "metrics.py"):
        shutil.copy(Path(source) / name, scripts / name)
    # evaluation.py needs only ensure_dir from utils.py (whose other imports are torch and datasets).
    (scripts / "utils.py").write_text("import os\n\ndef ensure_dir(path):\n    os.makedirs(path, exist_ok=True)\n")
    started = time.perf_counter()
    subprocess.run([python, "evaluation.py", "--input-dir", str(folder)], cwd=scripts, check=True,
                   capture_output=True)
    seconds = time.perf_counter() - started
    result_dir = folder / "eval_result"
    cells = json.loads((result_dir / "result.json").read_text(encoding="utf-8"))
    shutil.rmtree(result_dir)
    return seconds, cells


def run(quick: bool = False) -> list[dict]:
    """The rows; `quick` scores 10 rows per file and leaves LV-Eval's own scorer out (a smoke run)."""
    from tests.support import lveval_reference as oracle

    with tempfile.TemporaryDirectory(prefix="bench-lveval-") as tmp:
        work = Path(tmp)
        folder = _write_run(work / "runs", 10 if quick else ROWS_PER_FILE)
        files = len(list(folder.glob("*.jsonl")))
        started = time.perf_counter()
        rows_read = _plain_json(folder)
        parse_seconds = time.perf_counter() - started
        seconds, cells = _import_and_score(folder, work / "instance")
        started = time.perf_counter()
        expected = oracle.evaluate_folder(folder)["result_json"]
        oracle_seconds = time.perf_counter() - started
        if cells != expected:
            raise AssertionError("the stored LV-Eval table differs from the oracle's result.json")
        label = f"LV-Eval import + metrics job ({files} files, {rows_read} rows, 2 profiles)"
        rows = [
            row(label, seconds, "s", f"<= {TARGET_SECONDS:g} s", parse_seconds, "plain JSON parsing of the same files"),
            row(label, seconds, "s", f"<= {TARGET_SECONDS:g} s", oracle_seconds,
                "LV-Eval oracle (its algorithm, rouge package), official profile only, in process"),
        ]
        itself = None if quick else _lveval_itself(folder, work)
        if itself is None:
            print("LV-Eval's own evaluation.py not run: set LVEVAL_SOURCE (a checkout) and LVEVAL_PYTHON "
                  "(an interpreter with pandas, jieba, rouge)")
        else:
            lveval_seconds, lveval_cells = itself
            if lveval_cells != cells:
                raise AssertionError("LV-Eval's result.json differs from the stored table")
            rows.append(row(label, seconds, "s", f"<= {TARGET_SECONDS:g} s", lveval_seconds,
                            "LV-Eval's evaluation.py (new process: interpreter, pandas, jieba), official only"))
    return rows


def main() -> None:
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    rows = run()
    print_table(rows)
    if rows[0]["value"] > TARGET_SECONDS:
        print(f"over target: {rows[0]['value']:.2f} s > {TARGET_SECONDS:g} s")


if __name__ == "__main__":
    main()
