"""Benchmark generation's concurrency on L-Eval's 85-question human-evaluation subset.

L-Eval's human-eval reference file is imported into a fresh SQLite database; the generation
service then answers the 85 questions with L-Eval's prompts through the stub server answering
each request after 300 ms, storing every call and answer in the database as it lands (the
production path, less the job queue). Concurrency 1 is the baseline, measured in the same run;
concurrency 8 must be at least 6x faster. A re-run of the concurrency-8 content (as a new system)
must make no API call.

Run: python tests/benchmarks/bench_generate.py
`run(quick=True)` (`--quick`) answers each stub request after 5 ms instead, so the whole run takes
seconds; its figures show overhead, not the concurrency speed-up, and carry no target.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:  # run as a script: make `app` and `tests` importable
    sys.path.insert(0, str(REPO_ROOT))

from tests.benchmarks.common import print_table, row  # noqa: E402
from tests.support.openai_stub import StubOpenAIServer  # noqa: E402

HUMAN_EVAL_DIR = REPO_ROOT.parent / "shared" / "leval" / "Predictions" / "human_eval"
REFERENCE_FILE = "claude.gpt4.ref.jsonl"
LATENCY_S = 0.300
QUICK_LATENCY_S = 0.005
CONCURRENCY = 8
TARGET_SPEEDUP = 6.0
QUESTIONS = 85


def _generate(app, stub, model: str, system: str, concurrency: int) -> tuple[float, dict[str, Any]]:
    """Plan (untimed), then answer every question; return the wall time and the outcome's figures."""
    from app.extensions import db
    from app.services.generation import runs
    from app.services.generation.spec import RunSpec, prepare

    with app.app_context():
        spec = RunSpec(base_url=stub.base_url, model=model, question_set="human_eval", system_name=system,
                       concurrency=concurrency)
        prepared = prepare(spec)
        run = runs.create_run(prepared, None)
        db.session.commit()
        from app.core.llm.client import make_client

        client = make_client(stub.base_url, "bench-key", max_retries=2, timeout=30.0)
        started = time.perf_counter()
        outcome = runs.execute(prepared, run, client=client)
        elapsed = time.perf_counter() - started
        figures = {"answered": outcome.answered, "api_calls": outcome.usage.api_calls,
                   "cached": outcome.usage.cached, "errors": outcome.usage.errors,
                   "questions": len(prepared.run.questions), "cut": prepared.run.documents_cut()}
        db.session.remove()
    if figures["answered"] != figures["questions"] or figures["errors"]:
        raise RuntimeError(f"generation run {system} was incomplete: {figures}")
    return elapsed, figures


def run(latency_s: float = LATENCY_S, concurrency: int = CONCURRENCY, quick: bool = False) -> list[dict[str, Any]]:
    """Measure concurrency 1 and `concurrency` on the same questions; return rows from common.row."""
    if quick:
        latency_s = QUICK_LATENCY_S
    if not (HUMAN_EVAL_DIR / REFERENCE_FILE).is_file():
        print(f"SKIPPED: ../shared/leval not present: {HUMAN_EVAL_DIR} is missing", file=sys.stderr)
        return []
    before = os.environ.get("LEVAL_TOKENIZER")
    os.environ["LEVAL_TOKENIZER"] = "estimate"  # the same counts on every machine
    try:
        return _measure(latency_s, concurrency, quick)
    finally:  # run() may be called in-process (the benchmark smoke test): leave the environment as it was
        if before is None:
            os.environ.pop("LEVAL_TOKENIZER", None)
        else:
            os.environ["LEVAL_TOKENIZER"] = before


def _measure(latency_s: float, concurrency: int, quick: bool) -> list[dict[str, Any]]:
    from flask_migrate import upgrade

    from app import create_app
    from app.extensions import db
    from app.services.importers import import_path

    with tempfile.TemporaryDirectory() as instance, \
            StubOpenAIServer(policy=lambda body: "A short answer.", latency_s=latency_s) as stub:
        app = create_app({"INSTANCE_PATH": instance})
        with app.app_context():
            upgrade()
            report = import_path(HUMAN_EVAL_DIR / REFERENCE_FILE)
            if report.failed:
                raise RuntimeError(f"import failed: {report.as_dict()}")
            db.session.remove()
        # Different model names: the two timed runs share no cache entry.
        serial_s, serial = _generate(app, stub, "bench-model-c1", "bench-c1", 1)
        parallel_s, parallel = _generate(app, stub, "bench-model-c8", "bench-c8", concurrency)
        cached_s, cached = _generate(app, stub, "bench-model-c8", "bench-c8-again", concurrency)
        peak = stub.max_active
        with app.app_context():
            db.session.remove()
            db.engine.dispose()
    if serial["questions"] != QUESTIONS:
        raise RuntimeError(f"expected L-Eval's {QUESTIONS} questions, found {serial['questions']}")
    if cached["api_calls"] != 0:
        raise RuntimeError(f"the re-run made {cached['api_calls']} API calls; expected 0")
    speedup = serial_s / parallel_s
    print(f"{serial['questions']} questions, one call each at {latency_s * 1000:.0f} ms; "
          f"{serial['cut']} documents cut to the 16k context; peak concurrent requests {peak}")
    print(f"generation, concurrency 1 (baseline): {serial_s:.2f} s for {serial['api_calls']} calls")
    print(f"generation, concurrency {concurrency}: {parallel_s:.2f} s for {parallel['api_calls']} calls")
    print(f"speed-up: {speedup:.2f}x  (target >= {TARGET_SPEEDUP:.0f}x)")
    print(f"re-run of the same content: {cached_s:.2f} s, {cached['api_calls']} API calls, {cached['cached']} cached")
    baseline = f"generation at concurrency 1 ({serial_s:.2f} s)"
    stub_delay = f"stub latency {latency_s * 1000:g} ms"
    return [
        row(f"generation, 85 questions, concurrency 1 ({stub_delay})", serial_s, "s", "-", None),
        row(f"generation, 85 questions, concurrency {concurrency} ({stub_delay})", parallel_s, "s",
            "-" if quick else f">= {TARGET_SPEEDUP:.0f}x", serial_s, baseline),
        row("generation, cached re-run (0 calls)", cached_s, "s", "0 API calls", serial_s, baseline),
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
    met = rows[1]["ratio"] >= TARGET_SPEEDUP
    print("targets met" if met else "targets NOT met")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
