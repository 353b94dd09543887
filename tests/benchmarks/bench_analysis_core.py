"""Time the full results analysis on 3 annotators × 7 systems × 85 questions against a naive loop.

Run: python tests/benchmarks/bench_analysis_core.py
The baseline is the same analysis with its bootstraps written as plain
Python loops (one krippendorff.alpha call per resample), measured in the
same run; ratio = baseline / value, so above 1 means faster than the loop.
`run(quick=True)` (`--quick`): 50 resamples and 3 repeats; no target then.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import krippendorff  # noqa: E402
import numpy as np  # noqa: E402

from app.core.charts import distribution_chart, grouped_bar_chart, mean_ci_chart, rank_chart, scatter_chart  # noqa: E402
from app.core.stats import (  # noqa: E402
    alpha_by_system,
    build_results,
    reliability_data,
    summarize_systems,
    system_means,
)

N_ANNOTATORS, N_SYSTEMS, N_QUESTIONS = 3, 7, 85
N_RESAMPLES = 1000
QUICK_RESAMPLES = 50
REPEATS = 11
QUICK_REPEATS = 3
TARGET_MS = 100.0


def synthetic_records(seed: int = 0) -> list[dict]:
    """Generate one score per annotator, system and question; better systems score higher."""
    rng = np.random.default_rng(seed)
    return [
        {
            "annotator": f"annotator{a}",
            "system": f"system{s}",
            "document_id": f"doc{q // 7}",
            "question_id": f"q{q % 7}",
            "task": f"task{q % 4}",
            "score": int(np.clip(round(1.5 + 0.5 * s + rng.normal(0, 1)), 1, 5)),
        }
        for a in range(N_ANNOTATORS)
        for s in range(N_SYSTEMS)
        for q in range(N_QUESTIONS)
    ]


def synthetic_metrics(records: list[dict], seed: int = 1) -> dict[str, dict[str, float]]:
    """Make metrics that follow the human means with different amounts of noise."""
    rng = np.random.default_rng(seed)
    means = system_means(records)
    return {
        name: {system: mean + float(rng.normal(0, noise)) for system, mean in means.items()}
        for name, noise in (("F1", 0.6), ("ROUGE-L", 0.3), ("keyword F1", 0.5), ("judge win %", 0.1), ("-|dL|", 1.0))
    }


def render_charts(results: dict) -> list[str]:
    """Render every chart of the results page from the analysis output."""
    systems = results["systems"]
    metrics = [row["metric"] for row in results["correlations"]]
    return [
        mean_ci_chart([(r["system"], r["mean"], r["ci_low"], r["ci_high"]) for r in systems], value_range=(1, 5)),
        distribution_chart([(r["system"], list(r["distribution"].values())) for r in systems]),
        grouped_bar_chart(
            metrics,
            [
                ("plain", [row["plain"]["tau"] for row in results["length_instruction"]]),
                ("length-instructed", [row["length_instructed"]["tau"] for row in results["length_instruction"]]),
            ],
            value_range=(-1, 1),
        ),
        rank_chart(
            ["Human", *metrics],
            [(r["system"], [r["human_rank"], *r["metric_ranks"].values()]) for r in results["ranks"]],
        ),
        scatter_chart(
            [(r["system"], r["metric_values"]["ROUGE-L"], r["human_mean"]) for r in results["ranks"]], "ROUGE-L"
        ),
    ]


def _percentile_interval(values: list[float]) -> tuple[float, float]:
    ordered = sorted(v for v in values if v == v)
    return ordered[int(0.025 * (len(ordered) - 1))], ordered[int(0.975 * (len(ordered) - 1))]


def naive_bootstraps(records: list[dict], seed: int = 0, n_resamples: int = N_RESAMPLES) -> dict:
    """Compute the same bootstrap intervals with Python loops and one package call per resample."""
    rnd = random.Random(seed)
    questions = sorted({(r["document_id"], r["question_id"]) for r in records})
    scores: dict[str, dict[tuple[str, str], list[int]]] = {}
    for record in records:
        scores.setdefault(record["system"], {}).setdefault((record["document_id"], record["question_id"]), []).append(
            record["score"]
        )
    mean_intervals = {}
    for system, by_question in scores.items():
        resampled = []
        for _ in range(n_resamples):
            total = count = 0
            for _ in questions:
                picked = by_question.get(rnd.choice(questions), [])
                total += sum(picked)
                count += len(picked)
            resampled.append(total / count if count else float("nan"))
        mean_intervals[system] = _percentile_interval(resampled)

    data = reliability_data(records)
    alpha_intervals = {}
    scopes = {"overall": data, **{system: data.for_system(system) for system in sorted(scores)}}
    for scope, subset in scopes.items():
        n_items = subset.matrix.shape[1]
        resampled = []
        for _ in range(n_resamples):
            columns = [rnd.randrange(n_items) for _ in range(n_items)]
            try:
                with np.errstate(invalid="ignore", divide="ignore"):
                    resampled.append(
                        krippendorff.alpha(subset.matrix[:, columns], value_domain=[1, 2, 3, 4, 5],
                                           level_of_measurement="ordinal")
                    )
            except ValueError:
                resampled.append(float("nan"))
        alpha_intervals[scope] = _percentile_interval(resampled)
    return {"means": mean_intervals, "alpha": alpha_intervals}


def _median_ms(action: Callable[[], object], repeat: int) -> float:
    timings = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        timings.append((time.perf_counter() - start) * 1000)
    return statistics.median(timings)


def vectorised_bootstraps(records: list[dict], n_resamples: int = N_RESAMPLES) -> None:
    """Compute the same intervals as naive_bootstraps with the app's vectorised code."""
    summarize_systems(records, n_resamples=n_resamples)
    alpha_by_system(reliability_data(records), n_resamples=n_resamples)


