"""Time the results pages on L-Eval's human-eval subset with 3 annotators × 595 scores.

Run: python tests/benchmarks/bench_results.py
Builds a fresh database from ../shared/leval (85 questions × 7 systems), adds
3 × 595 seeded scores and per-answer metric values for both profiles, flags
three systems as length-instructed, then requests each results page 50 times
through the Flask test client as a signed-in researcher. Server time is the
wall time of the request inside the process (routing, queries, analysis,
charts, templates). "Cold" requests empty the analysis cache first, so they
recompute everything; "warm" requests reuse analyses of unchanged data and
only re-read the data fingerprint and render. Baselines from the same run:
/healthz (the cheapest signed-out request) and the bare analysis call on the
same score records. Target: p95 ≤ 100 ms per page. `run(quick=True)`: 5 requests
per page and one per export.
"""
from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.benchmarks.common import percentile, print_table, row, shared_or_exit  # noqa: E402
from tests.support.live import CSRF_RE  # noqa: E402

REQUESTS = 50
QUICK_REQUESTS = 5
TARGET_MS = 100.0
PAGES = ("/results", "/results/correlation", "/results/agreement", "/results/disagreements")


def _timed(action, repeat: int) -> list[float]:
    timings = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        timings.append((time.perf_counter() - start) * 1000)
    return timings


def _build(instance: Path, human_eval: Path):
    from flask_migrate import upgrade
    from sqlalchemy import update

    from app import create_app
    from app.extensions import db
    from app.models import System
    from app.services.accounts import create_user
    from app.services.importers import import_path
    from app.services.studies.setup import StudySpec, create_study
    from tests.support.scoring_data import generate_metric_results, generate_scores

    app = create_app({"INSTANCE_PATH": instance, "TESTING": True})
    with app.app_context():
        upgrade()
        create_user("bench", "bench-pass-123", "researcher")
        assert not import_path(human_eval).failed
        create_study(StudySpec(name="L-Eval human evaluation", status="open"))
        added = generate_scores(["ann1", "ann2", "ann3"], seed=7)
        assert added == 3 * 595, added
        generate_metric_results(seed=8)
        db.session.execute(update(System).where(System.name.in_(
            ["gpt4-32k", "claude-100k", "turbo-16k-0613"])).values(length_instruction=True))
        db.session.commit()
    return app


def run(quick: bool = False) -> list[dict]:
    """Measure every results page; rows of p50/p95 server time against /healthz and the bare analysis."""
    requests = QUICK_REQUESTS if quick else REQUESTS
    human_eval = shared_or_exit() / "Predictions" / "human_eval"
    from app.core.stats import build_results
    from app.services import cache as analysis_cache
    from app.services.results import load_current_scores
    from app.services.studies.lookup import require_study

    with tempfile.TemporaryDirectory() as folder:
        app = _build(Path(folder) / "instance", human_eval)
        client = app.test_client()
        healthz = _timed(lambda: client.get("/healthz"), requests)
        token = CSRF_RE.search(client.get("/login").get_data(as_text=True)).group(1)
        client.post("/login", data={"username": "bench", "password": "bench-pass-123", "csrf_token": token})
        with app.app_context():
            records = load_current_scores(require_study(None).id).records
            assert len(records) == 3 * 595
            build_results(records)  # warm-up
            bare = _timed(lambda: build_results(records), requests)
        healthz_p50, bare_p50 = statistics.median(healthz), statistics.median(bare)
        rows = [
            row("GET /healthz p50 (baseline)", healthz_p50, "ms", "-", None),
            row("bare build_results() on 1785 records p50 (baseline)", bare_p50, "ms", "-", None),
        ]
        for page in PAGES:
            # Cold: the analysis cache is emptied before every request, so each one recomputes everything.
            cold = _timed(lambda: (analysis_cache.clear(), _ok(client.get(page))), requests)
            warm = _timed(lambda: _ok(client.get(page)), requests)
            for label, timings in (("cold", cold), ("warm", warm)):
                rows.append(row(f"GET {page} {label} p50 ({requests} requests)", statistics.median(timings), "ms",
                                f"<= {TARGET_MS:.0f} ms", bare_p50, "bare analysis p50"))
                rows.append(row(f"GET {page} {label} p95 ({requests} requests)", percentile(timings, 95), "ms",
                                f"<= {TARGET_MS:.0f} ms", bare_p50, "bare analysis p50"))
        exports = dict.fromkeys(("/results/export/results.json", "/results/export/scores.jsonl"), 1 if quick else 5)
        for url, repeat in exports.items():
            timings = _timed(lambda: (analysis_cache.clear(), _ok(client.get(url))), repeat)
            rows.append(row(f"GET {url} p50 ({repeat} requests)", statistics.median(timings), "ms", "-", bare_p50,
                            "bare analysis p50"))
        with app.app_context():
            from app.extensions import db

            db.session.remove()
            db.engine.dispose()
    return rows


def _ok(response):
    assert response.status_code == 200, response.status_code
    return response


def main() -> None:
    rows = run(quick="--quick" in sys.argv[1:])
    print("Results pages, 3 annotators x 595 scores on L-Eval's human-eval subset (7 systems x 85 questions)")
    print_table(rows)
    print("ratio = baseline / value (above 1: faster than the baseline)")
    for label in ("cold", "warm"):
        worst = max(r["value"] for r in rows if f"{label} p95" in r["name"])
        verdict = "OK" if worst <= TARGET_MS else "OVER"
        print(f"worst {label} page p95: {worst:.1f} ms (target <= {TARGET_MS:.0f} ms): {verdict}")


if __name__ == "__main__":
    main()
