"""Automatic metrics over stored predictions: scoring jobs, aggregates and the leaderboard's queries."""
from app.services.metrics.compute import HUMAN_EVAL_BUCKET, OVERALL, score_system
from app.services.metrics.job import (
    KIND,
    queue_unscored,
    score_unscored_systems,
    submit_for_systems,
    submit_metrics_job,
)

__all__ = [
    "OVERALL", "HUMAN_EVAL_BUCKET", "KIND", "queue_unscored", "score_system", "score_unscored_systems", "submit_for_systems",
    "submit_metrics_job",
]