def run(quick: bool = False) -> list[dict]:
    """Measure the analysis and return rows of name, value, unit, target, baseline, ratio.

    The baseline of the full analysis is the same analysis without bootstraps
    plus the naive loop bootstraps, i.e. what a straightforward version costs.
    """
    records = synthetic_records()
    metrics = synthetic_metrics(records)
    flagged = {f"system{s}" for s in range(4, N_SYSTEMS)}
    resamples, repeat = (QUICK_RESAMPLES, QUICK_REPEATS) if quick else (N_RESAMPLES, REPEATS)
    target = None if quick else TARGET_MS

    def analysis(n_resamples: int = resamples) -> dict:
        return build_results(records, metrics, length_instructed=flagged, n_resamples=n_resamples)

    results = analysis()  # warm-up: imports and first-call caches are not what a page request pays
    render_charts(results)
    analysis_ms = _median_ms(analysis, repeat=repeat)
    without_bootstrap_ms = _median_ms(lambda: analysis(0), repeat=repeat)
    charts_ms = _median_ms(lambda: render_charts(results), repeat=repeat)
    page_ms = _median_ms(lambda: render_charts(analysis()), repeat=repeat)
    bootstrap_ms = _median_ms(lambda: vectorised_bootstraps(records, resamples), repeat=repeat)
    naive_ms = _median_ms(lambda: naive_bootstraps(records, n_resamples=resamples), repeat=1)
    naive_analysis_ms = without_bootstrap_ms + naive_ms
    return [
        {"name": f"full analysis (1785 scores, {resamples} resamples)", "value": analysis_ms, "unit": "ms",
         "target": target, "baseline": naive_analysis_ms, "ratio": naive_analysis_ms / analysis_ms},
        {"name": "analysis + all five SVG charts", "value": page_ms, "unit": "ms",
         "target": target, "baseline": naive_analysis_ms + charts_ms,
         "ratio": (naive_analysis_ms + charts_ms) / page_ms},
        {"name": "bootstrap intervals only (means, alpha x 8)", "value": bootstrap_ms, "unit": "ms",
         "target": None, "baseline": naive_ms, "ratio": naive_ms / bootstrap_ms},
        {"name": "five SVG charts only", "value": charts_ms, "unit": "ms",
         "target": None, "baseline": None, "ratio": None},
    ]


def main() -> None:
    rows = run(quick="--quick" in sys.argv[1:])
    print(f"{'name':46} {'value':>10} {'target':>7} {'baseline':>11} {'ratio':>7}")
    for row in rows:
        target = "-" if row["target"] is None else f"{row['target']:.0f}"
        baseline = "-" if row["baseline"] is None else f"{row['baseline']:.1f}ms"
        ratio = "-" if row["ratio"] is None else f"{row['ratio']:.1f}x"
        print(f"{row['name']:46} {row['value']:8.1f}{row['unit']} {target:>7} {baseline:>11} {ratio:>7}")
    print("ratio = baseline / value (naive pure-Python loop bootstraps, same run)")


if __name__ == "__main__":
    main()
