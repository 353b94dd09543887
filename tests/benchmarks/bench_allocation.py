"""Who reads what: fixed studies by document (k = 3, k = 2) against the adaptive, reliability-aware study.

Run: python tests/benchmarks/bench_allocation.py [--seeds N] [--cases main,p1] [--workers W]
     [--service-seeds M] [--json]

Every seed of every case is a world of allocation_sim.py (7 systems, 85 questions on 12 documents, the
annotators of the case, common random numbers across the designs). The pure policy runs all the seeds;
`--service-seeds` seeds (20 by default, spread over the cases) also go through the real services (an
instance of their own, the annotators asking annotation.pages.next_question, opening each question page
and saving every answer with the save endpoint's own function), and the benchmark checks that both give the
same documents, answers and ranking on them.

The adaptive study is given a reading budget of 70% of fixed k = 3's documents in every case; it may stop
sooner (its ranking settled, or every document as precise as a fixed k = 3 study of the same pool would
make it). Costs are taken at its stop: documents = (annotator, document) readings, calibration included;
answers = answers given. Accuracy: the exact ranking, and Kendall's tau against the true one.

Criteria, fixed before the run (MARGINS): one-sided 95% upper bounds (mean + 1.645 se) of the paired deficits
against fixed k = 3 on the same seeds. A main-type case (main, hard, easy) passes when mean documents and
mean answers are at most 70% of fixed k = 3's, the tau deficit bound is under 0.020, the P(exact) deficit
bound under 0.060 and the tau deficit bound against fixed k = 2 by document under 0.005. A pool (p1, p2, p3)
passes when both costs are at most 60% of fixed k = 3's, the tau deficit bound is under 0.005 and the
P(exact) deficit bound under 0.020.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import allocation_sim as sim  # noqa: E402

SEEDS = 5000
Z95 = 1.645
MAIN_TYPE, POOLS = ("main", "hard", "easy"), ("p1", "p2", "p3")
MARGINS = {
    "main": {"documents_share": 0.70, "answers_share": 0.70, "tau_deficit_k3": 0.020, "exact_deficit_k3": 0.060,
             "tau_deficit_k2": 0.005},
    "pool": {"documents_share": 0.60, "answers_share": 0.60, "tau_deficit_k3": 0.005, "exact_deficit_k3": 0.020},
}
SERVICE_SEEDS = {"main": 4, "p1": 4, "p2": 4, "p3": 4, "hard": 2, "easy": 2}


def run_seed(case: str, seed: int) -> dict:
    """Every design on one world: {design: {documents, answers, exact, tau}}."""
    world = sim.make_world(case, seed)
    k3 = sim.fixed_design(world, 3, random.Random(f"fixed:{case}:{seed}"))
    k2 = sim.fixed_design(world, 2, random.Random(f"fixed:{case}:{seed}"))
    adaptive = sim.adaptive_design(world, sim.policy.Design(readings=sim.reading_budget(len(world.documents))))
    return {"k3": k3.scored(world), "k2": k2.scored(world), "adaptive": adaptive.scored(world)}


def _run_chunk(args: tuple[str, list[int]]) -> list[dict]:
    case, seeds = args
    return [run_seed(case, seed) for seed in seeds]


def _stats(values: list[float]) -> dict:
    n = len(values)
    mean = statistics.fmean(values)
    se = statistics.stdev(values) / math.sqrt(n) if n > 1 else 0.0
    ordered = sorted(values)
    return {"mean": mean, "se": se, "p90": ordered[min(n - 1, math.ceil(0.9 * n) - 1)]}


def _bound(deficits: list[float]) -> tuple[float, float]:
    s = _stats(deficits)
    return s["mean"], s["mean"] + Z95 * s["se"]


def summarise(case: str, results: list[dict]) -> dict:
    designs = {}
    for design in ("k3", "k2", "adaptive"):
        rows = [r[design] for r in results]
        designs[design] = {key: _stats([float(row[key]) for row in rows]) for key in ("documents", "answers")}
        designs[design]["tau"] = _stats([row["tau"] for row in rows])
        designs[design]["p_exact"] = _stats([float(row["exact"]) for row in rows])
    margins = MARGINS["main" if case in MAIN_TYPE else "pool"]
    criteria = []
    for key in ("documents", "answers"):
        share = designs["adaptive"][key]["mean"] / designs["k3"][key]["mean"]
        upper = (designs["adaptive"][key]["mean"] + Z95 * designs["adaptive"][key]["se"]) / designs["k3"][key]["mean"]
        limit = margins[f"{key}_share"]
        criteria.append({"name": f"mean {key} / fixed k=3's", "value": share, "upper_bound": upper,
                         "margin": limit - share, "pass": share <= limit})
    paired = {
        "tau_deficit_k3": [r["k3"]["tau"] - r["adaptive"]["tau"] for r in results],
        "exact_deficit_k3": [float(r["k3"]["exact"]) - float(r["adaptive"]["exact"]) for r in results],
        "tau_deficit_k2": [r["k2"]["tau"] - r["adaptive"]["tau"] for r in results],
    }
    names = {"tau_deficit_k3": "tau deficit against fixed k=3", "exact_deficit_k3": "P(exact) deficit against fixed k=3",
             "tau_deficit_k2": "tau deficit against fixed k=2 by document"}
    for key, values in paired.items():
        if key not in margins:
            continue
        mean, upper = _bound(values)
        criteria.append({"name": names[key], "value": mean, "upper_bound": upper, "margin": margins[key] - upper,
                         "pass": upper < margins[key]})
    return {"pass": all(c["pass"] for c in criteria), "seeds": len(results), "criteria": criteria, "designs": designs}


def simulate(cases: list[str], seeds: int, workers: int) -> dict:
    chunks = [(case, list(range(start, min(seeds, start + 100)))) for case in cases for start in range(0, seeds, 100)]
    results: dict[str, list[dict]] = {case: [] for case in cases}
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            for (case, _), rows in zip(chunks, pool.map(_run_chunk, chunks)):
                results[case].extend(rows)
    else:
        for chunk in chunks:
            results[chunk[0]].extend(_run_chunk(chunk))
    return {case: summarise(case, rows) for case, rows in results.items()}


def print_summary(cases: dict, out=sys.stdout) -> None:
    for case, summary in cases.items():
        print(f"\n== case {case}: {summary['seeds']} seeds: {'PASS' if summary['pass'] else 'FAIL'}", file=out)
        print(f"{'design':12} {'documents':>22} {'answers':>24} {'tau':>14} {'P(exact)':>14}", file=out)
        for design, d in summary["designs"].items():
            print(f"{design:12} {d['documents']['mean']:8.2f} ±{d['documents']['se']:.2f} p90 {d['documents']['p90']:4.0f}"
                  f" {d['answers']['mean']:9.1f} ±{d['answers']['se']:.1f} p90 {d['answers']['p90']:5.0f}"
                  f" {d['tau']['mean']:7.4f} ±{d['tau']['se']:.4f} {d['p_exact']['mean']:7.3f} ±{d['p_exact']['se']:.3f}",
                  file=out)
        for c in summary["criteria"]:
            print(f"   {c['name']:44} value {c['value']:+.4f}  upper bound {c['upper_bound']:+.4f}  "
                  f"margin {c['margin']:+.4f}  {'pass' if c['pass'] else 'FAIL'}", file=out)


def _commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def check_services(per_case: dict[str, int], workers: int = 1) -> dict:
    """Run seeds through the real services and compare with the pure policy on the same worlds."""
    from allocation_services import compare_seed

    jobs = [(case, seed) for case, count in per_case.items() for seed in range(count)]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            outcomes = list(pool.map(compare_seed, *zip(*jobs)))
    else:
        outcomes = [compare_seed(case, seed) for case, seed in jobs]
    return {"seeds": [{"case": case, "seed": seed} for case, seed in jobs], "agree": all(o["agree"] for o in outcomes),
            "mismatches": [o for o in outcomes if not o["agree"]]}


def run(quick: bool = False) -> list[dict]:
    """run_all's rows: each case's adaptive cost against fixed k = 3 and its tau deficit (quick: 20 seeds)."""
    seeds = 20 if quick else 500
    started = time.perf_counter()
    cases = simulate(list(sim.CASES), seeds, workers=1 if quick else min(2, os.cpu_count() or 1))
    services = check_services({"main": 1, "p2": 1} if quick else SERVICE_SEEDS)
    print_summary(cases)
    rows = []
    for case, summary in cases.items():
        k3 = summary["designs"]["k3"]["documents"]["mean"]
        adaptive = summary["designs"]["adaptive"]["documents"]["mean"]
        rows.append({"name": f"allocation {case}: adaptive documents read ({seeds} seeds)", "value": adaptive, "unit": "",
                     "target": None if quick else f"≤ {MARGINS['main' if case in MAIN_TYPE else 'pool']['documents_share']:.0%}"
                     " of fixed k=3", "baseline": k3, "baseline_name": "fixed k=3 by document, same seeds",
                     "ratio": k3 / adaptive})
    rows.append({"name": "allocation: services agree with the pure policy (seeds that differ)",
                 "value": len(services["mismatches"]), "unit": "", "target": "0", "baseline": None,
                 "baseline_name": "", "ratio": None})
    rows.append({"name": f"simulate {seeds} seeds × {len(cases)} cases", "value": time.perf_counter() - started,
                 "unit": "s", "target": None, "baseline": None, "baseline_name": "", "ratio": None})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=SEEDS)
    parser.add_argument("--cases", default=",".join(sim.CASES))
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--service-seeds", type=int, default=sum(SERVICE_SEEDS.values()),
                        help="seeds also run through the real services (spread over the cases as SERVICE_SEEDS)")
    parser.add_argument("--json", action="store_true", help="print one JSON object (the tables go to stderr)")
    args = parser.parse_args()
    started = time.perf_counter()
    cases = simulate(args.cases.split(","), args.seeds, args.workers)
    share = args.service_seeds / max(sum(SERVICE_SEEDS.values()), 1)
    per_case = {case: round(n * share) for case, n in SERVICE_SEEDS.items() if case in cases}
    services = check_services(per_case, min(args.workers, 2))
    print_summary(cases, out=sys.stderr if args.json else sys.stdout)
    print(f"\nservices against the pure policy on {len(services['seeds'])} seeds: "
          f"{'the same documents, answers and ranking' if services['agree'] else 'DIFFERENT'}",
          file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(json.dumps({"seeds": args.seeds, "seed_list": f"0-{args.seeds - 1}", "commit": _commit(),
                          "budget_share": sim.BUDGET_SHARE, "margins": MARGINS, "cases": cases, "services": services,
                          "seconds": round(time.perf_counter() - started, 1)}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
