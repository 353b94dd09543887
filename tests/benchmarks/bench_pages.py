"""Benchmark the scoring pages against the real server on loopback.

1. The question page and the document request for L-Eval's largest document (255,521
   characters): 200 requests each, p50 and p95 of the server time (the Server-Timing header)
   and of the client's round trip. Target: server p95 <= 25 ms.
2. 50 annotators saving scores at once, each with its own session and connection: p99 of the
   save round trip, errors, and lost writes (acknowledged saves missing from the database).
   Each waits 0.2-0.6 s between saves (a person takes seconds). Target: p99 <= 100 ms, 0 errors,
   0 lost. A stress run without any pause is reported too, without a target.

Baseline, measured in the same run: /healthz, the cheapest request the app serves (one
`SELECT 1`), so the ratio shows what each page costs above the bare request overhead.
`run(quick=True)`: 20 requests each, 5 annotators scoring one question each, shorter pauses.
"""
from __future__ import annotations

import json
import random
import re
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from common import REPO_ROOT, percentile, print_table, row, shared_or_exit

from tests.support.live import HttpSession, human_eval_questions, instance_database, prepare_instance


@dataclass(frozen=True)
class Sizes:
    requests: int = 200
    annotators: int = 50
    questions_each: int = 5                  # each annotator scores every answer of this many questions
    think: tuple[float, float] = (0.2, 0.6)  # pause between one annotator's saves; people take far longer
    stress_questions: int = 2                # the stress run: no pause, every annotator saving flat out


FULL = Sizes()
QUICK = Sizes(requests=20, annotators=5, questions_each=1, think=(0.0, 0.05), stress_questions=1)


def largest_document_question(instance: Path) -> tuple[int, int, int]:
    with instance_database(instance) as con:
        return con.execute(
            "SELECT q.id, d.id, d.char_count FROM questions q JOIN documents d ON d.id = q.document_id "
            "WHERE d.collection = 'human_eval' ORDER BY d.char_count DESC, q.position LIMIT 1"
        ).fetchone()


def timed_gets(session: HttpSession, path: str, count: int) -> tuple[list[float], list[float]]:
    client, server = [], []
    for _ in range(count):
        status, _, elapsed, server_ms, _ = session.request("GET", path)
        if status != 200:
            raise RuntimeError(f"GET {path}: {status}")
        client.append(elapsed)
        server.append(server_ms)
    return client, server


