"""Pairwise LLM judge core: prompts, verdicts, aggregation, cache, the dry run and the runner.

Pure Python over the `openai` client; no web framework or database imports, so the
app wires it into background jobs, a DB-backed cache and the settings page.
"""
from app.core.judge.aggregate import (
    Aggregation,
    aggregate,
    bootstrap_ci,
    count_outcomes,
    fastchat_pair_outcomes,
    fastchat_win_rate,
    leval_statistics,
    leval_win_rate,
    position_consistency,
)
from app.core.judge.cache import InMemoryJudgeCache, JudgeCache, cache_key
from app.core.llm.pricing import DEFAULT_PRICES, CostEstimate, ModelPrice, cost_usd, price_for
from app.core.judge.dry_run import estimate
from app.core.judge.prompt import (
    DEFAULT_TEMPLATE,
    LEVAL_INSTRUCTION,
    ORDERS,
    PairItem,
    PromptTemplate,
    answers_in_order,
    render,
    render_pair,
    validate_template,
)
from app.core.judge.runner import RunSummary, make_client, mask_api_key, run_judgments
from app.core.judge.verdict import JudgmentResult, parse_verdict, system_outcome

__all__ = [
    "Aggregation",
    "CostEstimate",
    "DEFAULT_PRICES",
    "DEFAULT_TEMPLATE",
    "InMemoryJudgeCache",
    "JudgeCache",
    "JudgmentResult",
    "LEVAL_INSTRUCTION",
    "ModelPrice",
    "ORDERS",
    "PairItem",
    "PromptTemplate",
    "RunSummary",
    "aggregate",
    "answers_in_order",
    "bootstrap_ci",
    "cache_key",
    "cost_usd",
    "count_outcomes",
    "estimate",
    "fastchat_pair_outcomes",
    "fastchat_win_rate",
    "leval_statistics",
    "leval_win_rate",
    "make_client",
    "mask_api_key",
    "parse_verdict",
    "position_consistency",
    "price_for",
    "render",
    "render_pair",
    "run_judgments",
    "system_outcome",
    "validate_template",
]
