"""Judge run reports and win rates, computed from the stored judgments.

A run is identified by what it judged (RunSpec), not by the job that did the calls: its
pairs come from the current predictions and its verdicts from the content-addressed rows,
so overlapping jobs and command-line runs all count, and a changed answer is pending
again until judged.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from app.core.evidence import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_MAX_QUOTES,
    FLAGS,
    Rated,
    flag_of,
    flagged_scope,
    summarise,
)
from app.core.judge import (
    ORDERS,
    Aggregation,
    aggregate,
    cost_usd,
    count_outcomes,
    leval_win_rate,
    system_outcome,
)
from app.core.judge.profiles import DEFAULT as DEFAULT_PROFILE
from app.core.judge.profiles import PROFILES, JudgeProfile, get_profile
from app.extensions import db
from app.models import Document, Job, JudgePrompt, LLMJudgment
from app.services.judge.db_cache import rows_by_key
from app.services.judge.evidence import with_documents
from app.services.judge.pairs import (
    DEFAULT_SCOPE,
    JudgePair,
    PairError,
    build_pairs,
    default_baseline,
    inputs_fingerprint,
    system_named,
)
from app.services.judge.prompt_versions import as_template
from app.services.judge.settings import load_settings
from app.services.llm.evidence import shown_spans

JOB_KIND = "judge"
_EVIDENCE_DEFAULTS = {"max_quotes": DEFAULT_MAX_QUOTES, "context_tokens": DEFAULT_CONTEXT_TOKENS, "json_schema": True}


@dataclass(frozen=True)
class RunSpec:
    """What a judge run compares: two systems on a scope, under one judge configuration.

    The evidence profile's options (quotes per answer, the judge's context, the JSON schema switch) count only
    under that profile; a job's params name the ones that differ from the defaults, so older jobs read as before.
    """

    system: str
    baseline: str
    judge_model: str
    prompt_id: int
    temperature: float = 0.0
    scope: str = DEFAULT_SCOPE
    profile: str = DEFAULT_PROFILE
    max_quotes: int = DEFAULT_MAX_QUOTES
    context_tokens: int = DEFAULT_CONTEXT_TOKENS
    json_schema: bool = True

    def __post_init__(self) -> None:
        profile = PROFILES.get(self.profile)
        if profile is not None and not profile.shows_document:  # no document, no quotes: one spec per run
            for name, default in _EVIDENCE_DEFAULTS.items():
                object.__setattr__(self, name, default)

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> RunSpec:
        get_profile(params.get("profile"))  # an unknown profile is a ValueError here, not deep in a report
        return cls(system=str(params["system"]), baseline=str(params["baseline"]),
                   judge_model=str(params["judge_model"]), prompt_id=int(params["prompt_id"]),
                   temperature=float(params.get("temperature", 0.0)), scope=str(params.get("scope", DEFAULT_SCOPE)),
                   profile=str(params.get("profile", DEFAULT_PROFILE)),
                   max_quotes=int(params.get("max_quotes", DEFAULT_MAX_QUOTES)),
                   context_tokens=int(params.get("context_tokens", DEFAULT_CONTEXT_TOKENS)),
                   json_schema=bool(params.get("json_schema", True)))

    def params(self) -> dict[str, Any]:
        params = {"system": self.system, "baseline": self.baseline, "judge_model": self.judge_model,
                  "prompt_id": self.prompt_id, "temperature": self.temperature, "scope": self.scope}
        if self.profile != DEFAULT_PROFILE:  # runs from before profiles keep their identity
            params["profile"] = self.profile
        params.update({name: getattr(self, name) for name, default in _EVIDENCE_DEFAULTS.items()
                       if getattr(self, name) != default})
        return params

    @property
    def judge_profile(self) -> JudgeProfile:
        return get_profile(self.profile).with_evidence_options(self.max_quotes, self.json_schema)


@dataclass(frozen=True)
class _Verdict:
    pair_id: object
    order: str
    verdict: str | None


@dataclass
class PairReport:
    """One question: the pair, and the stored judgment of each order (None: not judged yet)."""

    pair: JudgePair
    rows: dict[str, LLMJudgment | None]

    def outcome(self, order: str) -> str:
        if order not in self.rows:
            return "left out"  # flagged (see flag_of), and the report leaves flagged judgments out
        row = self.rows.get(order)
        return "pending" if row is None else system_outcome(order, row.verdict)  # type: ignore[arg-type]

    @property
    def consistent(self) -> bool | None:
        first, second = self.outcome("AB"), self.outcome("BA")
        if {first, second} & {"pending", "error", "left out"}:
            return None
        return first == second


@dataclass
class RunReport:
    spec: RunSpec
    prompt: JudgePrompt
    pairs: list[PairReport]
    aggregation: Aggregation
    pending: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    fingerprint: str
    evidence: dict | None = None  # the evidence profile: the quote report (core.evidence.summarise)

    @property
    def judged(self) -> int:
        return self.aggregation.wins + self.aggregation.losses + self.aggregation.ties


def run_report(spec: RunSpec, *, bootstrap_iterations: int = 1000, leave_out_flagged: bool = False) -> RunReport:
    """Pair the spec's systems now and gather every stored judgment of those pairs.

    Under the evidence profile the report holds the quote report too, and `leave_out_flagged` drops the
    flagged judgments (quotes all unsupported, or one under the minimum) from every number (they count as
    neither judged nor pending).
    """
    prompt = db.session.get(JudgePrompt, spec.prompt_id)
    if prompt is None:
        raise PairError(f"prompt #{spec.prompt_id} no longer exists")
    template = as_template(prompt)
    profile = spec.judge_profile
    pairs = build_pairs(system_named(spec.system), system_named(spec.baseline), spec.scope, profile.name)
    if profile.shows_document:
        try:
            pairs, _ = with_documents(pairs, template, spec.judge_model, profile, spec.context_tokens)
        except ValueError as exc:
            raise PairError(f"context tokens: {exc}") from None
    prompt_key = profile.prompt_key(template)
    keys = [pair.keys(spec.judge_model, prompt_key, spec.temperature) for pair in pairs]
    stored = rows_by_key(key for pair_keys in keys for key in pair_keys.values())
    reports, verdicts = [], []
    pending = prompt_tokens = completion_tokens = 0
    judged: list[tuple[JudgePair, LLMJudgment]] = []
    for pair, pair_keys in zip(pairs, keys):
        rows = {order: stored.get(pair_keys[order]) for order in ORDERS}
        if profile.shows_document and leave_out_flagged:
            rows = {order: row for order, row in rows.items() if row is None or not flagged(row)}
        reports.append(PairReport(pair, rows))
        for order in ORDERS:
            row = rows.get(order)
            if order not in rows:
                continue  # left out: flagged
            if row is None:
                pending += 1
                continue
            judged.append((pair, row))
            verdicts.append(_Verdict(pair.item.pair_id, order, row.verdict))
            prompt_tokens += row.prompt_tokens
            completion_tokens += row.completion_tokens
    return RunReport(
        spec=spec, prompt=prompt, pairs=reports,
        aggregation=aggregate(verdicts, bootstrap_iterations=bootstrap_iterations),
        pending=pending, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
        cost_usd=cost_usd(spec.judge_model, prompt_tokens, completion_tokens, load_settings().prices),
        fingerprint=inputs_fingerprint(pairs, template),
        evidence=quote_report(spec, judged, stored, leave_out_flagged) if profile.shows_document else None,
    )


def flagged(row: LLMJudgment) -> bool:
    return flag(row) is not None


def flag(row: LLMJudgment) -> str | None:
    """Why a judgment is flagged (app.core.evidence.flag_of), or None; one without a verdict is not."""
    return flag_of((row.evidence or {}).get("quotes", [])) if row.verdict is not None else None


def quote_report(spec: RunSpec, judged: list[tuple[JudgePair, LLMJudgment]], stored: dict,
                 leave_out_flagged: bool) -> dict:
    """Shares and flags over the judgments, and how unsupported quotes fall on each system's answers."""
    all_flagged = sum(flagged(row) for row in stored.values())
    with_verdict = [(pair, row) for pair, row in judged if row.verdict is not None]
    judgments = [Rated("judgment", len(p.item.system_answer) + len(p.item.baseline_answer),
                       tuple((row.evidence or {}).get("quotes", []))) for p, row in with_verdict]
    answers = []
    for pair, row in with_verdict:
        quotes = (row.evidence or {}).get("quotes", [])
        for side, name, text in (("system", spec.system, pair.item.system_answer),
                                 ("baseline", spec.baseline, pair.item.baseline_answer)):
            answers.append(Rated(name, len(text), tuple(q for q in quotes if q.get("side") == side)))
    report = summarise(judgments)
    by_answer = summarise(answers)
    return {**report, "leave_out_flagged": leave_out_flagged, "flagged": all_flagged,
            "left_out": all_flagged if leave_out_flagged else 0,
            "per_system": by_answer["per_system"], "by_length": by_answer["by_length"]}


