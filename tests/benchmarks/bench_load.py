"""Load: 50 annotators scoring their own answers against the real server on loopback for 60 s.

Run: python tests/benchmarks/bench_load.py [--seconds 60] [--annotators 50] [--think 0.2,0.6]

Each annotator is a thread with its own session and keep-alive connection. It opens 5 questions
(L-Eval's human-eval subset from ../shared/leval, else the demo), then for the whole run saves
scores on their answers, each save changing the answer's score, pausing 0.2-0.6 s between saves
(`--think 0` saves flat out). Reported: save round-trip p50 and p99 (target p99 <= 100 ms), the
server's own p99 (Server-Timing), throughput, errors, and lost or duplicated scores, found by
comparing every acknowledged save with the database (the last value of each answer, and one
revision per acknowledged change).

Baseline, measured in the same run just before: the same threads with the same pauses requesting
/healthz (one `SELECT 1`) for 15 s, i.e. the server's floor under the same concurrency.
`run(quick=True)`: 6 annotators for 3 s after a 1 s baseline (`--quick`).
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.benchmarks.common import SHARED_LEVAL, percentile, print_table, row  # noqa: E402

SECONDS = float(os.environ.get("LEVAL_BENCH_SECONDS", "60"))
ANNOTATORS = int(os.environ.get("LEVAL_BENCH_ANNOTATORS", "50"))
THINK_SECONDS = (0.2, 0.6)  # pause between one annotator's saves; people take far longer
BASELINE_SECONDS = 15.0
QUESTIONS_EACH = 5
TARGET_P99_MS = 100.0
QUICK = {"seconds": 3.0, "annotators": 6, "baseline_seconds": 1.0}


@dataclass
class Tally:
    """What one phase measured, merged over threads."""

    latencies: list[float] = field(default_factory=list)
    server: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    wall: float = 0.0


@dataclass
class Worker:
    name: str
    answers: list[tuple[int, str]] = field(default_factory=list)
    acknowledged: dict[tuple[int, str], list[int]] = field(default_factory=dict)


def _pace(rng: random.Random, think: tuple[float, float]) -> None:
    if think[1]:
        time.sleep(rng.uniform(*think))


def _healthz_loop(session, deadline: float, rng, think, tally: Tally, lock) -> None:
    while time.perf_counter() < deadline:
        _pace(rng, think)
        try:
            status, _, elapsed, server_ms, _ = session.request("GET", "/healthz")
        except (OSError, http.client.HTTPException) as exc:
            status, elapsed, server_ms = repr(exc), 0.0, None
        with lock:
            if status == 200:
                tally.latencies.append(elapsed)
                tally.server.append(server_ms)
            else:
                tally.errors.append(f"healthz: {status}")


def _save_loop(session, worker: Worker, deadline: float, rng, think, tally: Tally, lock) -> None:
    step = rng.randrange(len(worker.answers))
    while time.perf_counter() < deadline:
        _pace(rng, think)
        key = worker.answers[step % len(worker.answers)]
        previous = worker.acknowledged.get(key, [0])[-1]
        value = rng.choice([v for v in range(1, 6) if v != previous])  # every save is a change
        step += 1
        try:
            status, body, elapsed, server_ms, _ = session.save(key[0], key[1], value)
            ok = status == 200 and json.loads(body).get("saved") is True
        except (OSError, ValueError, http.client.HTTPException) as exc:
            status, elapsed, server_ms, ok = repr(exc), 0.0, None, False
        with lock:
            if ok:
                tally.latencies.append(elapsed)
                tally.server.append(server_ms)
                worker.acknowledged.setdefault(key, []).append(value)
            else:
                tally.errors.append(f"{worker.name} q{key[0]} {key[1]}: {status}")


def drive(base_url: str, names: list[str], questions: list[int], seconds: float, baseline_seconds: float,
          think: tuple[float, float]) -> tuple[Tally, Tally, list[Worker]]:
    """Sign everyone in, then run the /healthz phase and the saving phase with all threads at once."""
    from tests.support.live import HttpSession

    baseline, saving, lock = Tally(), Tally(), threading.Lock()
    workers = [Worker(name) for name in names]
    deadline: dict[str, float] = {}
    # Each phase's clock starts when the last thread arrives (a barrier's action runs before anyone is let go).
    ready = threading.Barrier(len(names) + 1, action=lambda: deadline.update(baseline=time.perf_counter() + baseline_seconds))
    between = threading.Barrier(len(names) + 1, action=lambda: deadline.update(saving=time.perf_counter() + seconds))

    def annotator(worker: Worker, index: int) -> None:
        rng = random.Random(index)
        session = HttpSession(base_url)
        try:
            session.sign_in(worker.name)
            worker.answers = session.answers(rng.sample(questions, min(QUESTIONS_EACH, len(questions))))
        except Exception as exc:  # noqa: BLE001 (a failed set-up is an error, and must not hang the others)
            with lock:
                saving.errors.append(f"{worker.name} set-up: {exc!r}")
        ready.wait()
        _healthz_loop(session, deadline["baseline"], rng, think, baseline, lock)
        between.wait()
        if worker.answers:
            _save_loop(session, worker, deadline["saving"], rng, think, saving, lock)
        session.close()

    threads = [threading.Thread(target=annotator, args=(w, i), daemon=True) for i, w in enumerate(workers)]
    for thread in threads:
        thread.start()
    ready.wait()
    started = time.perf_counter()
    between.wait()
    baseline.wall, started = time.perf_counter() - started, time.perf_counter()
    for thread in threads:
        thread.join()
    saving.wall = time.perf_counter() - started
    return baseline, saving, workers


def check_database(instance: Path, workers: list[Worker]) -> tuple[int, int]:
    """Return (lost, duplicated): acknowledged saves missing from the database, and saves stored twice."""
    from tests.support.live import instance_database

    with instance_database(instance) as con:
        current = {(user, question, label): value for user, question, label, value in con.execute(
            "SELECT u.username, p.question_id, s.answer_label, s.value FROM scores s "
            "JOIN users u ON u.id = s.annotator_id JOIN answers p ON p.id = s.answer_id")}
        revisions = {(user, question, label): count for user, question, label, count in con.execute(
            "SELECT u.username, p.question_id, s.answer_label, COUNT(r.id) FROM score_revisions r "
            "JOIN scores s ON s.id = r.score_id JOIN users u ON u.id = s.annotator_id "
            "JOIN answers p ON p.id = s.answer_id GROUP BY s.id, u.username, p.question_id, s.answer_label")}
        twins = con.execute("SELECT COUNT(*) FROM (SELECT 1 FROM scores GROUP BY round_id, answer_id "
                            "HAVING COUNT(*) > 1) AS twins").fetchone()[0]
    lost = duplicated = twins
    for worker in workers:
        for (question, label), values in worker.acknowledged.items():
            key = (worker.name, question, label)
            lost += current.get(key) != values[-1]
            lost += max(0, len(values) - revisions.get(key, 0))
            duplicated += max(0, revisions.get(key, 0) - len(values))
    return lost, duplicated


def run(seconds: float = SECONDS, annotators: int = ANNOTATORS, think: tuple[float, float] = THINK_SECONDS,
        baseline_seconds: float | None = None, quick: bool = False) -> list[dict]:
    """Drive the load and return rows; quick=True overrides the sizes with QUICK's."""
    if quick:
        seconds, annotators, baseline_seconds = QUICK["seconds"], QUICK["annotators"], QUICK["baseline_seconds"]
    from tests.e2e.conftest import start_server, stop_server
    from tests.support.live import instance_database, prepare_instance

    human_eval = SHARED_LEVAL / "Predictions" / "human_eval"
    names = [f"load-{i:02d}" for i in range(annotators)]
    baseline_seconds = min(BASELINE_SECONDS, seconds) if baseline_seconds is None else baseline_seconds
    with tempfile.TemporaryDirectory() as folder:
        instance = Path(folder) / "instance"
        if human_eval.is_dir():
            prepare_instance(instance, annotators=names, demo=False, folders=(human_eval,))
            data = "L-Eval human-eval subset"
        else:
            prepare_instance(instance, annotators=names)
            data = "demo data (../shared/leval not found)"
        with instance_database(instance) as con:
            questions = [q for (q,) in con.execute(
                "SELECT q.id FROM questions q JOIN documents d ON d.id = q.document_id "
                "WHERE d.collection = 'human_eval' ORDER BY q.id")]
        server = start_server(instance, {"LEVAL_WORKERS": "0"})
        try:
            baseline, saving, workers = drive(server.url, names, questions, seconds, baseline_seconds, think)
        finally:
            stop_server(server)
        lost, duplicated = check_database(instance, workers)
    saves, checks = len(saving.latencies), len(baseline.latencies)
    throughput, baseline_rate = saves / saving.wall, checks / baseline.wall
    pause = f"{think[0]:g}-{think[1]:g} s pauses" if think[1] else "no pause"
    print(f"  {data}; {annotators} annotators x {seconds:g} s, {pause}: {saves} saves acknowledged "
          f"({throughput:.0f}/s); baseline {checks} /healthz in {baseline.wall:.1f} s ({baseline_rate:.0f}/s)")
    for error in (saving.errors + baseline.errors)[:5]:
        print(f"  error: {error}")
    if not saves:
        raise RuntimeError("no save was acknowledged")
    label = f"load, {annotators} annotators x {seconds:g} s"
    same = f"/healthz, {annotators} clients, same pauses, same run"
    throughput_row = row(f"{label}: throughput (saves/s)", throughput, "/s", "-", baseline_rate,
                         "/healthz requests/s, same clients; ratio = saves/s / healthz/s")
    throughput_row["ratio"] = throughput / baseline_rate if baseline_rate else None
    return [
        row(f"{label}: save p50 (ms)", percentile(saving.latencies, 50), "ms", "-",
            percentile(baseline.latencies, 50), same),
        row(f"{label}: save p99 (ms)", percentile(saving.latencies, 99), "ms", f"<= {TARGET_P99_MS:g} ms",
            percentile(baseline.latencies, 99), same),
        row(f"{label}: server p99 (ms)", percentile(saving.server, 99), "ms", "-",
            percentile(baseline.server, 99), "/healthz server time (Server-Timing)"),
        throughput_row,
        row(f"{label}: errors", len(saving.errors) + len(baseline.errors), "", "0", None),
        row(f"{label}: lost scores", lost, "", "0", None),
        row(f"{label}: duplicated scores", duplicated, "", "0", None),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=SECONDS)
    parser.add_argument("--annotators", type=int, default=ANNOTATORS)
    parser.add_argument("--think", default=",".join(f"{t:g}" for t in THINK_SECONDS),
                        help="pause between one annotator's saves, MIN,MAX seconds (0 = none)")
    parser.add_argument("--quick", action="store_true", help="a few seconds with a few annotators")
    args = parser.parse_args()
    low, _, high = args.think.partition(",")
    print_table(run(args.seconds, args.annotators, (float(low), float(high or low)), quick=args.quick))


if __name__ == "__main__":
    main()
