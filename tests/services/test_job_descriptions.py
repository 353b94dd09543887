"""Each job kind is described in words from what its service submitted and its handler returned."""
from __future__ import annotations

import pytest

from app.models import Job
from app.services.jobs.describe import describe_job

pytestmark = pytest.mark.database_free


def job(kind: str, status: str, params: dict, result: dict | None = None, total: int = 0) -> Job:
    return Job(kind=kind, status=status, params=params, result=result, total=total, done=0)


def test_a_metrics_job_of_both_benchmarks():
    params = {"system": "kite", "files": ["a" * 64, "b" * 64, "c" * 64], "profiles": ["official", "fixed"]}
    assert describe_job(job("metrics", "running", params, total=1_250)) == \
        "Scores 1,250 predictions of kite (3 files) under the official and fixed profiles."
    result = {"predictions": 1_250, "tasks": ["quality", "tpo"], "lveval_rows": 50, "lveval_cells": 2, "unscored": 1}
    assert describe_job(job("metrics", "done", params, result)) == (
        "Scored 1,250 predictions of kite (3 files) under the official and fixed profiles: 1,200 L-Eval predictions "
        "in 2 tasks; 50 LV-Eval predictions in 2 cells. Left unscored (no known evaluation): 1 prediction.")


def test_the_llm_jobs():
    judge = {"system": "kite", "baseline": "owl", "judge_model": "gpt-4o", "pairs": 85}
    assert describe_job(job("judge", "queued", judge)) == \
        "Judges kite against owl with the judge gpt-4o on 85 questions, each in both orders."
    assert describe_job(job("judge", "done", judge, {"judgments": 170, "wins": 40, "losses": 30, "ties": 15,
                                                     "api_calls": 170})) == \
        "Judged kite against owl with the judge gpt-4o on 85 questions: 170 judgments (40 wins, 30 losses, 15 ties), " \
        "170 API calls."
    rater = {"study_id": 3, "rater_model": "m", "answers": 12}
    assert describe_job(job("rater", "done", rater, {"rated": 11, "errors": 1, "api_calls": 12})) == \
        "Rated 12 answers of study #3 with m: 11 answers rated, 1 error, 12 API calls."
    generate = {"question_set": "human-eval", "model": "m", "system_name": "m-16k"}
    assert describe_job(job("generate", "running", generate)) == \
        "Generates answers to the question set human-eval with m, stored as system m-16k."
    assert describe_job(job("unknown-kind", "done", {})) == ""
