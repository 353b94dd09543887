"""Load: 50 annotators scoring their own answers against the real server on loopback for 60 s.

Run: python tests/benchmarks/bench_load.py [--seconds 60] [--annotators 50] [--think 0.2,0.6]
         [--database-url postgresql+psycopg://user@host:port/postgres [--processes 2]] [--no-stress]

SQLite with one server process, and with --database-url PostgreSQL with 2 server processes
(`serve --processes 2`) in a database the benchmark creates and drops; each with the paced
scenario and the no-pause stress (every annotator saving flat out).

Each annotator is a thread with its own session and keep-alive connection. It opens 5 questions
(L-Eval's human-eval subset from ../shared/leval, else the demo), then for the whole run saves
scores on their answers, each save changing the answer's score, pausing 0.2-0.6 s between saves
(`--think 0` saves flat out). Reported: save round-trip p50 and p99 (target p99 <= 100 ms), the
server's own p99 (Server-Timing), throughput, errors, and lost or duplicated scores, found by
comparing every acknowledged save with the database (the last value of each answer, and one
revision per acknowledged change).

Baseline, measured in the same run just before: the same threads with the same pauses requesting
/healthz for 15 s, i.e. the server's floor under the same concurrency. (/healthz remembers a
passed storage probe for LEVAL_HEALTH_PROBE_SECONDS, so nearly all of these requests do no
database work.)
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
from contextlib import contextmanager
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
TARGET_RATIO = 0.6  # saves/s against /healthz/s of the same server and clients
PROCESSES = 2  # server processes on PostgreSQL
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


@contextmanager
def bench_database(server_url: str | None):
    """A database for one measurement: a new one on the PostgreSQL server (dropped after), or the instance's SQLite file."""
    if not server_url:
        yield ""
        return
    from tests.support.databases import PostgresServer

    server = PostgresServer(server_url)
    name = server.new_name("bench")
    try:
        yield server.create(name)
    finally:
        server.drop(name)
        server.dispose()


@contextmanager
def database_env(url: str):
    """LEVAL_DATABASE_URL for the set-up in this process ('' = the instance's SQLite file)."""
    previous = os.environ.get("LEVAL_DATABASE_URL")
    os.environ["LEVAL_DATABASE_URL"] = url
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("LEVAL_DATABASE_URL", None)
        else:
            os.environ["LEVAL_DATABASE_URL"] = previous


def measure(label: str, server_url: str | None, processes: int, names: list[str], seconds: float,
            baseline_seconds: float, think: tuple[float, float]) -> list[dict]:
    """One database and one pace: prepare, serve from `processes` processes, drive, check, and return rows."""
    from tests.e2e.conftest import start_server, stop_server
    from tests.support.live import instance_database, prepare_instance

    human_eval = SHARED_LEVAL / "Predictions" / "human_eval"
    with tempfile.TemporaryDirectory() as folder, bench_database(server_url) as url, database_env(url):
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
        server = start_server(instance, {"LEVAL_WORKERS": "0", "LEVAL_DATABASE_URL": url},
                              args=("--processes", str(processes)) if processes > 1 else ())
        try:
            baseline, saving, workers = drive(server.url, names, questions, seconds, baseline_seconds, think)
        finally:
            stop_server(server)
        lost, duplicated = check_database(instance, workers)
    saves, checks = len(saving.latencies), len(baseline.latencies)
    throughput, baseline_rate = saves / saving.wall, checks / baseline.wall
    pause = f"{think[0]:g}-{think[1]:g} s pauses" if think[1] else "no pause"
    print(f"  {label}: {data}; {len(names)} annotators x {seconds:g} s, {pause}: {saves} saves acknowledged "
          f"({throughput:.0f}/s); baseline {checks} /healthz in {baseline.wall:.1f} s ({baseline_rate:.0f}/s)")
    for error in (saving.errors + baseline.errors)[:5]:
        print(f"  error: {error}")
    if not saves:
        raise RuntimeError("no save was acknowledged")
    name = f"load, {label}, {len(names)} annotators, {pause}"
    same = f"/healthz, {len(names)} clients, same pauses, same server"
    throughput_row = row(f"{name}: throughput (saves/s)", throughput, "/s", f">= {TARGET_RATIO:g} x healthz",
                         baseline_rate, "/healthz requests/s, same clients; ratio = saves/s / healthz/s")
    throughput_row["ratio"] = throughput / baseline_rate if baseline_rate else None
    return [
        row(f"{name}: save p50 (ms)", percentile(saving.latencies, 50), "ms", "-",
            percentile(baseline.latencies, 50), same),
        row(f"{name}: save p99 (ms)", percentile(saving.latencies, 99), "ms", f"<= {TARGET_P99_MS:g} ms",
            percentile(baseline.latencies, 99), same),
        row(f"{name}: server p99 (ms)", percentile(saving.server, 99), "ms", "-",
            percentile(baseline.server, 99), "/healthz server time (Server-Timing)"),
        throughput_row,
        row(f"{name}: errors", len(saving.errors) + len(baseline.errors), "", "0", None),
        row(f"{name}: lost scores", lost, "", "0", None),
        row(f"{name}: duplicated scores", duplicated, "", "0", None),
    ]


def run(seconds: float = SECONDS, annotators: int = ANNOTATORS, think: tuple[float, float] = THINK_SECONDS,
        baseline_seconds: float | None = None, quick: bool = False, database_url: str | None = None,
        processes: int = PROCESSES, stress: bool = True) -> list[dict]:
    """Drive the load on SQLite (one process) and, given a PostgreSQL URL, on it (`processes` processes).

    Each database gets the paced scenario and, with stress, the no-pause one; quick=True overrides
    the sizes with QUICK's and leaves the stress out.
    """
    if quick:
        seconds, annotators, baseline_seconds = QUICK["seconds"], QUICK["annotators"], QUICK["baseline_seconds"]
        stress = False
    names = [f"load-{i:02d}" for i in range(annotators)]
    baseline_seconds = min(BASELINE_SECONDS, seconds) if baseline_seconds is None else baseline_seconds
    targets = [("SQLite, 1 process", None, 1)]
    if database_url:
        targets.append((f"PostgreSQL, {processes} processes", database_url, processes))
    paces = [think] + ([(0.0, 0.0)] if stress and think[1] else [])
    rows = []
    for label, url, count in targets:
        for pace in paces:
            rows += measure(label, url, count, names, seconds, baseline_seconds, pace)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=SECONDS)
    parser.add_argument("--annotators", type=int, default=ANNOTATORS)
    parser.add_argument("--think", default=",".join(f"{t:g}" for t in THINK_SECONDS),
                        help="pause between one annotator's saves, MIN,MAX seconds (0 = none)")
    parser.add_argument("--no-stress", action="store_true", help="leave out the no-pause run")
    parser.add_argument("--database-url", default=os.environ.get("LEVAL_BENCH_DATABASE_URL", ""),
                        help="a PostgreSQL server (postgresql+psycopg://user@host:port/postgres): also run there, "
                             "in a new database created and dropped by the benchmark")
    parser.add_argument("--processes", type=int, default=PROCESSES, help="server processes on PostgreSQL")
    parser.add_argument("--quick", action="store_true", help="a few seconds with a few annotators")
    args = parser.parse_args()
    low, _, high = args.think.partition(",")
    print_table(run(args.seconds, args.annotators, (float(low), float(high or low)), quick=args.quick,
                    database_url=args.database_url or None, processes=args.processes, stress=not args.no_stress))


if __name__ == "__main__":
    main()
