"""The pointwise LLM rater wired into the app: prompt versions, a study's items, the DB cache, jobs and reports.

`app.core.rater` stays pure; this package is the glue. It uses the judge's settings (endpoint, key,
prices) and its LLM-call layer, so the rater has the same client, cache, budget and concurrency.
"""
from app.services.rater.job import (
    JOB_KIND,
    RaterRunError,
    RaterSpec,
    dry_run,
    launch,
    rater_job,
)
from app.services.rater.prompts import (
    RaterPromptError,
    create_rater_version,
    current_rater_prompt,
    list_rater_prompts,
)
from app.services.rater.reports import (
    rater_agreement,
    rater_columns,
    rater_run,
    rater_runs,
    study_ratings,
)

__all__ = [
    "JOB_KIND", "RaterPromptError", "RaterRunError", "RaterSpec", "create_rater_version", "current_rater_prompt",
    "dry_run", "launch", "list_rater_prompts", "rater_agreement", "rater_columns", "rater_job", "rater_run", "rater_runs",
    "study_ratings",
]