def concurrent_saves(base_url: str, question_ids: list[int], prefix: str, annotators: int, questions_each: int,
                     think: tuple[float, float]) -> dict:
    """`annotators` at once, each opening its questions and scoring every answer."""
    latencies: list[float] = []
    server_times: list[float] = []
    errors: list[str] = []
    acknowledged: dict[tuple[str, int, str], int] = {}
    lock = threading.Lock()
    ready = threading.Barrier(annotators + 1)

    def annotator(index: int) -> None:
        name = f"{prefix}-{index:02d}"
        rng = random.Random(index)
        session = HttpSession(base_url)
        try:
            session.sign_in(name)
            work = session.answers(rng.sample(question_ids, questions_each))
            # Every answer once, then a second thought on a few: changes exercise the history too.
            work += rng.sample(work, len(work) // 4)
        except Exception as exc:  # set-up failures count as errors, they must not hang the barrier
            with lock:
                errors.append(f"{name} set-up: {exc}")
            ready.wait()
            return
        ready.wait()
        for question_id, label in work:
            if think[1]:
                time.sleep(rng.uniform(*think))
            value = rng.randint(1, 5)
            try:
                status, data, elapsed, server_ms, _ = session.save(question_id, label, value)
                ok = status == 200 and json.loads(data).get("saved")
            except Exception as exc:
                status, elapsed, server_ms, ok = repr(exc), 0.0, None, False
            with lock:
                if ok:
                    latencies.append(elapsed)
                    server_times.append(server_ms)
                    acknowledged[(name, question_id, label)] = value
                else:
                    errors.append(f"{name} q{question_id} {label}: {status}")

    threads = [threading.Thread(target=annotator, args=(i,)) for i in range(annotators)]
    for thread in threads:
        thread.start()
    ready.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    return {"latencies": latencies, "server": server_times, "errors": errors, "acknowledged": acknowledged,
            "wall": wall}


def lost_writes(instance: Path, acknowledged: dict[tuple[str, int, str], int]) -> int:
    """Acknowledged saves whose value is not what the database holds."""
    with instance_database(instance) as con:
        stored = {
            (user, question, label): value
            for user, question, label, value in con.execute(
                "SELECT u.username, p.question_id, s.answer_label, s.value FROM scores s "
                "JOIN users u ON u.id = s.annotator_id JOIN answers p ON p.id = s.answer_id "
                "JOIN annotation_rounds r ON r.id = s.round_id WHERE r.status = 'open'"
            )
        }
    return sum(1 for key, value in acknowledged.items() if stored.get(key) != value)


def run(quick: bool = False) -> list[dict]:
    shared = shared_or_exit()
    sizes = QUICK if quick else FULL
    requests, annotator_count = sizes.requests, sizes.annotators
    sys.path.insert(0, str(REPO_ROOT))
    from tests.e2e.conftest import start_server, stop_server

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        instance = Path(folder) / "instance"
        annotators = ["bench-reader"] + [f"{prefix}-{i:02d}" for prefix in ("bench", "stress")
                                         for i in range(annotator_count)]
        prepare_instance(instance, annotators=annotators, demo=False, folders=(shared / "Predictions" / "human_eval",))
        question_id, document_id, chars = largest_document_question(instance)
        server = start_server(instance, {"LEVAL_WORKERS": "0"})
        try:
            reader = HttpSession(server.url)
            reader.sign_in("bench-reader")
            page = reader.page(f"/annotate/{reader.study()}/q/{question_id}")
            document_path = re.search(r'data-document-url="([^"]+)"', page).group(1).replace("&amp;", "&")

            health_client, health_server = timed_gets(reader, "/healthz", requests)
            page_client, page_server = timed_gets(reader, f"/annotate/{reader.study()}/q/{question_id}", requests)
            doc_client, doc_server = timed_gets(reader, document_path, requests)
            base50, base95 = percentile(health_server, 50), percentile(health_server, 95)
            base_name = "/healthz server time, same run"
            for label, server_ms, client_ms in (
                (f"question page ({chars:,}-char document)", page_server, page_client),
                (f"document request ({chars:,} chars)", doc_server, doc_client),
            ):
                rows.append(row(f"{label}: server p50 (ms)", percentile(server_ms, 50), "ms", "-", base50, base_name))
                rows.append(row(f"{label}: server p95 (ms)", percentile(server_ms, 95), "ms", "<= 25 ms", base95, base_name))
                rows.append(row(f"{label}: client p95 (ms)", percentile(client_ms, 95), "ms", "-",
                                percentile(health_client, 95), "/healthz client round trip"))

            questions = human_eval_questions(reader)
            paced = concurrent_saves(server.url, questions, "bench", annotator_count, sizes.questions_each,
                                     sizes.think)
            stress = concurrent_saves(server.url, questions, "stress", annotator_count, sizes.stress_questions, (0, 0))
            for label, result, target in (("saving", paced, "<= 100 ms"), ("saving, no pause", stress, "-")):
                saves = result["latencies"]
                lost = lost_writes(instance, result["acknowledged"])
                print(f"  {label}: {len(saves)} acknowledged in {result['wall']:.1f} s by {annotator_count} annotators "
                      f"({len(saves) / result['wall']:.0f}/s), p50 {percentile(saves, 50):.1f} ms, "
                      f"max {max(saves):.1f} ms")
                for error in result["errors"][:5]:
                    print(f"  error: {error}")
                name = f"{annotator_count} annotators {label}"
                rows.append(row(f"{name}: p99 (ms)", percentile(saves, 99), "ms", target,
                                percentile(health_client, 99), "/healthz client p99, one client"))
                rows.append(row(f"{name}: server p99 (ms)", percentile(result["server"], 99), "ms", "-",
                                percentile(health_server, 99), "/healthz server p99"))
                rows.append(row(f"{name}: errors", len(result["errors"]), "", "0", None))
                rows.append(row(f"{name}: lost writes", lost, "", "0", None))
            print(f"  page sizes: question page {len(page.encode()):,} bytes; "
                  f"median server times: healthz {statistics.median(health_server):.2f} ms")
        finally:
            stop_server(server)
    return rows


if __name__ == "__main__":
    print_table(run(quick="--quick" in sys.argv[1:]))
