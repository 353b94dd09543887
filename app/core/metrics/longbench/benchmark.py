"""LongBench as a benchmark (app.core.benchmarks): v1 and LongBench-E (`pred/`, `pred_e/`) and v2 (`results/`)."""
from __future__ import annotations

from app.core.benchmarks.spec import Benchmark, HumanMetric
from app.core.metrics.longbench import DATASETS
from app.core.metrics.longbench.files import is_longbench_file_name, owns_rows
from app.core.metrics.longbench.quirks import QUIRKS

ROW_METRIC = "longbench_raw"
V2_TASK = "v2"
# OpenCompass's LongBench configs name each dataset 'LongBench_' + its name (opencompass/configs/datasets/
# longbench/longbench<name>/longbench_<name>_gen_*.py, `abbr`); LongBench v2 is 'LongBenchv2'
# (configs/datasets/longbenchv2/longbenchv2_gen_*.py). LongBench-E has no OpenCompass config.
OPENCOMPASS_DATASETS = {**{f"LongBench_{name}": name for name in DATASETS}, "LongBenchv2": V2_TASK}
# The datasets whose OpenCompass loader keeps no `input` (opencompass/datasets/longbench/longbench_<name>.py keeps
# only `context` and `answers`), so their prompts hold the document but not the question.
OPENCOMPASS_WITHOUT_INPUT = frozenset({"gov_report", "lcc", "multi_news", "passage_count", "vcsum"})

BENCHMARK = Benchmark(
    key="longbench", label="LongBench",
    human_metrics=(HumanMetric(
        ROW_METRIC, "LongBench (its dataset's metric, 0–1)",
        "no LongBench scores on these questions (only LongBench's questions have them)"),),
    owns_file=is_longbench_file_name, owns_rows=owns_rows,
    opencompass_datasets=OPENCOMPASS_DATASETS, opencompass_prefix="LongBench",
    quirks=QUIRKS, cell_unit="dataset score",
)
