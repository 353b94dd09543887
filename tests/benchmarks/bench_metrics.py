"""Benchmark the metrics: the 57 published L-Eval files, and ROUGE-L on a 2,000 × 2,000 token pair.

Run as ``python tests/benchmarks/bench_metrics.py``.  Each figure is compared
with a baseline measured in the same run: the reference path (L-Eval's
algorithm with the rouge-score package, restated in tests/support/leval_reference.py)
and the plain rouge-score call.  ``ratio`` is baseline / value, i.e. how many
times faster we are.  ``run()`` returns the rows for a collecting script;
``run(quick=True)`` scores every tenth file and a 300-token ROUGE-L pair.
"""

from __future__ import annotations

import importlib.util
import random
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from app.core.metrics import evaluate_file  # noqa: E402
from app.core.metrics.rouge import rouge_l  # noqa: E402
from tests.benchmarks.common import SHARED_LEVAL as LEVAL_ROOT  # noqa: E402

TARGET_ALL_FILES_SECONDS = 3.0
LCS_TOKENS = 2000
QUICK_LCS_TOKENS = 300
QUICK_EVERY_NTH_FILE = 10


def _load_reference():
    spec = importlib.util.spec_from_file_location("leval_reference", REPO_ROOT / "tests" / "support" / "leval_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _published_files() -> list[Path]:
    predictions = LEVAL_ROOT / "Predictions"
    return sorted(predictions.glob("exam_eval/*/*.pred.jsonl")) + sorted(predictions.glob("ngram_eval/*/*.pred.jsonl"))


def _timed(function, repeat: int = 1) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def _row(name: str, value: float, unit: str, target: float | None, baseline: float) -> dict:
    return {"name": name, "value": value, "unit": unit, "target": target, "baseline": baseline,
            "ratio": baseline / value if value else float("inf")}


def bench_all_files(quick: bool = False) -> list[dict]:
    """Score every exam and ngram file in this process: official and fixed profiles against the reference path."""
    files = _published_files()
    if not files:
        print(f"../shared/leval not present: skipping the 57-file benchmark ({LEVAL_ROOT})")
        return []
    if quick:
        files = files[::QUICK_EVERY_NTH_FILE]
    reference = _load_reference()
    official_seconds, _ = _timed(lambda: [evaluate_file(path) for path in files])
    fixed_seconds, _ = _timed(lambda: [evaluate_file(path, profile="fixed") for path in files])
    baseline_seconds, _ = _timed(
        lambda: [reference.evaluate_pred_file(path, str(path.relative_to(LEVAL_ROOT))) for path in files])
    label = f"score {'' if quick else 'all '}{len(files)} exam+ngram files"
    target = None if quick else TARGET_ALL_FILES_SECONDS
    return [
        _row(f"{label} (official)", official_seconds, "s", target, baseline_seconds),
        _row(f"{label} (fixed, incl. jieba load)", fixed_seconds, "s", target, baseline_seconds),
    ]


def bench_rouge_l(tokens: int = LCS_TOKENS) -> list[dict]:
    """ROUGE-L F on one tokens × tokens pair (2,000 by default): ours against the rouge-score call."""
    from rouge_score import rouge_scorer

    rng = random.Random(20240611)
    vocabulary = [f"w{i}" for i in range(400)]
    reference = " ".join(rng.choice(vocabulary) for _ in range(tokens))
    prediction = " ".join(rng.choice(vocabulary) for _ in range(tokens))
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    package_seconds, package_score = _timed(lambda: scorer.score(reference, prediction)["rougeL"].fmeasure * 100)
    ours_seconds, ours_score = _timed(lambda: rouge_l(prediction, reference), repeat=20)
    if ours_score != package_score:
        raise AssertionError(f"ROUGE-L differs: ours {ours_score!r}, rouge-score {package_score!r}")
    return [_row(f"ROUGE-L {tokens}x{tokens} tokens", ours_seconds, "s", None, package_seconds)]


def run(quick: bool = False) -> list[dict]:
    """Run every benchmark; rows have name, value, unit, target, baseline and ratio (baseline / value)."""
    return bench_all_files(quick) + bench_rouge_l(QUICK_LCS_TOKENS if quick else LCS_TOKENS)


def main() -> None:
    rows = run(quick="--quick" in sys.argv[1:])
    print(f"{'benchmark':<56} {'value':>10} {'target':>8} {'baseline':>10} {'speed-up':>9}")
    for row in rows:
        target = "-" if row["target"] is None else f"<={row['target']:g}{row['unit']}"
        print(f"{row['name']:<56} {row['value']:>9.4f}{row['unit']} {target:>8} "
              f"{row['baseline']:>9.3f}{row['unit']} {row['ratio']:>8.1f}x")


if __name__ == "__main__":
    main()