def judge_jobs(limit: int | None = None) -> list[Job]:
    """Return judge jobs, newest first."""
    stmt = select(Job).where(Job.kind == JOB_KIND).order_by(Job.id.desc())
    return list(db.session.scalars(stmt if limit is None else stmt.limit(limit)))


def known_runs() -> dict[RunSpec, Job]:
    """Return each distinct run spec with its newest job."""
    runs: dict[RunSpec, Job] = {}
    for job in judge_jobs():
        try:
            spec = RunSpec.from_params(job.params or {})
        except (KeyError, TypeError, ValueError):
            continue
        runs.setdefault(spec, job)
    return runs


def win_rates(system_names: Iterable[str] | None = None, baseline: str | None = None) -> dict[str, list[dict]]:
    """Return {system: [win-rate entry per baseline, judge model and prompt version]}.

    Each entry has judge_model, profile (and its label), prompt_version, win_rate (L-Eval), win_rate_fastchat,
    ci_low, ci_high (bootstrap 95%), errors, inconsistent, consistency and n_pairs, plus
    wins/losses/ties, pending, baseline, scope, prompt_id, temperature and job_id; an evidence run's entry also
    has flagged (its flagged judgments, counted in the win rate) and flagged_note, the words every page shows
    beside its win rate ("flagged judgments included"); None for the other profiles.
    Runs with no verdict yet are left out. The default baseline's entries come first.
    """
    wanted = None if system_names is None else set(system_names)
    preferred = default_baseline()
    table: dict[str, list[dict]] = {}
    for spec, job in known_runs().items():
        if (wanted is not None and spec.system not in wanted) or (baseline and spec.baseline != baseline):
            continue
        try:
            report = run_report(spec)
        except PairError:  # a system or prompt was deleted since
            continue
        if report.judged == 0:
            continue
        table.setdefault(spec.system, []).append(_entry(report, job))
    for entries in table.values():
        entries.sort(key=lambda e: (e["baseline"] != preferred, e["baseline"], e["judge_model"], e["profile"],
                                    -e["prompt_version"], e["scope"], e["temperature"]))
    return table


