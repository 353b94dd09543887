"""Every page and API read at lab scale (S1, S2, S3: see scale_build.py): server CPU cold, warm and first after a save.

Run: python tests/benchmarks/bench_scale.py [--quick] [--scales S1,S2,S3] [--database-url URL] [--reuse DIR] [--json]

Each instance is served by `python run.py serve --no-demo --workers 0` (one process, no job beside it).
A request's cost is the **server's CPU time** for it (the sum of its threads' run time from
/proc/<pid>/task/*/schedstat, read before and after), divided by the CPU of one `/healthz` of the
same server in the same run (the mean over HEALTHZ_REQUESTS): the ratio carries over between runs on
a busy machine, the seconds are what a request costs an idle core.

- **cold:** the page's first request after `serve` starts (a fresh server per page; `--quick`: the
  pages in turn in one fresh server, so later pages find imports and templates loaded);
- **warm:** the mean of WARM_REQUESTS requests after that (and their median wall time: on PostgreSQL
  the queries run in the database's processes, outside the app's CPU);
- **after a save:** an annotator of the study saves a changed score, then the page is asked once
  (the median of AFTER_SAVES); also after a sign-in elsewhere and after an API token's first use in
  a minute (bookkeeping writes, which should leave analyses warm).

Also: the server's resident memory after visiting every page, the peak memory of the commands
that import the synthetic systems and LV-Eval, and each page's **growth exponent**: the slope of
log(CPU ÷ /healthz CPU, warm) against log(size) over the scales, the size being the study's scores
for a study's pages and the stored predictions for the others.
With --database-url (PostgreSQL's server URL, e.g. postgresql+psycopg://user@host:port/postgres)
each instance is built in a database of its own that the benchmark creates and drops.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from common import REPO_ROOT, free_port, print_table, row, shared_or_exit, stop_process  # noqa: E402
from scale_build import RESEARCHER, RESEARCHER_PASSWORD, SCALES, Built, annotator_names, build  # noqa: E402

from tests.support.live import HttpSession  # noqa: E402
from tests.support.scoring_data import ANNOTATOR_PASSWORD  # noqa: E402

HEALTHZ_REQUESTS = 200
WARM_REQUESTS = 3
AFTER_SAVES = 2
WARM_TARGET_S, AFTER_TARGET_S, EXPONENT_TARGET, MEMORY_TARGET_MB, IMPORT_TARGET_MB = 0.25, 1.0, 1.0, 400, 200
SERVE_TIMEOUT_S = 300.0
# (label, path, who asks: admin | annotator | api, size: study | corpus)
PAGES = (
    ("home", "/", "admin", "corpus"),
    ("studies", "/studies", "admin", "study"),
    ("study page", "/studies/{study}", "admin", "study"),
    ("results: human scores", "/results?study={study}", "admin", "study"),
    ("results: correlation", "/results/correlation?study={study}", "admin", "study"),
    ("results: agreement", "/results/agreement?study={study}", "admin", "study"),
    ("results: disagreements", "/results/disagreements?study={study}", "admin", "study"),
    ("results: one disagreement", "/results/disagreements/questions/{question}?study={study}", "admin", "study"),
    ("results: length instruction", "/results/length-instruction?study={study}", "admin", "study"),
    ("results: table 2", "/results/table2?study={study}", "admin", "study"),
    ("results: exports", "/results/exports?study={study}", "admin", "study"),
    ("export scores.csv", "/results/export/scores.csv?study={study}", "admin", "study"),
    ("export scores.jsonl", "/results/export/scores.jsonl?study={study}", "admin", "study"),
    ("export results.json", "/results/export/results.json?study={study}", "admin", "study"),
    ("export leval (one annotator)", "/results/export/leval/{annotator}?study={study}", "admin", "study"),
    ("leaderboard", "/leaderboard", "admin", "corpus"),
    ("leaderboard json", "/leaderboard/json", "admin", "corpus"),
    ("leaderboard: a system", "/leaderboard/systems/{system}", "admin", "corpus"),
    ("leaderboard: a system's questions", "/leaderboard/systems/{system}/questions?metric=rougeL&task=*",
     "admin", "corpus"),
    ("LV-Eval", "/lveval", "admin", "corpus"),
    ("predictions", "/predictions", "admin", "corpus"),
    ("predictions: systems json", "/predictions/api/systems", "admin", "corpus"),
    ("jobs", "/jobs", "admin", "corpus"),
    ("jobs json", "/jobs/api", "admin", "corpus"),
    ("judge", "/judge/", "admin", "corpus"),
    ("judge: win rates json", "/judge/win-rates.json", "admin", "corpus"),
    ("rater", "/judge/rater", "admin", "corpus"),
    ("generate", "/generate/", "admin", "corpus"),
    ("author", "/author/", "admin", "corpus"),
    ("account", "/account/", "admin", "corpus"),
    ("admin: users", "/admin/users", "admin", "corpus"),
    ("annotate: study (redirects to the next question)", "/annotate/{study}/", "annotator", "study"),
    ("annotate: question", "/annotate/{study}/q/{question}", "annotator", "study"),
    ("annotate: done", "/annotate/{study}/done", "annotator", "study"),
    ("API studies", "/api/v1/studies", "api", "study"),
    ("API study", "/api/v1/studies/{study}", "api", "study"),
    ("API results", "/api/v1/results/{study}", "api", "study"),
    ("API scores (first page)", "/api/v1/results/{study}/scores", "api", "study"),
    ("API export csv", "/api/v1/studies/{study}/export?format=csv", "api", "study"),
    ("API leaderboard", "/api/v1/leaderboard", "api", "corpus"),
    ("API systems", "/api/v1/systems", "api", "corpus"),
)


def cpu_seconds(pid: int) -> float:
    """The process's CPU time so far: its threads' run time in ns (schedstat), summed."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):
            continue  # a thread that ended between listing and reading
    return total / 1e9


