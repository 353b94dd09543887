"""Metric jobs: a real worker scores stored predictions exactly as app.core.metrics does; kill, cancel, resume, duplicates."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from app.extensions import db
from app.core.metrics import PROFILES, evaluate_file, score_item
from app.models import Job, MetricAggregate, MetricResult, Prediction, Question, System
from app.services.demo import DEMO_PATH
from app.services.importers import import_path
from app.services.jobs import DuplicateJob, cancel_job, resume_job
from app.services.metrics import score_system, score_unscored_systems, submit_metrics_job
from tests.conftest import REPO_ROOT
from tests.support.jobs import wait_for_job as wait_for
from tests.support.predictions import demo_file

PARITY = [  # L-Eval's published values, computed with its own scripts (see tests/test_metrics.py)
    ("LEval-data/Closed-ended-tasks/coursera.jsonl", "exam_eval/gpt4-32k/coursera", "exact_match", 75.5814),
    ("LEval-data/Closed-ended-tasks/quality.jsonl", "exam_eval/Claude-100k/quality", "exact_match", 73.7624),
    ("LEval-data/Closed-ended-tasks/topic_retrieval_longchat.jsonl", "exam_eval/Claude-100k/topic_retrieval_longchat",
     "exact_match", 70.6667),
    ("LEval-data/Open-ended-tasks/gov_report_summ.jsonl", "ngram_eval/turbo-16k-0613/gov_report_summ", "rougeL", 23.636),
    ("LEval-data/Open-ended-tasks/meeting_summ.jsonl", "ngram_eval/llama2-13b-chat-4k/meeting_summ", "rougeL", 19.6517),
    ("LEval-data/Open-ended-tasks/legal_contract_qa.jsonl", "ngram_eval/vicuna-13b-16k/legal_contract_qa", "f1", 18.1696),
]


def system_id(app, name: str) -> int:
    with app.app_context():
        return db.session.scalar(select(System.id).where(System.name == name))


def submit(app, name: str, item_delay: float = 0.0) -> int:
    with app.app_context():
        return submit_metrics_job(db.session.get(System, system_id(app, name)), item_delay=item_delay).id


def done(app, job_id: int, timeout: float = 60.0) -> Job:
    job = wait_for(app, job_id, lambda j: j.status in ("done", "failed", "cancelled"), timeout, "an end")
    assert job.status == "done", job.error
    return job


def aggregates(app, name: str) -> dict:
    with app.app_context():
        rows = db.session.scalars(select(MetricAggregate).where(MetricAggregate.system_id == system_id(app, name)))
        return {(a.task, a.metric, a.profile): (a.value, a.n) for a in rows}


def results(app, name: str) -> dict:
    with app.app_context():
        rows = db.session.scalars(select(MetricResult).where(MetricResult.system_id == system_id(app, name)))
        return {(r.prediction_id, r.metric, r.profile): (r.id, r.value, r.computed_at, r.job_id) for r in rows}


def expected_from_files(name: str, profile: str) -> dict:
    """What app.core.metrics gives on the demo files themselves, keyed like the stored aggregates."""
    files = {"quality": DEMO_PATH / f"exam_eval/{name}/quality.pred.jsonl",
             "scientific_qa": DEMO_PATH / f"ngram_eval/{name}/scientific_qa.pred.jsonl",
             "human_eval": DEMO_PATH / f"human_eval/{name}.pred.jsonl"}
    expected = {}
    for bucket, path in files.items():
        result = evaluate_file(path, profile=profile, refuse=False)
        # Human-eval rows count in no task file: their bucket aggregates the analysis values.
        metrics = result["analysis"]["metrics"] if bucket == "human_eval" else result["metrics"]
        for metric, value in metrics.items():
            expected[(bucket, metric, profile)] = value
    return expected


def assert_matches_app_metrics(app, name: str) -> None:
    stored = aggregates(app, name)
    for profile in PROFILES:
        for key, value in expected_from_files(name, profile).items():
            assert stored[key][0] == pytest.approx(value, abs=1e-9), key
        assert stored[("*", "exact_match", profile)][0] == stored[("quality", "exact_match", profile)][0]
        assert stored[("*", "f1", profile)][0] == stored[("scientific_qa", "f1", profile)][0]  # human-eval apart
        assert stored[("*", "avg_words", profile)][1] == 22
    with app.app_context():
        rows = db.session.execute(
            select(Prediction, Question).join(Question).where(Prediction.system_id == system_id(app, name))
        ).all()
        per_item = results(app, name)
        for prediction, question in rows:
            for profile in PROFILES:
                direct = score_item(question.document.task, prediction.evaluation, prediction.text,
                                    [question.reference], profile=profile, index=prediction.line_no - 1)
                stored_item = {m: v[1] for (pid, m, p), v in per_item.items() if pid == prediction.id and p == profile}
                assert stored_item == direct


def test_worker_runs_the_metrics_job_to_completion(demo, workers):
    job = done(demo, submit(demo, "terse-13b"))
    assert (job.done, job.total, job.attempts) == (22, 22, 1)
    assert job.result["system"] == "terse-13b" and job.result["tasks"] == ["human_eval", "quality", "scientific_qa"]
    assert job.result["resumed_from"] == 0
    assert_matches_app_metrics(demo, "terse-13b")
    assert {v[3] for v in results(demo, "terse-13b").values()} == {job.id}


def test_killed_worker_process_resumes_after_restart_with_identical_results(demo, tmp_path):
    job_id = submit(demo, "verbose-7b", item_delay=0.25)  # slow enough to kill its worker mid-way
    env = {**os.environ, "LEVAL_INSTANCE": demo.instance_path, "LEVAL_WORKERS": "1", "PYTHONUNBUFFERED": "1"}
    log = (tmp_path / "worker.log").open("w")
    slow = subprocess.Popen([sys.executable, "run.py", "worker"], cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT,
                            env=env)
    try:
        job = wait_for(demo, job_id, lambda j: j.status == "running" and j.done >= 4, 60, "some progress")
        os.kill(slow.pid, signal.SIGKILL)
        slow.wait(timeout=10)
    finally:
        if slow.poll() is None:
            slow.kill()
    with demo.app_context():
        job = db.session.get(Job, job_id)
        assert job.status == "running" and 0 < job.done < job.total, "killed mid-job"
        killed_at = job.done
    before = results(demo, "verbose-7b")
    finished = {pid for (pid, _, _) in before}
    assert 0 < len(finished) < 22
    restarted = subprocess.Popen([sys.executable, "run.py", "worker"], cwd=REPO_ROOT, stdout=log,
                                 stderr=subprocess.STDOUT, env=env)
    try:
        job = done(demo, job_id, timeout=90)
    finally:
        restarted.send_signal(signal.SIGINT)
        try:
            restarted.wait(timeout=15)
        except subprocess.TimeoutExpired:
            restarted.kill()
        log.close()
    assert job.attempts == 2 and job.done == 22 and job.result["resumed_from"] == len(finished) >= killed_at
    after = results(demo, "verbose-7b")
    for key, row in before.items():
        assert after[key] == row, "an item finished before the kill was computed again"
    assert_matches_app_metrics(demo, "verbose-7b")
    resumed = aggregates(demo, "verbose-7b")
    with demo.app_context():  # an uninterrupted run over the same predictions gives the same numbers
        score_system(system_id(demo, "verbose-7b"))
    assert aggregates(demo, "verbose-7b") == resumed
    assert {k: v[1] for k, v in results(demo, "verbose-7b").items()} == {k: v[1] for k, v in after.items()}


def test_cancel_then_resume_finishes_only_the_remaining_items(demo, workers):
    job_id = submit(demo, "shaky-3b", item_delay=0.1)
    wait_for(demo, job_id, lambda j: j.status == "running" and j.done > 0, 30, "progress")
    with demo.app_context():
        cancel_job(db.session.get(Job, job_id))
    job = wait_for(demo, job_id, lambda j: j.status == "cancelled", 30, "cancelled")
    assert 0 < job.done < job.total
    before = results(demo, "shaky-3b")
    assert aggregates(demo, "shaky-3b") == {}, "a cancelled job stores no aggregates"
    with demo.app_context():
        resume_job(db.session.get(Job, job_id))
    job = done(demo, job_id)
    assert job.attempts == 2 and job.result["resumed_from"] == len({pid for pid, _, _ in before})
    after = results(demo, "shaky-3b")
    assert all(after[key] == row for key, row in before.items())
    assert_matches_app_metrics(demo, "shaky-3b")


def test_same_inputs_are_refused_and_new_files_make_a_new_job(demo, workers):
    job_id = submit(demo, "balanced-34b")
    with demo.app_context(), pytest.raises(DuplicateJob):
        submit_metrics_job(db.session.get(System, system_id(demo, "balanced-34b")))
    done(demo, job_id)
    with demo.app_context(), pytest.raises(DuplicateJob, match="already done"):
        submit_metrics_job(db.session.get(System, system_id(demo, "balanced-34b")))
    extra = Path(demo.instance_path) / "more" / "balanced-34b" / "quality.pred.jsonl"
    extra.parent.mkdir(parents=True)
    extra.write_bytes(demo_file("exam_eval/balanced-34b/quality.pred.jsonl", "balanced-34b",
                                change=lambda i, text: "B" if i == 0 else text))
    with demo.app_context():
        assert not import_path(extra.parent.parent).failed
        second = submit_metrics_job(db.session.get(System, system_id(demo, "balanced-34b")))
        assert second.id != job_id and len(second.params["files"]) == 4


def test_demo_systems_are_scored_on_first_start(demo):
    with demo.app_context():
        assert score_unscored_systems() == ["balanced-34b", "heron-13b-128k", "heron-13b-128k-no-cfi", "orca-7b-32k",
                                            "shaky-3b", "terse-13b", "verbose-7b", "wren-3b-8k"]
        assert score_unscored_systems() == []
    for name in ("balanced-34b", "terse-13b"):
        assert_matches_app_metrics(demo, name)


def test_score_metrics_command(demo, runner):
    result = runner.invoke(args=["score-metrics", "--system", "terse-13b", "--profile", "fixed"])
    assert result.exit_code == 0, result.output
    assert "terse-13b: 22 predictions scored (fixed); tasks: human_eval, quality, scientific_qa" in result.output
    assert {profile for (_, _, profile) in aggregates(demo, "terse-13b")} == {"fixed"}
    result = runner.invoke(args=["score-metrics", "--system", "nobody"])
    assert result.exit_code != 0 and "no such system: nobody" in result.output


def test_stored_published_predictions_reproduce_leval(app, shared_leval, tmp_path):
    """The database path (import, match, score, aggregate) gives L-Eval's published numbers."""
    for task_file, prediction, _, _ in PARITY:
        system, task = prediction.split("/")[1:]
        target = tmp_path / "set" / system / f"{task}.pred.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((shared_leval / "Predictions" / f"{prediction}.pred.jsonl").read_bytes())
        tasks = tmp_path / "tasks"
        tasks.mkdir(exist_ok=True)
        (tasks / Path(task_file).name).write_bytes((shared_leval / task_file).read_bytes())
    with app.app_context():
        assert not import_path(tmp_path / "tasks").failed
        report = import_path(tmp_path / "set")
        assert not report.failed and report.unmatched == 0
        for _, prediction, metric, expected in PARITY:
            system, task = prediction.split("/")[1:]
            sid = db.session.scalar(select(System.id).where(System.name == system))
            score_system(sid, profiles=("official",))
            value = db.session.scalar(select(MetricAggregate.value).where(
                MetricAggregate.system_id == sid, MetricAggregate.task == task, MetricAggregate.metric == metric,
                MetricAggregate.profile == "official"))
            assert value == pytest.approx(expected, abs=0.01), prediction
