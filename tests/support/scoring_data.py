"""Generate human scores and metric values with a seeded RNG, straight into the app's database.

Tests, browser tests and benchmarks use it to stand in for annotators and
metric jobs; the values are random, but every computation on them is real.
"""
from __future__ import annotations

import string
from datetime import datetime, timedelta, timezone

import numpy as np
from sqlalchemy import delete, select

from app.extensions import db
from app.models import AnnotationRound, Answer, MetricResult, Question, Score, System, User
from app.services.accounts import create_user
from app.services.studies.lookup import require_study
from app.services.studies.membership import shown_answers

ANNOTATOR_PASSWORD = "annotator-pass-123"
METRIC_KEYS = ("f1", "rougeL", "keyword_f1")


def included_answers(study_id: int | None = None) -> list[tuple[int, str, int, str]]:
    """(answer id, system name, question id, answer sha256) of every answer the study shows."""
    study_id = require_study(study_id=study_id).id
    stmt = shown_answers(study_id, Answer.id, System.name, Question.id, Answer.sha256).order_by(Question.id, System.name)
    return [tuple(row) for row in db.session.execute(stmt)]  # type: ignore[misc]


def system_quality(systems: list[str]) -> dict[str, float]:
    """Give systems evenly spread true mean scores between 1.8 and 4.4, in name order."""
    ordered = sorted(set(systems))
    if len(ordered) == 1:
        return {ordered[0]: 3.0}
    return {name: 1.8 + 2.6 * i / (len(ordered) - 1) for i, name in enumerate(ordered)}


def generate_scores(annotators: list[str], seed: int = 0, *, coverage: float = 1.0, round_number: int = 1,
                    noise: float = 0.9, quality: dict[str, float] | None = None, study_id: int | None = None) -> int:
    """Score the answers a study shows (default: the only open study) for each annotator in one round.

    coverage < 1 leaves some answers unscored (an annotator who has not finished). Returns how many
    scores were added.
    """
    rng = np.random.default_rng(seed)
    study_id = require_study(study_id=study_id).id
    answers = included_answers(study_id)
    quality = system_quality([system for _, system, _, _ in answers]) if quality is None else quality
    by_question: dict[int, list[int]] = {}
    for answer_id, _, question_id, _ in answers:
        by_question.setdefault(question_id, []).append(answer_id)
    start = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
    added = 0
    for a, name in enumerate(annotators):
        user = db.session.scalars(select(User).where(User.username == name)).first()
        if user is None:
            user = create_user(name, ANNOTATOR_PASSWORD, "annotator")
        round_ = AnnotationRound(study_id=study_id, annotator_id=user.id, number=round_number, status="open")
        db.session.add(round_)
        db.session.flush()
        labels = {}
        for question_id, answer_ids in by_question.items():
            for position, answer_id in enumerate(rng.permutation(answer_ids)):
                labels[int(answer_id)] = string.ascii_uppercase[position]
        for index, (answer_id, system, _, sha) in enumerate(answers):
            if coverage < 1.0 and rng.random() > coverage:
                continue
            value = int(np.clip(round(quality[system] + rng.normal(0, noise)), 1, 5))
            moment = start + timedelta(days=a, seconds=37 * index)
            db.session.add(Score(
                round_id=round_.id, annotator_id=user.id, answer_id=answer_id, answer_sha256=sha, value=value,
                comment="" if rng.random() < 0.8 else f"note {index}: checked against the reference",
                answer_label=labels[answer_id], seconds_spent=round(float(rng.uniform(8, 120)), 3),
                created_at=moment, updated_at=moment + timedelta(seconds=5),
            ))
            added += 1
    db.session.commit()
    return added


def generate_metric_results(seed: int = 1, *, noise: float = 12.0, metrics: tuple[str, ...] = METRIC_KEYS,
                            quality: dict[str, float] | None = None, study_id: int | None = None) -> int:
    """Store per-answer metric values (0-100) that loosely follow system quality, for both profiles."""
    rng = np.random.default_rng(seed)
    study_id = require_study(study_id=study_id).id
    answers = db.session.execute(
        shown_answers(study_id, Answer.prediction_id, System.id, System.name, Question.id)
        .order_by(Question.id, System.name)
    ).all()
    quality = system_quality([name for _, _, name, _ in answers]) if quality is None else quality
    # Replace what a real metrics job may already have stored (the server scores the demo on first start).
    db.session.execute(delete(MetricResult).where(
        MetricResult.prediction_id.in_([a[0] for a in answers]), MetricResult.metric.in_(metrics)))
    added = 0
    for metric in metrics:
        for profile, shift in (("official", 0.0), ("fixed", 3.0)):
            for prediction_id, system_id, name, question_id in answers:
                value = float(np.clip(15 * quality[name] - 10 + shift + rng.normal(0, noise), 0, 100))
                db.session.add(MetricResult(prediction_id=prediction_id, system_id=system_id, question_id=question_id,
                                            metric=metric, profile=profile, value=value))
                added += 1
    db.session.commit()
    return added
