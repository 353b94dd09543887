"""The demo apart from real data in every read: services, counts, job summaries and the commands (issue 41).

The oracle is independent of the rule it checks: every row that exists before the first real import is
the demo's (the database held nothing else), and every row the import adds is real. So once real data
sits beside the demo, a read in the real view must return no row of the first set, and in the demo
view none of the second, table by table, whatever the table (a new table joins the check by itself).
"""
from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from app.extensions import db
from app.services import demo_scope
from app.services.metrics.job import score_unscored_systems
from tests.support.shared import require_human_eval

# Tables whose rows are not data of one side: accounts, settings, the queue, bookkeeping.
SIDELESS = {"users", "settings", "login_attempts", "api_tokens", "data_versions", "upload_batches",
            "generation_prompts", "judge_prompts", "rater_prompts"}


def _models():
    return {mapper.local_table.name: mapper.class_ for mapper in db.Model.registry.mappers
            if mapper.local_table.name not in SIDELESS and "id" in mapper.local_table.c
            and not mapper.local_table.name.startswith("queue_")}


def _ids(model, view: str | None) -> set[int]:
    demo_scope.enter(view)
    try:
        return set(db.session.scalars(select(model.id)))
    finally:
        demo_scope.enter(None)


@pytest.fixture
def both(demo, runner):
    """The README's path: the demo (scored) alone, then L-Eval's human-evaluation subset and a study of it."""
    with demo.app_context():
        score_unscored_systems()
        demo_rows = {name: _ids(model, None) for name, model in _models().items()}
    imported = runner.invoke(args=["import-leval", str(require_human_eval())])
    assert imported.exit_code == 0, imported.output
    for args in (["score-metrics"], ["study", "create", "Real study", "--annotators", "annotator", "--open"]):
        result = runner.invoke(args=args)
        assert result.exit_code == 0, result.output
    return demo, demo_rows, imported.output


def test_every_table_read_in_the_real_view_holds_no_demo_row_and_the_demo_view_no_real_one(both):
    app, demo_rows, _ = both
    with app.app_context():
        checked = 0
        for name, model in _models().items():
            every = _ids(model, None)
            real, demo = _ids(model, demo_scope.AUTO), _ids(model, demo_scope.DEMO_VIEW)
            assert not real & demo_rows[name], f"{name}: the real view reads demo rows"
            assert not demo - demo_rows[name], f"{name}: the demo view reads real rows"
            if name in {"documents", "questions", "references", "systems", "predictions", "studies",
                        "study_answers", "answers", "metric_aggregates", "metric_results"}:
                assert real and demo, f"{name}: a side reads nothing"
                assert real | demo == every, f"{name}: a row belongs to neither side"
            checked += 1
        assert checked >= 20


def test_the_import_queues_metrics_only_for_the_systems_it_brought(both):
    *_, output = both
    assert re.search(r"Metrics: 7 job\(s\) queued", output), output


def test_counts_leaderboard_lveval_and_jobs_of_the_real_view_leave_the_demo_out(both):
    from app.services.jobs.listing import JobFilters, list_jobs
    from app.services.lveval.tab import lveval_json, lveval_tab
    from app.services.metrics.leaderboard import leaderboard
    from app.services.summary import counts

    app, *_ = both
    with app.app_context():
        demo_scope.enter(demo_scope.AUTO)
        assert {k: counts()[k] for k in ("documents", "questions", "systems", "predictions")} == {
            "documents": 12, "questions": 85, "systems": 7, "predictions": 595}
        assert len(leaderboard("official")) == 7
        assert lveval_json("official") == [] and lveval_tab("official").systems == []  # the demo's LV-Eval is apart
        assert all(not job.is_demo for job in list_jobs(JobFilters(), 100))
        demo_scope.enter(demo_scope.DEMO_VIEW)
        assert counts()["systems"] == 8 and {row["system"] for row in lveval_json("official")}


def test_export_without_a_study_takes_the_only_open_real_one(both, runner, tmp_path):
    out = tmp_path / "scores.csv"
    result = runner.invoke(args=["export", "--format", "csv", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.exists()
