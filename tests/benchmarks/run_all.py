"""Run every benchmark and print one table: measure, figure, target, same-run baseline, ratio.

Usage: python tests/benchmarks/run_all.py [--only import,metrics] [--quick] [--json FILE] [--markdown FILE]
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import SHARED_LEVAL, markdown_table, print_table  # noqa: E402

# Each benchmark name runs these modules' run(), in order.
BENCHMARKS = {
    "import": ("bench_import",),
    "metrics": ("bench_metrics", "bench_metric_jobs"),
    "pages": ("bench_pages",),
    "load": ("bench_load",),
    "judge": ("bench_judge", "bench_rater"),
    "generate": ("bench_generate",),
    "results": ("bench_results", "bench_analysis_core"),
    "start": ("bench_start",),
    "lveval": ("bench_lveval",),
    "uploads": ("bench_upload_memory",),
    "quotes": ("bench_quotes",),
    "allocation": ("bench_allocation",),
    "connections": ("bench_connections",),
    "scale": ("bench_scale",),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", default="", help="comma-separated subset of: " + ", ".join(BENCHMARKS))
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    parser.add_argument("--markdown", type=Path, help="also write the table in Markdown (docs/performance.md's)")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes and short runs (a smoke test: the figures are not docs/performance.md's)")
    args = parser.parse_args()
    chosen = [b for b in BENCHMARKS if not args.only or b in args.only.split(",")]
    if not (SHARED_LEVAL / "Predictions").is_dir():
        print(f"SKIPPED: L-Eval data not found at {SHARED_LEVAL}; the benchmarks measure on it.")
        return 0
    rows, failures = [], []
    for name in chosen:
        for module_name in BENCHMARKS[name]:
            started = time.perf_counter()
            print(f"== {module_name}", flush=True)
            try:
                produced = importlib.import_module(module_name).run(quick=args.quick) or []
            except SystemExit:
                produced = []
            except Exception:
                traceback.print_exc()
                failures.append(module_name)
                continue
            for row in produced:
                row.setdefault("benchmark", name)
            rows.extend(produced)
            print(f"   ({time.perf_counter() - started:.1f} s)", flush=True)
    print()
    print_table(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    if args.markdown:
        args.markdown.write_text(markdown_table(rows) + "\n", encoding="utf-8")
    if failures:
        print("failed:", ", ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
