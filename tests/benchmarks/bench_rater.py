"""Benchmark the pointwise LLM rater's concurrency on L-Eval's 595 human-eval answers.

The 85 questions of L-Eval's human-evaluation subset answered by its 7 systems, each rated with
the question and the three references, against the local stub answering after 300 ms. Prints
the wall time at concurrency 1 (the baseline, measured in the same run) and at 8, and the
speed-up (target >= 6x); then a re-run on the same cache, which must make 0 calls.

The same rating also runs through the app: the files imported into a fresh SQLite database, a
study over the subset, a background job at concurrency 8 with the DB-backed cache, then a second
job on the same content, which must make no API call.

Run: python tests/benchmarks/bench_rater.py
`run(quick=True)` (`--quick`) answers each stub request after 5 ms, so the run takes seconds; its
figures show overhead, not the concurrency speed-up, and carry no target.
"""
from __future__ import annotations

import argparse
import hashlib
import re
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:  # run as a script: make `app` and `tests` importable
    sys.path.insert(0, str(REPO_ROOT))

from app.core.llm.client import make_client  # noqa: E402
from app.core.metrics.files import prediction_key, read_rows  # noqa: E402
from app.core.rater import DEFAULT_RATER_TEMPLATE, InMemoryRatingCache, RatingItem, run_ratings  # noqa: E402
from app.core.rubric import RUBRIC  # noqa: E402
from tests.benchmarks.common import SHARED_LEVAL, print_table, row  # noqa: E402
from tests.support.openai_stub import StubOpenAIServer  # noqa: E402

HUMAN_EVAL_DIR = SHARED_LEVAL / "Predictions" / "human_eval"
REFERENCE_FILE = "claude.gpt4.ref.jsonl"
LATENCY_S = 0.300
QUICK_LATENCY_S = 0.005
CONCURRENCY = 8
TARGET_SPEEDUP = 6.0
EXPECTED_ANSWERS = 595
_ANSWER = re.compile(r"## The assistant's answer\n(.*)\n\n## End of the answer", re.S)


def _normalise(text: Any) -> str:
    return " ".join(str(text).split())


def load_items(data_dir: Path = HUMAN_EVAL_DIR) -> list[RatingItem]:
    """Every system's answer on the subset, with the question and its three references."""
    references: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {}
    for document in read_rows(data_dir / REFERENCE_FILE):
        for question, human, gpt4, claude in zip(document["instructions"], document["outputs"],
                                                 document["gpt4_outputs"], document["claude_outputs"], strict=True):
            references[(_normalise(question), _normalise(human))] = (
                ("Human reference", str(human)), ("GPT-4-32k reference", str(gpt4)),
                ("Claude-100k reference", str(claude)))
    items = []
    for path in sorted(data_dir.glob("*.pred.jsonl")):
        for number, record in enumerate(read_rows(path)):
            key = (_normalise(record["query"]), _normalise(record["gt"]))
            items.append(RatingItem(f"{path.name}:{number}", str(record["query"]), references[key],
                                    str(record[prediction_key(record)])))
    return items


def rating_policy(body: dict[str, Any]) -> str:
    """A stand-in rater: a fixed rating per answer."""
    match = _ANSWER.search(body["messages"][-1]["content"])
    value = 1 + hashlib.sha256((match.group(1) if match else "").encode()).digest()[0] % 5
    return f"Compared with the references. Rating: [[{value}]]"


def _timed(stub: StubOpenAIServer, items: list[RatingItem], concurrency: int, cache: InMemoryRatingCache):
    client = make_client(stub.base_url, "bench-key", max_retries=2, timeout=30.0)
    started = time.perf_counter()
    summary = run_ratings(client, items, model="gpt-4", template=DEFAULT_RATER_TEMPLATE, rubric=RUBRIC, cache=cache,
                          concurrency=concurrency)
    elapsed = time.perf_counter() - started
    if summary.errors or len(summary.results) != len(items):
        raise RuntimeError(f"rating run was incomplete: {summary.errors} errors, {len(summary.results)} results")
    return elapsed, summary


