"""Automatic metrics over stored predictions: scoring jobs, aggregates and the leaderboard's queries."""
from app.services.metrics.compute import HUMAN_EVAL_BUCKET, OVERALL, score_system
from app.services.metrics.job import (
    KIND,
    score_unscored_systems,
    submit_for_systems,
    submit_metrics_job,
)

__all__ = [
    "OVERALL", "HUMAN_EVAL_BUCKET", "KIND", "score_system", "score_unscored_systems", "submit_for_systems",
    "submit_metrics_job",
]
