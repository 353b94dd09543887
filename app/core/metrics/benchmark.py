"""L-Eval as a benchmark (app.core.benchmarks): the base one, whose files are every file no other claims."""
from __future__ import annotations

from app.core.benchmarks.spec import Benchmark, HumanMetric
from app.core.metrics.quirks import QUIRKS

# Dataset abbr -> L-Eval task file, from opencompass/configs/datasets/leval/*/leval_*_gen_*.py (`abbr`, `name`).
OPENCOMPASS_DATASETS = {
    "LEval_coursera": "coursera", "LEval_financialqa": "financial_qa", "LEval_gov_report_summ": "gov_report_summ",
    "LEval_gsm100": "gsm100", "LEval_legal_contract_qa": "legal_contract_qa", "LEval_meeting_summ": "meeting_summ",
    "LEval_multidocqa": "multidoc_qa", "LEval_narrativeqa": "narrative_qa", "LEval_nq": "natural_question",
    "LEval_news_summ": "news_summ", "LEval_paper_assistant": "paper_assistant", "LEval_patent_summ": "patent_summ",
    "LEval_quality": "quality", "LEval_review_summ": "review_summ", "LEval_scientificqa": "scientific_qa",
    "LEval_topic_retrieval": "topic_retrieval_longchat", "LEval_tpo": "tpo", "LEval_tvshow_summ": "tv_show_summ",
}

BENCHMARK = Benchmark(
    key="leval", label="L-Eval",
    # The metrics L-Eval compares with human judgement, in the order its figure shows them.
    human_metrics=(HumanMetric("f1", "F1"), HumanMetric("rougeL", "ROUGE-L")),
    opencompass_datasets=OPENCOMPASS_DATASETS, opencompass_prefix="LEval_",
    quirks=tuple(q for q in QUIRKS if not q["id"].startswith("lveval")),
    cell_unit="task",
)
