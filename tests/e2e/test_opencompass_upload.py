"""In a browser: a zip of OpenCompass's output folder, its preview (errors by file and key) and its import."""
from __future__ import annotations

import pytest

from tests.e2e.conftest import sign_in
from tests.support.opencompass import (
    folder_bytes,
    tiny_rows,
    write_dataset,
    write_tiny_task,
)
from tests.support.predictions import make_zip

pytestmark = pytest.mark.e2e


def test_opencompass_zip_preview_shows_errors_by_file_and_key_then_imports(live_server, page, tmp_path):
    imported = live_server.cli("import-leval", str(write_tiny_task(tmp_path / "tasks")))
    assert imported.returncode == 0, imported.stdout + imported.stderr
    out = tmp_path / "outputs"
    write_dataset(out, "oc-good", "LEval_quality", tiny_rows(), parts=2)
    rows = tiny_rows()
    rows[1]["gold"] = "D"
    write_dataset(out, "oc-bad", "LEval_quality", rows)
    archive = tmp_path / "opencompass.zip"
    archive.write_bytes(make_zip(folder_bytes(out)))

    sign_in(page, live_server.url, live_server.admin_user, live_server.admin_password)
    page.goto(live_server.url + "/predictions")
    page.get_by_label("Prediction, task or reference files").set_input_files([str(archive)])
    page.get_by_role("button", name="Upload and preview").click()
    page.get_by_role("heading", name="Check the upload").wait_for()

    part = page.locator('#upload-summary tr[data-file="predictions/oc-good/LEval_quality_0.json"]')
    assert part.locator('[data-field="system"]').inner_text() == "oc-good"
    assert part.locator('[data-field="outcome"]').inner_text() == "adds 2 new"
    bad = page.locator('#upload-summary tr[data-file="predictions/oc-bad/LEval_quality.json"]')
    assert bad.locator('[data-field="outcome"]').inner_text() == "not importable"
    errors = page.locator('#upload-errors [data-file="predictions/oc-bad/LEval_quality.json"] [data-field="errors"]')
    assert errors.inner_text().startswith('field "1": matches no stored question of quality')
    assert errors.is_visible()
    summary, error_box = page.locator("#upload-summary").bounding_box(), errors.bounding_box()
    assert error_box["y"] > summary["y"] + summary["height"] - 1  # below the summary, never over it
    assert error_box["width"] > 300  # a readable line, not a squeezed column
    details = page.locator('details[data-file="predictions/oc-good/LEval_quality_1.json"]')
    details.locator("summary").click()
    assert "OpenCompass predictions of L-Eval's quality" in details.locator('[data-field="benchmark"]').inner_text()

    page.get_by_role("button", name="Confirm: import 2 files").click()
    page.get_by_text("Imported 2 files: 3 predictions stored for oc-good").wait_for()
