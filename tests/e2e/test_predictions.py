"""In a browser: upload predictions, check the preview, confirm, watch the metrics job finish, open the leaderboard."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from playwright.sync_api import expect

from tests.conftest import REPO_ROOT
from tests.e2e.conftest import JOB_PATIENCE_MS, screenshot, server_env, sign_in, start_server, stop_server
from tests.support.live import instance_database
from tests.support.predictions import demo_file, make_zip

pytestmark = pytest.mark.e2e


@pytest.fixture
def slow_server(tmp_path):
    # No embedded workers: the test slows the upload's job down, then starts a worker for it.
    server = start_server(tmp_path / "instance", {"LEVAL_WORKERS": "0"})
    yield server
    stop_server(server)


def run_slowly(server, job_id: str, item_delay: float) -> subprocess.Popen:
    """Give a queued job a per-item delay (a job parameter), so the bar is seen moving; start a worker."""
    with instance_database(server.instance) as connection:
        (params,) = connection.execute("SELECT params FROM jobs WHERE id = ?", (int(job_id),)).one()
        params = {**(json.loads(params) if isinstance(params, str) else params), "item_delay": item_delay}
        connection.execute("UPDATE jobs SET params = ? WHERE id = ?", (json.dumps(params), int(job_id)))
    return subprocess.Popen([sys.executable, "run.py", "worker", "--workers", "1"], cwd=REPO_ROOT,
                            env=server_env(server.instance), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_upload_preview_confirm_progress_and_leaderboard(slow_server, page, tmp_path):
    single = tmp_path / "e2e-model.pred.jsonl"
    single.write_bytes(demo_file("human_eval/terse-13b.pred.jsonl", "e2e-model"))
    archive = tmp_path / "more.zip"
    archive.write_bytes(make_zip({
        "e2e-model/quality.pred.jsonl": demo_file("exam_eval/verbose-7b/quality.pred.jsonl", "e2e-model"),
        "../escape.pred.jsonl": b"{}",
    }))
    bad = tmp_path / "broken.pred.jsonl"
    bad.write_text('{"query": "q", "gt": "g", "x_pred": "p", "evaluation": "f1"}\n{"query": \n')

    sign_in(page, slow_server.url, slow_server.admin_user, slow_server.admin_password)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Predictions").click()
    page.get_by_label("Prediction, task or reference files").set_input_files([str(single), str(bad), str(archive)])
    page.get_by_role("button", name="Upload and preview").click()

    page.get_by_role("heading", name="Check the upload").wait_for()
    good = page.locator('#upload-summary tr[data-file="e2e-model.pred.jsonl"]')
    assert good.locator('[data-field="rows"]').inner_text() == "10"
    assert good.locator('[data-field="unmatched"]').inner_text() == "0"
    assert good.locator('[data-field="new"]').inner_text() == "10"
    assert good.locator('[data-field="outcome"]').inner_text() == "adds 10 new"
    details = page.locator('details[data-file="e2e-model.pred.jsonl"]')
    assert not details.locator('[data-field="evaluations"]').is_visible()  # collapsed until opened
    details.locator("summary").click()
    assert "human × 10" in details.locator('[data-field="evaluations"]').inner_text()
    assert details.locator('[data-field="matched"]').inner_text() == "10"
    broken = page.locator('#upload-errors [data-file="broken.pred.jsonl"]')
    assert "line 2" in broken.locator('[data-field="errors"]').inner_text()
    assert "unsafe path" in page.get_by_role("heading", name="Refused").locator("..").inner_text()
    # The summary and Confirm first, then the files (each with its details), then the errors.
    tops = [page.locator(selector).bounding_box()["y"] for selector in
            ("#upload-decision", "#upload-summary", "#upload-errors")]
    assert tops == sorted(tops), tops
    screenshot(page, "predictions-preview")

    page.get_by_role("button", name="Confirm: import 1 file").click()
    row = page.locator("tr[data-job-id]").first
    row.wait_for()
    assert row.get_attribute("data-status") == "queued"
    worker = run_slowly(slow_server, row.get_attribute("data-job-id"), item_delay=0.4)
    try:
        # The page polls the jobs API and updates the row in place (no reload).
        page.locator('tr[data-job-id][data-status="running"]').wait_for(timeout=JOB_PATIENCE_MS)
        screenshot(page, "predictions-job-running")
        page.locator('tr[data-job-id][data-status="done"]').wait_for(timeout=JOB_PATIENCE_MS)
    finally:
        worker.terminate()
        worker.wait(timeout=15)
    assert row.locator('[data-field="done"]').inner_text() == row.locator('[data-field="total"]').inner_text() == "10"
    assert row.locator('[data-field="bar"]').evaluate("el => el.style.width") == "100%"
    # The system's metric status follows the job, without a reload.
    status = page.locator('table.systems tr[data-system="e2e-model"] [data-field="metrics-status"]')
    expect(status).to_have_text("scored")
    expect(page.locator('table.systems tr[data-system="e2e-model"] [data-field="score-button"]')).to_have_text("Rescore")
    assert row.locator('[data-field="system"]').inner_text() == "e2e-model"
    assert row.locator('[data-field="duration"]').inner_text().endswith("s")
    screenshot(page, "predictions-job-done")

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Leaderboard").click()
    system_row = page.locator('tr[data-system="e2e-model"]')
    system_row.wait_for()
    assert system_row.locator('[data-metric="avg_words"] a').inner_text() != ""
    assert page.locator('tr[data-system="terse-13b"] [data-metric="exact_match"] a').inner_text() == "87.50"
    screenshot(page, "leaderboard")

    page.get_by_role("link", name="fixed", exact=True).click()
    assert page.locator('[data-field="profile"]').inner_text() == "fixed"
    page.locator('tr[data-system="terse-13b"] [data-metric="exact_match"] a').click()
    page.get_by_role("heading", name="terse-13b · All tasks · Exam (exact match)").wait_for()
    assert page.locator('[data-field="value"]').count() == 8
    assert page.locator('[data-field="prediction"]').first.is_visible()
    screenshot(page, "leaderboard-drill-down")
