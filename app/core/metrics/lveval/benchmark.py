"""LV-Eval as a benchmark (app.core.benchmarks): `<model>/<dataset>_<level>.jsonl`, 11 datasets at five levels."""
from __future__ import annotations

from app.core.benchmarks.spec import Benchmark, HumanMetric
from app.core.metrics.files import LVEVAL_DATASETS, LVEVAL_LEVELS, is_lveval_file_name, is_lveval_row
from app.core.metrics.quirks import QUIRKS

# LV-Eval configs name each dataset 'LVEval_' + f'{dataset}_{level}' (opencompass/configs/datasets/lveval/).
OPENCOMPASS_DATASETS = {f"LVEval_{d}_{level}": f"{d}_{level}" for d in LVEVAL_DATASETS for level in LVEVAL_LEVELS}

BENCHMARK = Benchmark(
    key="lveval", label="LV-Eval",
    human_metrics=(HumanMetric(
        "keyword_f1", "Keyword F1 (LV-Eval)",
        # F1 is computed for every answer; Keyword F1 only where LV-Eval gives the answer's keywords.
        "no keyword annotations on these questions (only LV-Eval's questions have answer keywords)"),),
    owns_file=is_lveval_file_name, owns_rows=is_lveval_row,
    opencompass_datasets=OPENCOMPASS_DATASETS, opencompass_prefix="LVEval_",
    quirks=tuple(q for q in QUIRKS if q["id"].startswith("lveval")),
)