def _timed_jobs(latency_s: float, concurrency: int) -> tuple[float, dict, float, dict]:
    """Import the subset into a fresh database, create a study and rate it twice through background jobs."""
    import tempfile

    from flask_migrate import upgrade

    from app import create_app
    from app.extensions import db
    from app.models import Job
    from app.services.importers import import_path
    from app.services.jobs.worker import start_workers
    from app.services.judge import save_settings
    from app.services.rater import RaterSpec, current_rater_prompt, launch
    from app.services.studies.setup import StudySpec, create_study

    def wait_done(app, job_id: int) -> Job:
        while True:
            with app.app_context():
                job = db.session.get(Job, job_id)
                if job.status in ("done", "failed", "cancelled"):
                    db.session.expunge(job)
                    return job
            time.sleep(0.02)

    with tempfile.TemporaryDirectory() as instance, StubOpenAIServer(policy=rating_policy,
                                                                      latency_s=latency_s) as stub:
        app = create_app({"INSTANCE_PATH": instance})
        with app.app_context():
            upgrade()
            report = import_path(HUMAN_EVAL_DIR)
            if report.failed:
                raise RuntimeError(f"import failed: {report.as_dict()}")
            study = create_study(StudySpec("Rater benchmark", status="open"))
            save_settings(base_url=stub.base_url, api_key="bench-key", max_retries=2, timeout_s=30.0)
            spec = RaterSpec(study.id, "gpt-4", current_rater_prompt().id)
        consumer = start_workers(app, 1)
        try:
            timings = []
            for job_concurrency in (concurrency, max(1, concurrency // 2)):  # other params: a second job
                started = time.perf_counter()
                with app.app_context():
                    job_id = launch(spec, concurrency=job_concurrency, budget_usd=None).id
                job = wait_done(app, job_id)
                timings.append((time.perf_counter() - started, job))
        finally:
            consumer.stop(graceful=True)
            with app.app_context():
                db.session.remove()
                db.engine.dispose()
    (first_s, first), (second_s, second) = timings
    if first.status != "done" or second.status != "done":
        raise RuntimeError(f"rater jobs did not finish: {first.status} {first.error}; {second.status} {second.error}")
    return first_s, first.result, second_s, second.result


def run(latency_s: float = LATENCY_S, concurrency: int = CONCURRENCY, quick: bool = False) -> list[dict[str, Any]]:
    """Measure the runner at concurrency 1 and 8, a cached re-run, and the job path; rows from common.row."""
    if quick:
        latency_s = QUICK_LATENCY_S
    if not HUMAN_EVAL_DIR.is_dir():
        print(f"SKIPPED: ../shared/leval not present: {HUMAN_EVAL_DIR} is missing", file=sys.stderr)
        return []
    items = load_items()
    if len(items) != EXPECTED_ANSWERS:
        raise RuntimeError(f"expected {EXPECTED_ANSWERS} answers, found {len(items)}")
    with StubOpenAIServer(policy=rating_policy, latency_s=latency_s) as stub:
        serial_s, serial = _timed(stub, items, 1, InMemoryRatingCache())
        cache = InMemoryRatingCache()
        parallel_s, parallel = _timed(stub, items, concurrency, cache)
        calls_before = stub.calls
        rerun_s, rerun = _timed(stub, items, concurrency, cache)
        rerun_calls = stub.calls - calls_before
    if sorted((str(r.item_id), r.score) for r in serial.results) != \
            sorted((str(r.item_id), r.score) for r in parallel.results):
        raise RuntimeError("concurrency changed the ratings")
    if rerun_calls or rerun.api_calls:
        raise RuntimeError(f"the re-run made {rerun_calls} calls; expected 0")
    job_s, job, cached_s, cached = _timed_jobs(latency_s, concurrency)
    if cached["api_calls"] != 0:
        raise RuntimeError(f"the second rater job made {cached['api_calls']} API calls; expected 0")
    speedup = serial_s / parallel_s
    print(f"{len(items)} answers: {serial.api_calls} calls at {latency_s * 1000:.0f} ms each")
    print(f"runner, concurrency 1 (baseline): {serial_s:.2f} s")
    print(f"runner, concurrency {concurrency}: {parallel_s:.2f} s")
    print(f"speed-up: {speedup:.2f}x  (target >= {TARGET_SPEEDUP:.0f}x)")
    print(f"runner, re-run on the same cache: {rerun_s:.3f} s, {rerun_calls} API calls")
    print(f"job + DB cache, concurrency {concurrency}: {job_s:.2f} s for {job['api_calls']} calls")
    print(f"job + DB cache, second job on the same content: {cached_s:.2f} s, {cached['api_calls']} API calls")
    baseline = f"runner at concurrency 1 ({serial_s:.2f} s)"
    stub_text = f"stub latency {latency_s * 1000:g} ms"
    return [
        row(f"rater runner, 595 answers, concurrency 1 ({stub_text})", serial_s, "s", "-", None),
        row(f"rater runner, 595 answers, concurrency {concurrency} ({stub_text})", parallel_s, "s",
            "-" if quick else f">= {TARGET_SPEEDUP:.0f}x", serial_s, baseline),
        row("rater runner, re-run on the same cache: API calls", float(rerun_calls), "calls", "0", None),
        row(f"rater job + DB cache, concurrency {concurrency} ({stub_text})", job_s, "s", "-", serial_s, baseline),
        row("rater job + DB cache, second job: API calls", float(cached["api_calls"]), "calls", "0", None),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=float, default=LATENCY_S * 1000, help="stub delay per request")
    parser.add_argument("--concurrency", type=int, default=CONCURRENCY)
    parser.add_argument("--quick", action="store_true", help=f"stub delay {QUICK_LATENCY_S * 1000:g} ms; no targets")
    args = parser.parse_args()
    rows = run(latency_s=args.latency_ms / 1000, concurrency=args.concurrency, quick=args.quick)
    if not rows:
        return 0
    print_table(rows)
    if args.quick:
        return 0
    met = rows[1]["ratio"] >= TARGET_SPEEDUP and rows[2]["value"] == 0 and rows[4]["value"] == 0
    print("targets met" if met else "targets NOT met")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
