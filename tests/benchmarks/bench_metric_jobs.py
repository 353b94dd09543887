"""Benchmark the upload and metrics-job path on L-Eval's published exam and ngram predictions.

Run as ``python tests/benchmarks/bench_metric_jobs.py``. In a throw-away instance folder:

1. preview (validate and match, read-only) a zip of the 57 published files, against importing
   the same files with ``import_path`` (which parses, matches and writes);
2. score every imported system as a metrics job does (both profiles, per-question rows upserted,
   per-task and '*' aggregates stored), against scoring the same files in memory with
   ``evaluate_file`` (both profiles), i.e. the database's overhead over pure computation.

``ratio`` is baseline / value. ``run()`` returns the rows for a collecting script;
``run(quick=True)`` takes two small tasks only (tpo and financial_qa: 6 files and their source data).
"""
from __future__ import annotations

import io
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from common import print_table, row, shared_or_exit  # noqa: I001  (common puts the repo on sys.path)

from app import create_app  # noqa: E402
from app.cli.database import upgrade_database  # noqa: E402
from app.extensions import db  # noqa: E402
from app.core.metrics import PROFILES, evaluate_file  # noqa: E402
from app.models import System  # noqa: E402
from app.services.importers import import_path  # noqa: E402
from app.services.metrics import score_system  # noqa: E402
from app.services.uploads import preview_upload  # noqa: E402


QUICK_TASKS = ("tpo", "financial_qa")


def _published(root: Path, tasks: tuple[str, ...] = ()) -> list[Path]:
    predictions = root / "Predictions"
    files = sorted(predictions.glob("exam_eval/*/*.pred.jsonl")) + sorted(predictions.glob("ngram_eval/*/*.pred.jsonl"))
    return [f for f in files if f.name.removesuffix(".pred.jsonl") in tasks] if tasks else files


def _sources(root: Path, tasks: tuple[str, ...] = ()) -> list[Path]:
    """L-Eval's source data: the whole folder, or the files of these tasks."""
    data = root / "LEval-data"
    return [path for task in tasks for path in sorted(data.glob(f"*/{task}.jsonl"))] if tasks else [data]


def _zip(files: list[Path]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in files:
            archive.write(path, f"{path.parent.parent.name}/{path.parent.name}/{path.name}")
    return buffer.getvalue()


def _timed(function):
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def run(quick: bool = False) -> list[dict]:
    root = shared_or_exit()
    tasks = QUICK_TASKS if quick else ()
    files = _published(root, tasks)
    with tempfile.TemporaryDirectory() as instance:
        app = create_app({"INSTANCE_PATH": instance})
        with app.app_context():
            upgrade_database()
            for source in _sources(root, tasks):
                assert not import_path(source).failed, source
            archive = _zip(files)
            preview_seconds, batch = _timed(lambda: preview_upload([("published.zip", io.BytesIO(archive))], user_id=1))
            folder = Path(instance) / "published"
            for path in files:
                target = folder / path.parent.name / path.name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(path.read_bytes())
            import_seconds, report = _timed(lambda: import_path(folder))
            matched_files = [folder / item.file for item in report.files
                             if not item.error and item.counts.get("matched") == item.rows]
            systems = list(db.session.scalars(db.select(System)))
            score_seconds, summaries = _timed(lambda: [score_system(system.id) for system in systems])
            predictions = sum(s["predictions"] for s in summaries)
            memory_seconds, _ = _timed(
                lambda: [evaluate_file(path, profile=p) for path in matched_files for p in PROFILES])
            db.session.remove()
            db.engine.dispose()
    matched = sum(1 for f in batch.files if f.ok)
    return [
        row(f"preview a zip of {len(files)} files ({matched} fully matched)", preview_seconds, "s", "-",
            import_seconds, "import_path of the same files (writes)"),
        row(f"metrics job path: {len(systems)} systems, {predictions} predictions, 2 profiles", score_seconds, "s",
            "-" if quick else "<=3s", memory_seconds,
            f"evaluate_file on the {len(matched_files)} matched files, in memory"),
    ]


def main() -> None:
    print_table(run(quick="--quick" in sys.argv[1:]))


if __name__ == "__main__":
    main()