def memory_mb(pid: int) -> dict[str, float]:
    """VmRSS (now) and VmHWM (peak) of a process, in MB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) / 1024
    return found


class Server:
    """`python run.py serve` on an instance, with an admin's, an annotator's and an API token's clients."""

    def __init__(self, built: Built):
        self.built = built
        self.port = free_port()
        # Sessions wait idle while other clients' pages are measured: keep their connections open meanwhile.
        env = {**built.env(), "LEVAL_CONNECTION_IDLE_SECONDS": "3600"}
        self.process = subprocess.Popen(
            [sys.executable, "run.py", "serve", "--no-demo", "--workers", "0", "--port", str(self.port)],
            cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        started = time.perf_counter()
        while True:
            try:
                if self.client().request("GET", "/healthz")[0] == 200:
                    break
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError(f"serve exited with {self.process.returncode}:\n"
                                       f"{self.process.stderr.read()[-2000:]}") from None
                if time.perf_counter() - started > SERVE_TIMEOUT_S:
                    raise RuntimeError("serve did not answer /healthz in time") from None
                time.sleep(0.05)
        self.admin = self.client()
        self.admin.sign_in(RESEARCHER, RESEARCHER_PASSWORD)
        self.annotator = self.client()
        self.annotator.sign_in(annotator_names(built.scale)[0], ANNOTATOR_PASSWORD)
        self.api = self.client()
        self._value = 1

    def client(self) -> HttpSession:
        return HttpSession(f"http://127.0.0.1:{self.port}", timeout=600)

    def get(self, who: str, path: str) -> int:
        session = getattr(self, who)
        headers = {"Authorization": f"Bearer {self.built.token}"} if who == "api" else None
        status, _, elapsed_ms, *_ = session.request("GET", path, headers=headers)
        self.last_wall_s = elapsed_ms / 1000
        return status

    def cpu_of(self, action) -> float:
        before = cpu_seconds(self.process.pid)
        action()
        return cpu_seconds(self.process.pid) - before

    def healthz_cpu(self, requests: int = HEALTHZ_REQUESTS) -> float:
        session = self.client()
        spent = self.cpu_of(lambda: [session.request("GET", "/healthz") for _ in range(requests)])
        session.close()
        return spent / requests

    def save(self) -> None:
        """The annotator changes their score of one answer (a real save through the question page's endpoint)."""
        if not self.annotator.shown:
            self.annotator.answers([self.built.ids["question"]])
        (question, label), _ = next(iter(self.annotator.shown.items()))
        self._value = self._value % 5 + 1
        status = self.annotator.save(question, label, self._value)[0]
        if status != 200:
            raise RuntimeError(f"save answered {status}")

    def stop(self) -> None:
        for session in (self.admin, self.annotator, self.api):
            session.close()
        stop_process(self.process)


def _path(template: str, built: Built) -> str:
    return template.format(**built.ids)


def _checked(server: Server, who: str, path: str) -> None:
    status = server.get(who, path)
    if status != 200 and not (status == 302 and path.startswith("/annotate/") and path.endswith("/")):
        raise RuntimeError(f"GET {path} as {who}: {status}")


def measure(built: Built, quick: bool) -> dict:
    """Every page's server CPU cold, warm and after a save, and the server's memory, on one built instance."""
    result: dict = {"scale": built.scale.name, "counts": built.counts, "steps": built.steps, "pages": {}}
    cold: dict[str, float] = {}
    if quick:  # one fresh server, the pages in turn
        server = Server(built)
        try:
            for label, template, who, _ in PAGES:
                cold[label] = server.cpu_of(lambda: _checked(server, who, _path(template, built)))
        finally:
            server.stop()
    else:
        for label, template, who, _ in PAGES:
            server = Server(built)
            try:
                cold[label] = server.cpu_of(lambda: _checked(server, who, _path(template, built)))
            finally:
                server.stop()
    server = Server(built)
    try:
        healthz = [server.healthz_cpu()]
        for label, template, who, kind in PAGES:
            path = _path(template, built)
            _checked(server, who, path)
            walls = []
            warm = server.cpu_of(lambda: [(_checked(server, who, path), walls.append(server.last_wall_s))
                                          for _ in range(WARM_REQUESTS)]) / WARM_REQUESTS
            after = []
            for _ in range(AFTER_SAVES):
                server.save()
                after.append(server.cpu_of(lambda: _checked(server, who, path)))
            # Wall time too: on PostgreSQL the queries' work is the database server's, not in the app's CPU.
            result["pages"][label] = {"path": template, "size": kind, "cold_s": cold[label], "warm_s": warm,
                                      "after_save_s": statistics.median(after), "warm_wall_s": statistics.median(walls)}
        saves = [server.cpu_of(server.save) for _ in range(10)]
        result["save_s"] = statistics.median(saves)
        result.update(_bookkeeping(server, built))
        healthz.append(server.healthz_cpu())
        result["memory_mb"] = memory_mb(server.process.pid)
    finally:
        server.stop()
    result["healthz_s"] = statistics.mean(healthz)
    return result


def _bookkeeping(server: Server, built: Built) -> dict:
    """A results page right after bookkeeping writes: another sign-in, an API token's first use in a minute."""
    from tests.support.live import InstanceDatabase

    page = _path("/results/agreement?study={study}", built)
    _checked(server, "admin", page)
    other = server.client()
    other.sign_in(RESEARCHER, RESEARCHER_PASSWORD)  # writes the account's last sign-in time
    other.close()
    after_sign_in = server.cpu_of(lambda: _checked(server, "admin", page))
    _checked(server, "admin", page)
    with InstanceDatabase(built.database_url or f"sqlite:///{built.instance / 'leval.db'}") as database:
        database.execute("UPDATE api_tokens SET last_used_at = NULL")  # as if idle for a minute (no app write)
    _checked(server, "api", "/api/v1/systems")  # the token's use is written
    after_token = server.cpu_of(lambda: _checked(server, "admin", page))
    return {"after_sign_in_s": after_sign_in, "after_token_use_s": after_token}


def growth_exponents(results: list[dict]) -> dict[str, float]:
    """Least-squares slope of log(warm CPU ÷ healthz CPU) on log(size) over the scales measured."""
    exponents = {}
    if len(results) < 2:
        return exponents
    for label, _, _, kind in PAGES:
        xs, ys = [], []
        for result in results:
            size = result["counts"]["scores" if kind == "study" else "predictions"]
            xs.append(math.log(size))
            ys.append(math.log(max(result["pages"][label]["warm_s"], 1e-6) / result["healthz_s"]))
        mean_x, mean_y = statistics.mean(xs), statistics.mean(ys)
        spread = sum((x - mean_x) ** 2 for x in xs)
        exponents[label] = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / spread if spread else 0.0
    return exponents


def _rows(results: list[dict], exponents: dict[str, float], database: str) -> list[dict]:
    rows = []
    for result in results:
        scale, healthz = result["scale"], result["healthz_s"]
        prefix = f"scale {scale} ({database})"
        rows.append(row(f"{prefix}: /healthz server CPU", healthz * 1000, "ms", "-", None))
        for label, page in result["pages"].items():
            for key, name, target in (("cold_s", "cold", None), ("warm_s", "warm", WARM_TARGET_S),
                                      ("after_save_s", "first after a save", AFTER_TARGET_S)):
                rows.append(row(f"{prefix}: {label} {name} server CPU", page[key] * 1000, "ms",
                                f"<= {target * 1000:.0f} ms" if target and scale == "S3" else "-", healthz * 1000,
                                "/healthz server CPU, same server"))
            if page.get("warm_wall_s") is not None:
                rows.append(row(f"{prefix}: {label} warm wall time (median)", page["warm_wall_s"] * 1000, "ms", "-",
                                None))
        rows.append(row(f"{prefix}: save a score server CPU", result["save_s"] * 1000, "ms", "-", healthz * 1000,
                        "/healthz server CPU, same server"))
        for key, name in (("after_sign_in_s", "another sign-in"), ("after_token_use_s", "an API token's first use")):
            rows.append(row(f"{prefix}: Agreement first after {name} server CPU", result[key] * 1000, "ms", "-",
                            result["pages"]["results: agreement"]["warm_s"] * 1000, "the same page warm"))
        rows.append(row(f"{prefix}: server memory after every page (VmRSS)", result["memory_mb"]["VmRSS"], "MB",
                        f"<= {MEMORY_TARGET_MB} MB" if scale == "S3" else "-", None))
        for step, (seconds, peak) in result["steps"].items():
            if peak is not None:
                rows.append(row(f"{prefix}: {step} peak memory", peak, "MB",
                                f"<= {IMPORT_TARGET_MB} MB" if scale == "S3" else "-", None))
                rows.append(row(f"{prefix}: {step} wall time", seconds, "s", "-", None))
    for label, exponent in exponents.items():
        rows.append(row(f"growth exponent ({database}): {label}", exponent, "", f"<= {EXPONENT_TARGET}", None))
    return rows


def _postgres_database(server_url: str, name: str, drop: bool = False) -> str:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    engine = create_engine(server_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        if not drop:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
    engine.dispose()
    return make_url(server_url).set(database=name).render_as_string(hide_password=False)


def run_scales(names: list[str], quick: bool, database_url: str | None = None, reuse: Path | None = None,
               progress=print) -> tuple[list[dict], dict[str, float]]:
    shared_or_exit()
    results = []
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        for name in names:
            scale = SCALES[name]
            url = None
            if database_url:
                url = _postgres_database(database_url, f"leval_scale_{name.lower()}")
            instance = (reuse or work) / f"instance-{name}"
            manifest = instance / "scale.json"
            if reuse and manifest.is_file() and not database_url:
                built = Built(**{**json.loads(manifest.read_text()), "scale": scale, "instance": instance})
                progress(f"{name}: reusing {instance}")
            else:
                started = time.perf_counter()
                built = build(scale, instance, work, url)
                progress(f"{name}: built in {time.perf_counter() - started:.0f} s: {built.counts}")
                if reuse and not database_url:
                    manifest.write_text(json.dumps({k: v for k, v in vars(built).items()
                                                    if k not in ("scale", "instance")}))
            started = time.perf_counter()
            try:
                results.append(measure(built, quick))
            finally:
                if url and database_url:
                    _postgres_database(database_url, f"leval_scale_{name.lower()}", drop=True)
            progress(f"{name}: measured in {time.perf_counter() - started:.0f} s")
            if reuse:  # each scale's figures survive a later scale's failure
                (reuse / f"result-{name}-{'postgresql' if database_url else 'sqlite'}.json").write_text(
                    json.dumps(results[-1], indent=1))
    return results, growth_exponents(results)


def run(quick: bool = False) -> list[dict]:
    """run_all's entry: S1 and S2 quick (one server for the cold pass), or S1, S2 and S3 in full, on SQLite."""
    results, exponents = run_scales(["S1", "S2"] if quick else ["S1", "S2", "S3"], quick)
    return _rows(results, exponents, "SQLite")


def print_summary(results: list[dict], exponents: dict[str, float]) -> None:
    """One line per page: CPU ms (× /healthz) cold / warm / after a save at each scale, and the exponent."""
    width = max(len(label) for label, *_ in PAGES)
    print(f"{'page':{width}}" + "".join(f" | {r['scale'] + ': cold / warm / after a save, ms (x healthz)':^46}"
                                        for r in results) + " | exponent")
    for label, *_ in PAGES:
        cells = []
        for result in results:
            page, healthz = result["pages"][label], result["healthz_s"]
            cells.append(" / ".join(f"{page[k] * 1000:.0f} ({page[k] / healthz:.0f}x)"
                                    for k in ("cold_s", "warm_s", "after_save_s")))
        exponent = exponents.get(label)
        print(f"{label:{width}}" + "".join(f" | {cell:>46}" for cell in cells)
              + (f" | {exponent:.2f}" if exponent is not None else ""))
    for result in results:
        print(f"{result['scale']}: {result['counts']}; /healthz {result['healthz_s'] * 1e6:.0f} µs CPU; "
              f"save {result['save_s'] * 1000:.1f} ms; Agreement after a sign-in {result['after_sign_in_s'] * 1000:.0f} ms,"
              f" after a token's first use {result['after_token_use_s'] * 1000:.0f} ms; memory {result['memory_mb']}; "
              f"steps {json.dumps(result['steps'])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="S1 and S2, one server for the cold pass")
    parser.add_argument("--scales", default="", help="comma-separated subset of S1,S2,S3")
    parser.add_argument("--database-url", default="", help="a PostgreSQL server URL: build and measure there")
    parser.add_argument("--reuse", type=Path, help="keep SQLite instances in this folder and reuse them")
    parser.add_argument("--json", action="store_true", help="print every figure as one JSON object at the end")
    args = parser.parse_args()
    names = args.scales.split(",") if args.scales else (["S1", "S2"] if args.quick else ["S1", "S2", "S3"])
    database = "PostgreSQL" if args.database_url else "SQLite"
    results, exponents = run_scales(names, args.quick, args.database_url or None, args.reuse,
                                    progress=lambda text: print(text, file=sys.stderr, flush=True))
    print(f"Lab scale on {database}: server CPU per request (÷ /healthz CPU of the same server)")
    print_summary(results, exponents)
    print_table(_rows(results, exponents, database))
    if args.json:
        print(json.dumps({"database": database, "scales": results, "growth_exponents": exponents}))


if __name__ == "__main__":
    main()
