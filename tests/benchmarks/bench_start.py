"""Benchmark starting up: whole `python run.py …` processes against the framework's own import floor.

Run: python tests/benchmarks/bench_start.py [--repeats 5]

Each command runs as a separate process, REPEATS times, interleaved with the others so that a busy
machine slows them alike; the figure is the median wall time. Each process's CPU time (user + system,
from the kernel's accounting of the finished child) is reported too: on a machine busy with other
work, wall times swing with the scheduler, while CPU time stays close to what the command itself costs. The baseline, measured in the same
run the same way, is the floor every Flask-SQLAlchemy-Migrate app pays before its own code:
`python -c "import flask, flask_sqlalchemy, flask_migrate"`.

- `python run.py summary` and `python run.py --help` (target: summary <= 1.5x the floor);
- `python run.py serve --port <free>` until /healthz answers 200 (then stopped). All commands use
  one instance folder (LEVAL_INSTANCE) prepared once beforehand by a first `serve`, so the
  first-run migration, demo load and admin account are not in the figures;
- `python run.py eval` on L-Eval's 57 published exam and n-gram files (target: <= 2.5x the floor).
  It is compared as well with scoring the same files one process per file, as L-Eval's
  `auto_eval.py --pred_file` is run. auto_eval.py itself cannot be set up from PyPI here (it
  needs `datasets.Metric`, gone since datasets 3, and NLTK data downloaded at run time), so that
  baseline runs tests/support/leval_reference.py (our restatement of its algorithms, on rouge-score) once
  per file, one pass.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from common import REPO_ROOT, free_port, print_table, row, shared_or_exit, stop_process

REPEATS = 5
SUMMARY_TARGET = 1.5   # × the floor
EVAL_TARGET = 2.5      # × the floor
FLOOR = "import flask, flask_sqlalchemy, flask_migrate"
QUICK_REFERENCE_FILES = 3
SERVE_TIMEOUT_S = 60.0
# One file scored the way auto_eval.py scores it: a fresh interpreter, the reference module, one file.
REFERENCE_ONE_FILE = (
    "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); import leval_reference as r; "
    "print(r.evaluate_pred_file(Path(sys.argv[2]), sys.argv[3]))"
)


def _env(instance: Path) -> dict:
    env = dict(os.environ)
    env.update({"LEVAL_INSTANCE": str(instance), "PYTHONUNBUFFERED": "1"})
    return env


def _cpu_seconds_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed_process(args: list[str], env: dict, cpu: list[float] | None = None) -> float:
    """Run one process to its end; its wall time (and, into `cpu`, its CPU seconds)."""
    cpu_before = _cpu_seconds_of_children()
    started = time.perf_counter()
    done = subprocess.run(args, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args[1:])} exited with {done.returncode}:\n{done.stderr[-2000:]}")
    if cpu is not None:
        cpu.append(_cpu_seconds_of_children() - cpu_before)
    return elapsed


def _time_to_healthz(env: dict) -> float:
    """Start `run.py serve` on a free port; return the seconds until /healthz answers 200, then stop it."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/healthz"
    started = time.perf_counter()
    server = subprocess.Popen([sys.executable, "run.py", "serve", "--port", str(port)], cwd=REPO_ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        while True:
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    if response.status == 200:
                        return time.perf_counter() - started
            except OSError:
                if server.poll() is not None:
                    raise RuntimeError(f"serve exited with {server.returncode}:\n{server.stderr.read()[-2000:]}")
                if time.perf_counter() - started > SERVE_TIMEOUT_S:
                    raise RuntimeError(f"serve did not answer /healthz within {SERVE_TIMEOUT_S:.0f} s")
                time.sleep(0.01)
    finally:
        stop_process(server)


def _published(shared: Path) -> list[Path]:
    predictions = shared / "Predictions"
    return sorted(predictions.glob("exam_eval/*/*.pred.jsonl")) + sorted(predictions.glob("ngram_eval/*/*.pred.jsonl"))


def _reference_per_file(shared: Path, files: list[Path], env: dict) -> float:
    """Score each file in its own process with the reference scorer; the total wall time."""
    tests_dir = str(REPO_ROOT / "tests" / "support")
    return sum(_timed_process([sys.executable, "-c", REFERENCE_ONE_FILE, tests_dir, str(path),
                               str(path.relative_to(shared))], env) for path in files)


def run(quick: bool = False, repeats: int | None = None) -> list[dict]:
    """Time each command as whole processes; rows against the import floor (and the per-file reference)."""
    shared = shared_or_exit()
    repeats = repeats or (1 if quick else REPEATS)
    files = _published(shared)
    folders = [str(shared / "Predictions" / "exam_eval"), str(shared / "Predictions" / "ngram_eval")]
    python = sys.executable
    with tempfile.TemporaryDirectory() as folder:
        env = _env(Path(folder) / "instance")
        _time_to_healthz(env)  # prepares the instance: migration, demo load, admin; not measured
        listed = subprocess.run([python, "run.py", "eval", "--json", *folders], cwd=REPO_ROOT, env=env,
                                capture_output=True, text=True, check=True).stdout
        scored = len(json.loads(listed))
        if scored != len(files):
            raise RuntimeError(f"eval scored {scored} files; the folders hold {len(files)}")
        cpu: dict[str, list[float]] = {"floor": [], "summary": [], "eval": []}
        commands = {
            "floor": lambda: _timed_process([python, "-c", FLOOR], env, cpu["floor"]),
            "summary": lambda: _timed_process([python, "run.py", "summary"], env, cpu["summary"]),
            "help": lambda: _timed_process([python, "run.py", "--help"], env),
            "serve": lambda: _time_to_healthz(env),
            "eval": lambda: _timed_process([python, "run.py", "eval", *folders], env, cpu["eval"]),
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(repeats):
            for name, command in commands.items():
                times[name].append(command())
        sample = files[:: max(1, len(files) // QUICK_REFERENCE_FILES)][:QUICK_REFERENCE_FILES] if quick else files
        reference_s = _reference_per_file(shared, sample, env)
        if quick:
            sample_eval_s = _timed_process([python, "run.py", "eval", *map(str, sample)], env)
        else:
            sample_eval_s = statistics.median(times["eval"])
    median = {name: statistics.median(values) for name, values in times.items()}
    median_cpu = {name: statistics.median(values) for name, values in cpu.items()}
    floor = median["floor"]
    floor_name = f'python -c "{FLOOR}", median of {repeats}'
    of = f"median of {repeats}"
    rows = [
        row(f"python run.py summary ({of})", median["summary"], "s",
            f"<= {SUMMARY_TARGET:g}x floor ({SUMMARY_TARGET * floor:.2f} s)", floor, floor_name),
        row(f"python run.py --help ({of})", median["help"], "s", "-", floor, floor_name),
        row(f"python run.py serve until /healthz answers (prepared instance, {of})", median["serve"], "s", "-",
            floor, floor_name),
        row(f"python run.py eval, {len(files)} exam+ngram files ({of})", median["eval"], "s",
            f"<= {EVAL_TARGET:g}x floor ({EVAL_TARGET * floor:.2f} s)", floor, floor_name),
        row(f"python run.py summary, CPU seconds ({of})", median_cpu["summary"], "s",
            f"<= {SUMMARY_TARGET:g}x floor", median_cpu["floor"], f"{floor_name}, CPU seconds"),
        row(f"python run.py eval, {len(files)} files, CPU seconds ({of})", median_cpu["eval"], "s",
            f"<= {EVAL_TARGET:g}x floor", median_cpu["floor"], f"{floor_name}, CPU seconds"),
        row(f"python run.py eval, {len(sample)} files in one process", sample_eval_s, "s", "-", reference_s,
            f"tests/support/leval_reference.py, one process per file (as auto_eval.py runs), {len(sample)} processes, "
            "one pass"),
    ]
    for name, limit in (("summary", SUMMARY_TARGET), ("eval", EVAL_TARGET)):
        factor = median[name] / floor
        cpu_factor = median_cpu[name] / median_cpu["floor"]
        print(f"  {name}: {median[name]:.2f} s = {factor:.2f}x the floor ({floor:.2f} s); target <= {limit:g}x: "
              f"{'met' if factor <= limit else 'NOT met'} (CPU time: {cpu_factor:.2f}x)")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=REPEATS, help="runs of each command (median reported)")
    parser.add_argument("--quick", action="store_true", help="one run each, 3 files for the per-file comparison")
    args = parser.parse_args()
    print_table(run(quick=args.quick, repeats=args.repeats if not args.quick else None))


if __name__ == "__main__":
    main()
