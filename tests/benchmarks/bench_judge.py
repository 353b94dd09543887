"""Benchmark the judge runner's concurrency on L-Eval's 85 human-eval pairs.

claude-100k against turbo-16k-0613, both orders (170 judgments), against the local stub
answering each request after 300 ms. Prints the wall time at concurrency 1 (the
baseline, measured in the same run) and at 8, and the speed-up.
Targets: at least 5x faster and at most 8 s at concurrency 8.

Run: python tests/benchmarks/bench_judge.py
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:  # run as a script: make `app` and `tests` importable
    sys.path.insert(0, str(REPO_ROOT))

from app.services.judge import (  # noqa: E402
    DEFAULT_TEMPLATE,
    InMemoryJudgeCache,
    PairItem,
    make_client,
    run_judgments,
)
from tests.support.openai_stub import StubOpenAIServer  # noqa: E402

HUMAN_EVAL_DIR = REPO_ROOT.parent / "shared" / "leval" / "Predictions" / "human_eval"
SYSTEM_FILE = "claude-100k.pred.jsonl"
BASELINE_FILE = "turbo-16k-0613.pred.jsonl"
REFERENCE_FILE = "claude.gpt4.ref.jsonl"
LATENCY_S = 0.300
CONCURRENCY = 8
TARGET_SPEEDUP = 5.0
TARGET_WALL_S = 8.0

_WORD = re.compile(r"\w+")
# Sections of DEFAULT_TEMPLATE's user message: reference, answer A, answer B.
_SECTIONS = re.compile(
    r"## Reference answer \(written by a human\)\n(.*)\n\n## Assistant A's answer\n(.*)"
    r"\n\n## Assistant B's answer\n(.*)\n\n## End of answers",
    re.S,
)


def _normalise(text: Any) -> str:
    return " ".join(str(text).split())


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _by_query_and_gt(rows: list[dict[str, Any]], source: str) -> dict[tuple[str, str], dict[str, Any]]:
    """Index prediction rows by normalised (query, gt); a duplicate key is an error."""
    index: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        key = (_normalise(row["query"]), _normalise(row["gt"]))
        if key in index:
            raise ValueError(f"{source}: duplicate (query, gt) {key[0][:60]!r}")
        index[key] = row
    return index


def _prediction(row: dict[str, Any]) -> str:
    return str(next(value for key, value in row.items() if key.endswith("_pred")))


def load_pairs(data_dir: Path = HUMAN_EVAL_DIR) -> list[PairItem]:
    """Pair claude-100k's and turbo-16k-0613's predictions with the human references."""
    system = _by_query_and_gt(_read_jsonl(data_dir / SYSTEM_FILE), SYSTEM_FILE)
    baseline = _by_query_and_gt(_read_jsonl(data_dir / BASELINE_FILE), BASELINE_FILE)
    references: dict[tuple[str, str], str] = {}
    for document in _read_jsonl(data_dir / REFERENCE_FILE):
        for question, answer in zip(document["instructions"], document["outputs"], strict=True):
            references[(_normalise(question), _normalise(answer))] = str(answer)
    pairs = []
    for number, (key, row) in enumerate(system.items()):
        if key not in baseline or key not in references:
            raise ValueError(f"no baseline or reference for {key[0][:60]!r}")
        pairs.append(PairItem(number, str(row["query"]), references[key], _prediction(row), _prediction(baseline[key])))
    return pairs


def overlap_policy(body: dict[str, Any]) -> str:
    """Prefer the answer sharing more words with the reference (a stand-in judge)."""
    match = _SECTIONS.search(body["messages"][-1]["content"])
    reference = set(_WORD.findall(match.group(1).lower())) if match else set()
    if match is None or not reference:
        return "Cannot parse the prompt; calling it even. [[C]]"

    def f1(answer: str) -> float:
        words = set(_WORD.findall(answer.lower()))
        common = len(words & reference)
        return 0.0 if common == 0 else 2 * common / (len(words) + len(reference))

    score_a, score_b = f1(match.group(2)), f1(match.group(3))
    verdict = "C" if abs(score_a - score_b) < 0.02 else ("A" if score_a > score_b else "B")
    return f"Word overlap with the reference: A {score_a:.2f}, B {score_b:.2f}. [[{verdict}]]"


def _timed_run(stub: StubOpenAIServer, pairs: list[PairItem], concurrency: int) -> tuple[float, dict[str, Any]]:
    client = make_client(stub.base_url, "bench-key", max_retries=2, timeout=30.0)
    started = time.perf_counter()
    summary = run_judgments(
        client, pairs, model="gpt-4", template=DEFAULT_TEMPLATE, cache=InMemoryJudgeCache(), concurrency=concurrency
    )
    elapsed = time.perf_counter() - started
    report = summary.to_cli_json()
    # One pair has identical answers, so its two orders are the same prompt: one call, one cache hit.
    if report["api_calls"] + report["cached"] != 2 * len(pairs) or report["errors"]:
        raise RuntimeError(f"benchmark run was incomplete: {report}")
    return elapsed, report


def run(latency_s: float = LATENCY_S, concurrency: int = CONCURRENCY) -> list[dict[str, Any]]:
    """Measure both runs and return rows: name, value, unit, target, baseline, ratio."""
    if not HUMAN_EVAL_DIR.is_dir():
        print(f"skipped: ../shared/leval not present: {HUMAN_EVAL_DIR} is missing", file=sys.stderr)
        return []
    pairs = load_pairs()
    with StubOpenAIServer(policy=overlap_policy, latency_s=latency_s) as stub:
        serial_s, serial_report = _timed_run(stub, pairs, 1)
        parallel_s, parallel_report = _timed_run(stub, pairs, concurrency)
    if serial_report["wins"] != parallel_report["wins"] or serial_report["ties"] != parallel_report["ties"]:
        raise RuntimeError("concurrency changed the verdicts")
    speedup = serial_s / parallel_s
    print(
        f"{len(pairs)} pairs x 2 orders: {serial_report['api_calls']} calls at {latency_s * 1000:.0f} ms each "
        f"(+{serial_report['cached']} identical prompt served from the cache); "
        f"stand-in judge win rate {serial_report['win_rate']:.1f}% (L-Eval), "
        f"{serial_report['win_rate_fastchat']:.1f}% (FastChat)"
    )
    print(f"concurrency 1 (baseline): {serial_s:.2f} s")
    print(f"concurrency {concurrency}: {parallel_s:.2f} s  (target <= {TARGET_WALL_S:.0f} s)")
    print(f"speed-up: {speedup:.2f}x  (target >= {TARGET_SPEEDUP:.0f}x)")
    return [
        {
            "name": "judge_wall_time_concurrency_1",
            "value": serial_s,
            "unit": "s",
            "target": None,
            "baseline": serial_s,
            "ratio": 1.0,
        },
        {
            "name": f"judge_wall_time_concurrency_{concurrency}",
            "value": parallel_s,
            "unit": "s",
            "target": TARGET_WALL_S,
            "baseline": serial_s,
            "ratio": speedup,
        },
        {
            "name": f"judge_speedup_{concurrency}_vs_1",
            "value": speedup,
            "unit": "x",
            "target": TARGET_SPEEDUP,
            "baseline": 1.0,
            "ratio": speedup,
        },
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=float, default=LATENCY_S * 1000, help="stub delay per request")
    parser.add_argument("--concurrency", type=int, default=CONCURRENCY)
    args = parser.parse_args()
    rows = run(latency_s=args.latency_ms / 1000, concurrency=args.concurrency)
    if not rows:
        return 0
    parallel, speedup = rows[1], rows[2]
    met = parallel["value"] <= TARGET_WALL_S and speedup["value"] >= TARGET_SPEEDUP
    print("targets met" if met else "targets NOT met")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
