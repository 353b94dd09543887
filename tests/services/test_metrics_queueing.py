"""Every way predictions arrive queues their metrics (first-hour finding 2), and one action scores what is left."""
from __future__ import annotations

import json

from sqlalchemy import select

from app.extensions import db
from app.models import Job, Prediction, System
from tests.support.shared import require_human_eval


def metric_jobs(app) -> dict[str, Job]:
    with app.app_context():
        rows = db.session.scalars(select(Job).where(Job.kind == "metrics")).all()
        return {job.params["system"]: job for job in rows}


def test_import_leval_queues_the_metrics_of_every_system_it_brings(app, runner):
    human_eval = require_human_eval()
    result = runner.invoke(args=["import-leval", str(human_eval), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    with app.app_context():
        systems = set(db.session.scalars(select(System.name)))
    jobs = metric_jobs(app)
    assert len(systems) == 7 and set(jobs) == systems
    assert sorted(report["metrics_jobs"]) == sorted(job.id for job in jobs.values())
    assert {job.status for job in jobs.values()} == {"queued"}
    again = runner.invoke(args=["import-leval", str(human_eval), "--json"])  # nothing new: nothing queued twice
    assert json.loads(again.output)["metrics_jobs"] == [] and metric_jobs(app).keys() == jobs.keys()


def test_the_text_report_says_where_the_metrics_run(app, runner):
    human_eval = require_human_eval()
    output = runner.invoke(args=["import-leval", str(human_eval)]).output
    assert "Metrics: 7 job(s) queued" in output and "python run.py score-metrics" in output


def test_score_everything_not_scored_queues_only_what_is_left(demo, client, auth, tmp_path):
    """The demo's systems have no metrics job yet (load_demo imports only); a second click queues nothing more."""
    with demo.app_context():
        with_predictions = set(db.session.scalars(
            select(System.name).where(System.id.in_(select(Prediction.system_id)))))
    assert with_predictions and not metric_jobs(demo)
    auth.login("researcher")
    assert 'data-field="score-unscored"' in client.get("/predictions").get_data(as_text=True)
    first = client.post("/predictions/score-unscored", data={"csrf_token": auth.token()}, follow_redirects=True)
    assert f"Computing metrics for {len(with_predictions)} system(s) not scored yet." in first.get_data(as_text=True)
    assert set(metric_jobs(demo)) == with_predictions
    second = client.post("/predictions/score-unscored", data={"csrf_token": auth.token()}, follow_redirects=True)
    assert "Every system&#39;s current predictions are scored or being scored." in second.get_data(as_text=True)
    assert len(metric_jobs(demo)) == len(with_predictions)
