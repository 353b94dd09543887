"""The LLM rater's results in a study: its ratings of the answers the study shows, its column beside the
metrics, and its agreement with the annotators. A rater is never a human: nothing here writes a Score."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from app.core.evidence import PROFILE as EVIDENCE
from app.core.evidence import is_flagged
from app.extensions import db
from app.models import Job, RaterPrompt, Study
from app.services.rater.db_cache import rows_by_key
from app.services.rater.job import JOB_KIND, RaterRunError, RaterSpec, prepare


@dataclass
class StudyRatings:
    spec: RaterSpec
    job_id: int
    prompt: RaterPrompt
    scores: dict[tuple[str, str, str], int]  # item key -> 1..5
    answers: int
    errors: int
    flagged: frozenset = frozenset()  # the evidence profile: item keys whose quotes are all unsupported

    @property
    def label(self) -> str:
        profile = " · evidence" if self.spec.profile == EVIDENCE else ""
        return f"LLM rater {self.spec.rater_model} (prompt v{self.prompt.version}{profile})"

    def without_flagged(self) -> dict[tuple[str, str, str], int]:
        return {key: score for key, score in self.scores.items() if key not in self.flagged}

    @property
    def key(self) -> str:
        return f"rater:{self.spec.rater_model}|{self.prompt.id}|{self.spec.temperature:g}"

    def system_means(self) -> dict[str, float]:
        sums: dict[str, list[int]] = {}
        for (system, _, _), score in self.scores.items():
            sums.setdefault(system, []).append(score)
        return {system: sum(values) / len(values) for system, values in sorted(sums.items())}


def rater_runs(study_id: int) -> list[tuple[RaterSpec, Job]]:
    """Each distinct rater run of the study with its newest job, newest first."""
    runs: dict[RaterSpec, Job] = {}
    for job in db.session.scalars(select(Job).where(Job.kind == JOB_KIND).order_by(Job.id.desc())):
        try:
            spec = RaterSpec.from_params(job.params or {})
        except (KeyError, TypeError, ValueError):
            continue
        if spec.study_id == study_id:
            runs.setdefault(spec, job)
    return list(runs.items())


def study_ratings(spec: RaterSpec, job_id: int) -> StudyRatings | None:
    """The stored ratings of the answers the study shows now (None when the run cannot be prepared)."""
    try:
        run = prepare(spec)
    except RaterRunError:
        return None
    keys = {item.key: run.key(item) for item in run.items}
    rows = rows_by_key(keys.values())
    scores, errors, flagged = {}, 0, set()
    for item_key, cache_key in keys.items():
        row = rows.get(cache_key)
        if row is not None and row.score is not None:
            scores[item_key] = row.score
            if is_flagged((row.evidence or {}).get("quotes", [])):
                flagged.add(item_key)
        elif row is not None:
            errors += 1
    return StudyRatings(spec, job_id, run.prompt, scores, len(run.items), errors, frozenset(flagged))


@dataclass
class RaterRun:
    """One rater job for its run page: what it was asked, and the ratings stored for the study's answers now."""

    job: Job
    spec: RaterSpec
    study: Study | None
    prompt: RaterPrompt | None
    ratings: StudyRatings | None  # None when the study's answers cannot be prepared (the study is gone)
    evidence: Any = None  # an evidence-profile run's quote report (services/rater/evidence.EvidenceRun)


def rater_run(job_id: int, *, leave_out_flagged: bool = False) -> RaterRun | None:
    """The rater job `job_id` (None for no job, or a job of another kind); an evidence-profile run comes
    with its quote report, flagged ratings left out of it when asked."""
    job = db.session.get(Job, job_id)
    if job is None or job.kind != JOB_KIND:
        return None
    try:
        spec = RaterSpec.from_params(job.params or {})
    except (KeyError, TypeError, ValueError):
        return None
    evidence = None
    if spec.evidence is not None:
        from app.services.rater.evidence import NotAnEvidenceRun, evidence_run

        try:
            evidence = evidence_run(job.id, leave_out_flagged=leave_out_flagged)
        except NotAnEvidenceRun:  # its study is gone: the page says so
            evidence = None
    return RaterRun(job, spec, db.session.get(Study, spec.study_id), db.session.get(RaterPrompt, spec.prompt_id),
                    study_ratings(spec, job.id), evidence)


def all_study_ratings(study_id: int) -> list[StudyRatings]:
    """The ratings of every rater run of the study that rated at least one shown answer."""
    found = [study_ratings(spec, job.id) for spec, job in rater_runs(study_id)]
    return [ratings for ratings in found if ratings is not None and ratings.scores]


def rater_columns(study_id: int) -> list[dict[str, Any]]:
    """{key, label, values: {system: mean rating}} per rater run of the study: ranked like any metric."""
    return [{"key": r.key, "label": r.label, "values": r.system_means(), "job_id": r.job_id}
            for r in all_study_ratings(study_id)]


def rater_agreement(study_id: int, records: list[dict]) -> list[dict[str, Any]]:
    """Per rater run: α against the annotators, item by item, beside the human leave-one-out ceiling."""
    from app.core.stats.rater_agreement import rater_agreement as agreement

    results = []
    for ratings in all_study_ratings(study_id):
        result = agreement(records, ratings.scores).to_dict()
        row = {"label": ratings.label, "job_id": ratings.job_id, "rated": len(ratings.scores),
               "answers": ratings.answers, "errors": ratings.errors, "profile": ratings.spec.profile, **result}
        if ratings.spec.profile == EVIDENCE:
            # The same α without the ratings whose quotes are all unsupported: does it move?
            kept = ratings.without_flagged()
            row.update(flagged=len(ratings.flagged),
                       llm_alpha_unflagged=agreement(records, kept).llm_alpha if kept else None)
        results.append(row)
    return results