def _entry(report: RunReport, job: Job) -> dict:
    agg, spec = report.aggregation, report.spec
    return {
        "judge_model": spec.judge_model,
        "profile": spec.profile,
        "profile_label": spec.judge_profile.label,
        "prompt_version": report.prompt.version,
        "prompt_name": report.prompt.name,
        "prompt_id": spec.prompt_id,
        "baseline": spec.baseline,
        "scope": spec.scope,
        "temperature": spec.temperature,
        "win_rate": agg.win_rate,
        "win_rate_fastchat": agg.win_rate_fastchat,
        "ci_low": agg.ci_low,
        "ci_high": agg.ci_high,
        "wins": agg.wins,
        "losses": agg.losses,
        "ties": agg.ties,
        "errors": agg.errors,
        "inconsistent": agg.inconsistent,
        "consistency": agg.consistency,
        "n_pairs": len(report.pairs),
        "pending": report.pending,
        "job_id": job.id,
        # An evidence run's win rate counts its flagged judgments (quotes all unsupported), and says so.
        "flagged": report.evidence["flagged"] if report.evidence is not None else None,
        "flagged_note": flagged_scope("judgments", left_out=False) if report.evidence is not None else None,
    }


def task_win_rates(spec: RunSpec) -> dict[str, tuple[float | None, int]]:
    """{task: (L-Eval win %, judged verdicts)} of one run, from its stored judgments."""
    report = run_report(spec, bootstrap_iterations=0)
    by_task: dict[str, list[_Verdict]] = {}
    for pair_report in report.pairs:
        for order, row in pair_report.rows.items():
            if row is not None:
                by_task.setdefault(pair_report.pair.task, []).append(
                    _Verdict(pair_report.pair.item.pair_id, order, row.verdict))
    rates = {}
    for task, verdicts in by_task.items():
        counts = count_outcomes(verdicts)
        rates[task] = (leval_win_rate(verdicts), counts["win"] + counts["loss"] + counts["tie"])
    return rates


def judgment_quotes(spec: RunSpec, question_id: int, order: str) -> dict[str, Any] | None:
    """One stored evidence judgment of the run with its document and its quotes as spans of the shown text."""
    if not spec.judge_profile.shows_document or order not in ORDERS:
        return None
    report = run_report(spec, bootstrap_iterations=0)
    found = next((pr for pr in report.pairs if pr.pair.question_id == question_id), None)
    row = found.rows.get(order) if found else None
    if row is None or row.evidence is None:
        return None
    document = db.session.get(Document, row.evidence["document_id"])
    quotes = row.evidence.get("quotes", [])
    names = {"A": spec.system if order == "AB" else spec.baseline, "B": spec.baseline if order == "AB" else spec.system}
    return {"pair": found.pair, "row": row, "order": order, "document": document, "quotes": quotes,
            "flagged": flag(row), "flag_reason": FLAGS.get(flag(row)), "answer_names": names,
            "spans": shown_spans(document.text, quotes)}
