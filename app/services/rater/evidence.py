"""An `evidence` rater run's report: how its quotes fared against the documents, and one rating's quotes in place.

Every number says whether the flagged ratings (all of their quotes unsupported, or one under the minimum)
were left out.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.evidence import PROFILE as EVIDENCE
from app.core.evidence import FLAGS, Rated, flag_of, summarise
from app.extensions import db
from app.models import Document, Job
from app.services.llm.evidence import shown_spans
from app.services.rater.db_cache import rows_by_key
from app.services.rater.job import (
    JOB_KIND,
    PreparedRating,
    RaterRunError,
    RaterSpec,
    prepare,
)


class NotAnEvidenceRun(LookupError):
    """The job is no rater run of the evidence profile (or is gone)."""


@dataclass
class EvidenceRun:
    job: Job
    run: PreparedRating
    summary: dict[str, Any]
    ratings: list[dict[str, Any]]  # one per rated answer: system, question, score, quotes, flagged (why)


def _prepared(job_id: int) -> tuple[Job, PreparedRating]:
    job = db.session.get(Job, job_id)
    if job is None or job.kind != JOB_KIND:
        raise NotAnEvidenceRun(job_id)
    try:
        spec = RaterSpec.from_params(job.params or {})
    except (KeyError, TypeError, ValueError):
        raise NotAnEvidenceRun(job_id) from None
    if spec.profile != EVIDENCE:
        raise NotAnEvidenceRun(job_id)
    try:
        return job, prepare(spec)
    except RaterRunError:
        raise NotAnEvidenceRun(job_id) from None


def evidence_run(job_id: int, *, leave_out_flagged: bool = False) -> EvidenceRun:
    """The run's stored ratings of the answers its study shows now, with the quote report."""
    job, run = _prepared(job_id)
    rows = rows_by_key(run.key(item) for item in run.items)
    decisions, ratings = [], []
    for item in run.items:
        row = rows.get(run.key(item))
        if row is None or row.score is None:
            continue
        quotes = tuple((row.evidence or {}).get("quotes", []))
        decisions.append(Rated(item.system, len(item.item.answer), quotes))
        ratings.append({"answer_id": item.answer_id, "system": item.system, "document_id": item.document_id,
                        "question_id": int(item.key[2]), "question": item.item.question, "score": row.score,
                        "quotes": quotes, "flagged": flag_of(quotes), "flag_reason": FLAGS.get(flag_of(quotes))})
    if leave_out_flagged:
        ratings = [rating for rating in ratings if not rating["flagged"]]
    return EvidenceRun(job, run, summarise(decisions, leave_out_flagged=leave_out_flagged), ratings)


def rating_quotes(job_id: int, answer_id: int) -> dict[str, Any]:
    """One rating of the run with its document: each quote's status, and where it sits in the shown text."""
    report = evidence_run(job_id)
    rating = next((r for r in report.ratings if r["answer_id"] == answer_id), None)
    if rating is None:
        raise NotAnEvidenceRun(job_id)
    item = next(i for i in report.run.items if i.answer_id == answer_id)
    document = db.session.get(Document, rating["document_id"])
    return {**rating, "job": report.job, "spec": report.run.spec, "answer": item.item.answer,
            "references": item.item.references, "document": document,
            "spans": shown_spans(document.text, rating["quotes"])}
