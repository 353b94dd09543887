"""Helpers shared by the benchmark scripts."""
from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from tests.support.shared import SHARED_LEVAL  # noqa: E402  (the one definition of ../shared/leval)


def shared_or_exit() -> Path:
    """Return ../shared/leval, or explain and exit 0 (the benchmark is skipped, not failed)."""
    if not (SHARED_LEVAL / "Predictions").is_dir():
        print(f"SKIPPED: L-Eval data not found at {SHARED_LEVAL}; clone the project beside ../shared")
        raise SystemExit(0)
    return SHARED_LEVAL


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank q-th percentile (q in 0-100) of a non-empty list."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def row(name: str, value: float, unit: str, target: str, baseline: float | None, baseline_name: str = "") -> dict:
    """One result row; ratio = baseline / value (above 1: faster than the baseline)."""
    ratio = (baseline / value) if baseline and value else None
    return {"name": name, "value": value, "unit": unit, "target": target, "baseline": baseline,
            "baseline_name": baseline_name, "ratio": ratio}


def _fmt(value, unit: str = "") -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        text = f"{value:.4g}" if abs(value) < 1000 else f"{value:,.0f}"
    else:
        text = str(value)
    return f"{text} {unit}".strip()


def print_table(rows: list[dict]) -> None:
    """Print rows as one aligned table; tolerant of missing fields."""
    width = min(max([len(str(r.get("name", ""))) for r in rows] + [20]), 100)
    header = f"{'measure':{width}} {'figure':>14} {'target':>14} {'baseline':>14} {'ratio':>9}"
    print(header)
    print("-" * len(header))
    for r in rows:
        unit = r.get("unit", "") or ""
        ratio = r.get("ratio")
        ratio_text = f"{ratio:.2f}x" if isinstance(ratio, (int, float)) else "-"
        target = r.get("target")
        target_text = target if isinstance(target, str) else _fmt(target, unit)
        print(f"{str(r.get('name', ''))[:width]:{width}} {_fmt(r.get('value'), unit):>14} {target_text:>14} "
              f"{_fmt(r.get('baseline'), unit):>14} {ratio_text:>9}")
        if r.get("baseline_name"):
            print(f"{'':{width}}   baseline: {r['baseline_name']}")


def markdown_table(rows: list[dict]) -> str:
    """The same table in Markdown, for docs/performance.md."""
    lines = ["| measure | figure | target | baseline (same run) | ratio |", "|---|---|---|---|---|"]
    for r in rows:
        unit = r.get("unit", "") or ""
        ratio = r.get("ratio")
        baseline = _fmt(r.get("baseline"), unit) if r.get("baseline") is not None else "–"
        if r.get("baseline_name") and r.get("baseline") is not None:
            baseline += f" ({r['baseline_name']})"
        target = r.get("target")
        lines.append(" | ".join([
            f"| {r.get('name', '')}", _fmt(r.get("value"), unit),
            "–" if target in (None, "", "-") else (target if isinstance(target, str) else _fmt(target, unit)),
            baseline, f"{ratio:.2f}×" if isinstance(ratio, (int, float)) else "–",
        ]) + " |")
    return "\n".join(lines)


def free_port() -> int:
    """A free TCP port on 127.0.0.1 for a server a benchmark starts."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop_process(process: subprocess.Popen) -> None:
    """Stop a server a benchmark started: politely, then for good after 15 s."""
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
