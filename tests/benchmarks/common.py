"""Helpers shared by the benchmark scripts."""
from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_LEVAL = (REPO_ROOT.parent / "shared" / "leval").resolve()
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


def shared_or_exit() -> Path:
    """Return ../shared/leval, or explain and exit 0 (the benchmark is skipped, not failed)."""
    if not (SHARED_LEVAL / "Predictions").is_dir():
        print(f"SKIPPED: L-Eval data not found at {SHARED_LEVAL}; clone the project beside ../shared")
        raise SystemExit(0)
    return SHARED_LEVAL


def row(name: str, value: float, unit: str, target: str, baseline: float | None, baseline_name: str = "") -> dict:
    """One result row; ratio = baseline / value (above 1: faster than the baseline)."""
    ratio = (baseline / value) if baseline and value else None
    return {"name": name, "value": value, "unit": unit, "target": target, "baseline": baseline,
            "baseline_name": baseline_name, "ratio": ratio}


def print_table(rows: list[dict]) -> None:
    header = f"{'measure':58} {'value':>10} {'target':>12} {'baseline':>10} {'ratio':>8}"
    print(header)
    print("-" * len(header))
    for r in rows:
        base = f"{r['baseline']:.3f}" if r["baseline"] is not None else "-"
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] is not None else "-"
        print(f"{r['name'][:58]:58} {r['value']:>9.3f}{r['unit'][:1] if r['unit']=='s' else ''} {r['target']:>12} {base:>10} {ratio:>8}")
        if r.get("baseline_name"):
            print(f"{'':58}   baseline: {r['baseline_name']}")
