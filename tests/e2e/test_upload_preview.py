"""In a browser at 1400×900: the upload preview puts its summary and Confirm on screen, its badges say when
rows are skipped, L-Eval task files import on the same page, an LV-Eval model's counts agree from preview to
confirmation to metrics job, the job page says what the job did, and an unsupported file is named."""
from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import JOB_PATIENCE_MS, screenshot, sign_in
from tests.support.lveval_data import write_model
from tests.support.predictions import make_zip

pytestmark = pytest.mark.e2e

VIEWPORT = {"width": 1400, "height": 900}
DOCUMENTS = [  # a fictional task file: two documents, three questions each
    {"input": f"The harbour ledger of {town} lists {n} ships, {n + 2} cranes and {n + 4} clerks.",
     "instructions": [f"How many ships does {town} list?", f"How many cranes does {town} list?",
                      f"How many clerks does {town} list?"],
     "outputs": [str(n), str(n + 2), str(n + 4)], "source": "financial_qa", "evaluation": "f1"}
    for town, n in (("Saltmere", 3), ("Kestrel Bay", 5))
]


def jsonl(rows) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def colour(badge, variable: str) -> tuple[str, str]:
    """The badge's text colour and the colour a CSS variable resolves to."""
    return badge.evaluate("""(el, name) => { const probe = document.createElement('span');
        probe.style.color = `var(${name})`; document.body.append(probe);
        const want = getComputedStyle(probe).color; probe.remove(); return [getComputedStyle(el).color, want]; }""",
                          variable)


def upload(page, url: str, *paths) -> None:
    page.goto(url + "/predictions")
    page.get_by_label("Prediction, task or reference files").set_input_files([str(p) for p in paths])
    page.get_by_role("button", name="Upload and preview").click()
    page.get_by_role("heading", name="Check the upload").wait_for()


def confirm_on_screen(page) -> None:
    box = page.get_by_role("button", name=re.compile(r"^Confirm: import")).bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= VIEWPORT["height"], box


def test_upload_preview_as_a_researcher_sees_it(live_server, browser, tmp_path):
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    # The demo stays, as after the README's first run: its LV-Eval model covers the same 55 cells as kite's.
    try:
        sign_in(page, live_server.url, live_server.admin_user, live_server.admin_password)
        page.goto(live_server.url + "/predictions")
        assert page.get_by_label("Prediction, task or reference files").get_attribute("accept") == ".jsonl,.zip"

        # An unsupported file: a clear error naming it, not an empty preview.
        notes = tmp_path / "notes.txt"
        notes.write_text("to do\n")
        upload(page, live_server.url, notes)
        expect(page.locator('[data-field="nothing-read"]')).to_contain_text("notes.txt: only .jsonl files")
        assert page.locator("#upload-summary").count() == 0

        # An L-Eval task file, on the same page and with the same preview.
        task = tmp_path / "financial_qa.jsonl"
        task.write_text(jsonl(DOCUMENTS))
        upload(page, live_server.url, task)
        row = page.locator('#upload-summary tr[data-file="financial_qa.jsonl"]')
        expect(row.locator('[data-field="outcome"]')).to_have_text("adds 6 questions (2 new documents)")
        assert "run.py" not in page.content()
        page.get_by_role("button", name="Confirm: import 1 file").click()
        expect(page.locator(".flash-success")).to_contain_text("Imported 1 file: 1 task or reference file (2 documents, 6 questions)")

        # Predictions for those questions, two of which match none: the badge says so, in amber.
        rows = [{"query": q, "gt": a, "ledger-7b_pred": a, "evaluation": "f1"}
                for doc in DOCUMENTS for q, a in zip(doc["instructions"], doc["outputs"])]
        rows += [{"query": "How many lighthouses?", "gt": "2", "ledger-7b_pred": "2", "evaluation": "f1"},
                 {"query": "How many ferries?", "gt": "4", "ledger-7b_pred": "4", "evaluation": "f1"}]
        preds = tmp_path / "ledger-7b.pred.jsonl"
        preds.write_text(jsonl(rows))
        upload(page, live_server.url, preds)
        row = page.locator('#upload-summary tr[data-file="ledger-7b.pred.jsonl"]')
        badge = row.locator('[data-field="outcome"] .badge')
        expect(badge).to_have_text("adds 6 new; 2 skipped (2 unmatched)")
        shown, warn = colour(badge, "--warn")
        assert shown == warn and shown != colour(badge, "--ok")[1]
        cells = {field: int(row.locator(f'[data-field="{field}"]').inner_text())
                 for field in ("rows", "new", "unchanged", "differ", "unmatched")}
        assert cells == {"rows": 8, "new": 6, "unchanged": 0, "differ": 0, "unmatched": 2}
        screenshot(page, "upload-preview-skips")
        page.get_by_role("button", name="Confirm: import 1 file").click()
        expect(page.locator(".flash-success")).to_contain_text("Imported 1 file: 6 predictions stored for ledger-7b")

        # An LV-Eval model of 55 files: a long page, with Confirm on screen and the files listed once.
        folder = write_model(tmp_path, "kite-16k", rows=2)
        archive = tmp_path / "kite.zip"
        archive.write_bytes(make_zip({f"kite-16k/{p.name}": p.read_bytes() for p in sorted(folder.iterdir())}))
        upload(page, live_server.url, archive)
        assert page.evaluate("document.documentElement.scrollHeight") > 2 * VIEWPORT["height"]
        confirm_on_screen(page)
        expect(page.locator('[data-field="importable-files"]')).to_have_text("55 importable")
        assert page.locator('[data-file="kite-16k/cmrc_mixup_16k.jsonl"]').count() == 2  # its row and its details
        assert page.get_by_role("heading", name="Details").count() == 0
        new = int(page.locator('[data-field="total-new"]').inner_text())
        screenshot(page, "upload-preview-lveval")
        page.get_by_role("button", name="Confirm: import 55 files").click()
        expect(page.locator(".flash-success")).to_contain_text(f"Imported 55 files: {new} predictions stored for kite-16k")

        job = page.locator('tr[data-job-id][data-status="done"]', has=page.locator('[data-field="system"]', has_text="kite-16k"))
        job.wait_for(timeout=JOB_PATIENCE_MS)
        assert job.locator('[data-field="done"]').inner_text() == job.locator('[data-field="total"]').inner_text() == str(new)
        job.locator("a").first.click()
        expect(page.locator('[data-field="description"]')).to_have_text(
            f"Scored {new} predictions of kite-16k (55 files) under the official and fixed profiles: "
            f"{new} LV-Eval predictions in 55 cells.")
        assert not page.locator("details.job-raw pre").first.is_visible()  # the 55 hashes stay folded away
        screenshot(page, "job-page-metrics")
    finally:
        context.close()
