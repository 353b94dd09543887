"""Benchmark the judge runner's concurrency on L-Eval's 85 human-eval pairs.

claude-100k against turbo-16k-0613, both orders (170 judgments; the one pair of identical answers
is a tie without a call), against the local stub answering each request after 300 ms. Prints the
wall time at concurrency 1 (the baseline, measured in the same run) and at 8, and the speed-up.
Targets: at least 5x faster and at most 8 s at concurrency 8.

The same judging also runs through the app: the files imported into a fresh SQLite database,
a background job at concurrency 8 with the DB-backed cache (one committed row per judgment),
then a second job on the same content, which must make no API call.

Run: python tests/benchmarks/bench_judge.py
`run(quick=True)` (`--quick`) answers each stub request after 5 ms instead, so the whole run takes
seconds; its figures show overhead, not the concurrency speed-up, and carry no target.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:  # run as a script: make `app` and `tests` importable
    sys.path.insert(0, str(REPO_ROOT))

from app.core.judge import (  # noqa: E402
    DEFAULT_TEMPLATE,
    InMemoryJudgeCache,
    PairItem,
    make_client,
    run_judgments,
)
from app.core.metrics.files import prediction_key, read_rows  # noqa: E402
from tests.benchmarks.common import SHARED_LEVAL, print_table, row  # noqa: E402
from tests.support.openai_stub import StubOpenAIServer  # noqa: E402

HUMAN_EVAL_DIR = SHARED_LEVAL / "Predictions" / "human_eval"
SYSTEM_FILE = "claude-100k.pred.jsonl"
BASELINE_FILE = "turbo-16k-0613.pred.jsonl"
REFERENCE_FILE = "claude.gpt4.ref.jsonl"
LATENCY_S = 0.300
QUICK_LATENCY_S = 0.005
CONCURRENCY = 8
TARGET_SPEEDUP = 5.0
TARGET_WALL_S = 8.0

_WORD = re.compile(r"\w+")
# Sections of DEFAULT_TEMPLATE's user message: reference, answer A, answer B.
_SECTIONS = re.compile(
    r"## Reference answer \(written by a human\)\n(.*)\n\n## Assistant A's answer\n(.*)"
    r"\n\n## Assistant B's answer\n(.*)\n\n## End of answers",
    re.S,
)


def _normalise(text: Any) -> str:
    return " ".join(str(text).split())


def _by_query_and_gt(rows: list[dict[str, Any]], source: str) -> dict[tuple[str, str], dict[str, Any]]:
    """Index prediction rows by normalised (query, gt); a duplicate key is an error."""
    index: dict[tuple[str, str], dict[str, Any]] = {}
    for record in rows:
        key = (_normalise(record["query"]), _normalise(record["gt"]))
        if key in index:
            raise ValueError(f"{source}: duplicate (query, gt) {key[0][:60]!r}")
        index[key] = record
    return index


def _prediction(record: dict[str, Any]) -> str:
    return str(record[prediction_key(record)])


def load_pairs(data_dir: Path = HUMAN_EVAL_DIR) -> list[PairItem]:
    """Pair claude-100k's and turbo-16k-0613's predictions with the human references."""
    system = _by_query_and_gt(read_rows(data_dir / SYSTEM_FILE), SYSTEM_FILE)
    baseline = _by_query_and_gt(read_rows(data_dir / BASELINE_FILE), BASELINE_FILE)
    references: dict[tuple[str, str], str] = {}
    for document in read_rows(data_dir / REFERENCE_FILE):
        for question, answer in zip(document["instructions"], document["outputs"], strict=True):
            references[(_normalise(question), _normalise(answer))] = str(answer)
    pairs = []
    for number, (key, record) in enumerate(system.items()):
        if key not in baseline or key not in references:
            raise ValueError(f"no baseline or reference for {key[0][:60]!r}")
        pairs.append(PairItem(number, str(record["query"]), references[key], _prediction(record),
                              _prediction(baseline[key])))
    return pairs


def overlap_policy(body: dict[str, Any]) -> str:
    """Prefer the answer sharing more words with the reference (a stand-in judge)."""
    match = _SECTIONS.search(body["messages"][-1]["content"])
    reference = set(_WORD.findall(match.group(1).lower())) if match else set()
    if match is None or not reference:
        return "Cannot parse the prompt; calling it even. [[C]]"

    def f1(answer: str) -> float:
        words = set(_WORD.findall(answer.lower()))
        common = len(words & reference)
        return 0.0 if common == 0 else 2 * common / (len(words) + len(reference))

    score_a, score_b = f1(match.group(2)), f1(match.group(3))
    verdict = "C" if abs(score_a - score_b) < 0.02 else ("A" if score_a > score_b else "B")
    return f"Word overlap with the reference: A {score_a:.2f}, B {score_b:.2f}. [[{verdict}]]"


def _timed_run(stub: StubOpenAIServer, pairs: list[PairItem], concurrency: int) -> tuple[float, dict[str, Any]]:
    client = make_client(stub.base_url, "bench-key", max_retries=2, timeout=30.0)
    started = time.perf_counter()
    summary = run_judgments(
        client, pairs, model="gpt-4", template=DEFAULT_TEMPLATE, cache=InMemoryJudgeCache(), concurrency=concurrency
    )
    elapsed = time.perf_counter() - started
    report = summary.to_cli_json()
    # One pair has identical answers: the default profile records it as a tie in both orders without a call.
    report["no_call"] = sum(r.no_call for r in summary.results)
    if report["api_calls"] + report["cached"] + report["no_call"] != 2 * len(pairs) or report["errors"]:
        raise RuntimeError(f"benchmark run was incomplete: {report}")
    return elapsed, report


def _timed_job_runs(latency_s: float, concurrency: int) -> tuple[float, dict[str, Any], float, dict[str, Any]]:
    """Import the three files into a fresh database and judge through a background job and the DB cache.

    Returns the first job's wall time (submit to done) and result, then the same for a second
    job on the same content (other params), which must be served from the cache.
    """
    import tempfile

    from flask_migrate import upgrade

    from app import create_app
    from app.extensions import db
    from app.models import Job
    from app.services.importers import import_path
    from app.services.jobs.worker import start_workers
    from app.services.judge import RunSpec, current_prompt, launch, save_settings

    def wait_done(app, job_id: int) -> Job:
        while True:
            with app.app_context():
                job = db.session.get(Job, job_id)
                if job.status in ("done", "failed", "cancelled"):
                    db.session.expunge(job)
                    return job
            time.sleep(0.01)

    stub_server = StubOpenAIServer(policy=overlap_policy, latency_s=latency_s)
    with tempfile.TemporaryDirectory() as instance, stub_server as stub:
        app = create_app({"INSTANCE_PATH": instance})
        with app.app_context():
            upgrade()
            for name in (REFERENCE_FILE, SYSTEM_FILE, BASELINE_FILE):
                report = import_path(HUMAN_EVAL_DIR / name)
                if report.failed or report.unmatched:
                    raise RuntimeError(f"import of {name} failed: {report.as_dict()}")
            save_settings(base_url=stub.base_url, api_key="bench-key", max_retries=2, timeout_s=30.0)
            spec = RunSpec("claude-100k", "turbo-16k-0613", "gpt-4", current_prompt().id, 0.0, "human_eval")
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
        raise RuntimeError(f"judge jobs did not finish: {first.status} {first.error}; {second.status} {second.error}")
    if second.result["api_calls"] != 0:
        raise RuntimeError(f"the second job made {second.result['api_calls']} API calls; expected 0")
    return first_s, first.result, second_s, second.result


def run(latency_s: float = LATENCY_S, concurrency: int = CONCURRENCY,
        quick: bool = False) -> list[dict[str, Any]]:
    """Measure the runner alone and through the job + DB cache; return rows from common.row."""
    if quick:
        latency_s = QUICK_LATENCY_S
    if not HUMAN_EVAL_DIR.is_dir():
        print(f"SKIPPED: ../shared/leval not present: {HUMAN_EVAL_DIR} is missing", file=sys.stderr)
        return []
    pairs = load_pairs()
    with StubOpenAIServer(policy=overlap_policy, latency_s=latency_s) as stub:
        serial_s, serial_report = _timed_run(stub, pairs, 1)
        parallel_s, parallel_report = _timed_run(stub, pairs, concurrency)
    if serial_report["wins"] != parallel_report["wins"] or serial_report["ties"] != parallel_report["ties"]:
        raise RuntimeError("concurrency changed the verdicts")
    job_s, job_result, cached_s, cached_result = _timed_job_runs(latency_s, concurrency)
    if job_result["win_rate"] != parallel_report["win_rate"]:
        raise RuntimeError("the job path gave another win rate than the runner")
    speedup = serial_s / parallel_s
    print(
        f"{len(pairs)} pairs x 2 orders: {serial_report['api_calls']} calls at {latency_s * 1000:.0f} ms each "
        f"(+{serial_report['no_call']} verdicts of identical answers, a tie without a call); "
        f"stand-in judge win rate {serial_report['win_rate']:.1f}% (L-Eval), "
        f"{serial_report['win_rate_fastchat']:.1f}% (FastChat)"
    )
    print(f"runner, concurrency 1 (baseline): {serial_s:.2f} s")
    print(f"runner, concurrency {concurrency}: {parallel_s:.2f} s  (target <= {TARGET_WALL_S:.0f} s)")
    print(f"speed-up: {speedup:.2f}x  (target >= {TARGET_SPEEDUP:.0f}x)")
    print(f"job + DB cache, concurrency {concurrency}: {job_s:.2f} s for {job_result['api_calls']} calls "
          f"(submit to done, one row committed per judgment)")
    print(f"job + DB cache, second job on the same content: {cached_s:.2f} s, "
          f"{cached_result['api_calls']} API calls, {cached_result['cached']} cached")
    runner_baseline = f"runner at concurrency 1 ({serial_s:.2f} s)"
    stub = f"stub latency {latency_s * 1000:g} ms"
    return [
        row(f"judge runner, concurrency 1 ({stub})", serial_s, "s", "-", None),
        row(f"judge runner, concurrency {concurrency} ({stub})", parallel_s, "s",
            "-" if quick else f"<= {TARGET_WALL_S:.0f} s, >= 5x", serial_s, runner_baseline),
        row(f"judge job + DB cache, concurrency {concurrency} ({stub})", job_s, "s",
            "-" if quick else f"<= {TARGET_WALL_S:.0f} s", serial_s, runner_baseline),
        row("judge job + DB cache, cached re-run (0 calls)", cached_s, "s", "0 API calls", serial_s,
            runner_baseline),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=float, default=LATENCY_S * 1000, help="stub delay per request")
    parser.add_argument("--concurrency", type=int, default=CONCURRENCY)
    parser.add_argument("--quick", action="store_true",
                        help=f"stub delay {QUICK_LATENCY_S * 1000:g} ms; no targets")
    args = parser.parse_args()
    rows = run(latency_s=args.latency_ms / 1000, concurrency=args.concurrency, quick=args.quick)
    if not rows:
        return 0
    print_table(rows)
    if args.quick:
        return 0
    runner, job = rows[1], rows[2]
    met = runner["value"] <= TARGET_WALL_S and runner["ratio"] >= TARGET_SPEEDUP and job["value"] <= TARGET_WALL_S
    print("targets met" if met else "targets NOT met")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
