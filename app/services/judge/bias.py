"""Bias probes of a judge run, overall and per task, from its stored judgments (app.core.stats.judge_bias)."""
from __future__ import annotations

from dataclasses import dataclass

from app.core.stats.judge_bias import BiasProbes, PairVerdicts, probe, probe_by_task
from app.core.text import word_count
from app.services.cache import NO_STUDY, cached
from app.services.judge.reports import RunReport, RunSpec, run_report

ALL_TASKS = "All tasks"
RESAMPLES = 200


@dataclass(frozen=True)
class RunBias:
    spec: RunSpec
    overall: BiasProbes
    by_task: dict[str, BiasProbes]
    pending: int


def pair_verdicts(report: RunReport) -> list[PairVerdicts]:
    """Each pair's two outcomes from the system's side (None: not judged yet) and its answers' lengths in words."""
    verdicts = []
    for pair_report in report.pairs:
        item = pair_report.pair.item
        outcomes = {order: pair_report.outcome(order) for order in ("AB", "BA")}
        verdicts.append(PairVerdicts(
            item.pair_id, word_count(item.system_answer), word_count(item.baseline_answer),
            None if outcomes["AB"] == "pending" else outcomes["AB"],
            None if outcomes["BA"] == "pending" else outcomes["BA"],
            pair_report.pair.task or "(no task)",
        ))
    return verdicts


def run_bias(spec: RunSpec) -> RunBias:
    """Probe one run (cached until the data change)."""
    def compute() -> RunBias:
        report = run_report(spec, bootstrap_iterations=0)
        verdicts = pair_verdicts(report)
        return RunBias(spec, probe(verdicts, resamples=RESAMPLES), probe_by_task(verdicts, resamples=RESAMPLES),
                       report.pending)

    return cached(("judge-bias", spec), compute, study=NO_STUDY)  # judge runs only
