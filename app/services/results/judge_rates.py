"""LLM-judge win rates for the metric-versus-human comparison.

The judging service owns win rates; until it is installed, they are computed
here from stored LLMJudgment rows with the judge core's L-Eval aggregation,
so stored judgments still show up on the results pages.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, NamedTuple

from sqlalchemy import select
from sqlalchemy.orm import aliased

from ...extensions import db
from ...models import Document, JudgePrompt, LLMJudgment, Question, System
from ...models.corpus import HUMAN_EVAL
from ..judge.aggregate import fastchat_win_rate, leval_win_rate

WinRates = dict[str, list[dict[str, Any]]]


class _Verdict(NamedTuple):
    pair_id: tuple
    order: str
    verdict: str | None


def load_win_rates(system_names: list[str] | None = None) -> WinRates:
    """Ask the judging service for win rates; fall back to the stored judgments."""
    try:
        from ..judging import win_rates  # type: ignore[import-not-found]
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__.rsplit('.', 1)[0]}.judging":
            raise  # the service exists but is broken: say so rather than show stale numbers
        return win_rates_from_judgments(system_names)
    return win_rates(system_names=system_names)


def win_rates_from_judgments(system_names: list[str] | None = None) -> WinRates:
    """Compute L-Eval and FastChat win % per system from LLMJudgment rows on the human-eval subset.

    A re-run of the same pair and order keeps only the latest judgment, so a
    repeated call never counts twice.
    """
    baseline = aliased(System)
    stmt = (
        select(System.name, baseline.name, LLMJudgment.judge_model, JudgePrompt.version, LLMJudgment.question_id,
               LLMJudgment.order, LLMJudgment.verdict)
        .join(System, System.id == LLMJudgment.system_id)
        .join(baseline, baseline.id == LLMJudgment.baseline_id)
        .join(Question, Question.id == LLMJudgment.question_id)
        .join(Document, Document.id == Question.document_id)
        .outerjoin(JudgePrompt, JudgePrompt.id == LLMJudgment.prompt_id)
        .where(Document.collection == HUMAN_EVAL)
        .order_by(LLMJudgment.id)
    )
    if system_names is not None:
        stmt = stmt.where(System.name.in_(system_names))
    latest: dict[tuple, _Verdict] = {}
    for system, base, model, version, question_id, order, verdict in db.session.execute(stmt):
        setup = (system, base, model, version)
        latest[(setup, question_id, order)] = _Verdict((setup, question_id), order, verdict)
    by_setup: dict[tuple, list[_Verdict]] = defaultdict(list)
    for (setup, _, _), verdict in latest.items():
        by_setup[setup].append(verdict)
    result: WinRates = defaultdict(list)
    for (system, base, model, version), verdicts in sorted(by_setup.items(), key=lambda item: str(item[0])):
        result[system].append({
            "judge_model": model, "prompt_version": version if version is not None else "",
            "baseline": base, "win_rate": leval_win_rate(verdicts),
            "win_rate_fastchat": fastchat_win_rate(verdicts), "n_judgments": len(verdicts),
        })
    return dict(result)
