"""Results in a browser: the demo, three annotators' scores imported through the CLI, every page."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import expect

from tests.conftest import REPO_ROOT
from tests.e2e.conftest import screenshot, sign_in

pytestmark = pytest.mark.e2e

DEMO_HUMAN_EVAL = REPO_ROOT / "data" / "demo" / "human_eval"
# The ratings the demo's systems were written to earn (data/demo/README.md), and the n-gram overlap they get.
HUMAN_QUALITY = {"balanced-34b": 4.5, "terse-13b": 3.9, "verbose-7b": 3.3, "shaky-3b": 1.6}
OVERLAP_QUALITY = {"shaky-3b": 4.6, "balanced-34b": 4.2, "verbose-7b": 3.0, "terse-13b": 1.4}


def score_file(path: Path) -> Path:
    """Write three annotators' scores of the demo answers as a jsonl export; ann3 stops early."""
    rng = np.random.default_rng(2024)
    rows = []
    for a, annotator in enumerate(("ann1", "ann2", "ann3")):
        for pred_file in sorted(DEMO_HUMAN_EVAL.glob("*.pred.jsonl")):
            system = pred_file.name.removesuffix(".pred.jsonl")
            for i, line in enumerate(pred_file.read_text(encoding="utf-8").splitlines()):
                if annotator == "ann3" and i >= 7:
                    continue
                item = json.loads(line)
                value = int(np.clip(round(HUMAN_QUALITY[system] + rng.normal(0, 0.7)), 1, 5))
                rows.append({"annotator": annotator, "system": system, "query": item["query"], "gt": item["gt"],
                             "score": value, "round": 1, "answer_label": "ABCD"[(i + a) % 4],
                             "comment": "", "seconds_spent": float(rng.uniform(10, 90))})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def add_metric_values(instance: Path) -> None:
    """Store per-answer F1/ROUGE-L/keyword-F1 values in the server's database, as a metric job would."""
    from app import create_app
    from app.extensions import db
    from tests.support.scoring_data import generate_metric_results

    app = create_app({"INSTANCE_PATH": instance})
    with app.app_context():
        generate_metric_results(seed=5, noise=8.0, quality=OVERLAP_QUALITY)
        db.session.remove()
        db.engine.dispose()


def test_results_pages_with_three_annotators(live_server, page, tmp_path):
    for name in ("ann1", "ann2", "ann3"):
        created = live_server.cli("create-user", name, "--role", "annotator", "--password-stdin", input="annotate-pass-1\n")
        assert created.returncode == 0, created.stderr
    imported = live_server.cli("import-annotations", str(score_file(tmp_path / "scores.jsonl")))
    assert imported.returncode == 0 and "108 new" in imported.stdout, imported.stdout + imported.stderr
    add_metric_values(live_server.instance)
    problems: list[str] = []
    # CSP violations and script errors show up as console errors; failed requests are checked by URL
    # (the browser's own /favicon.ico probe is not the app's concern).
    page.on("console", lambda message: problems.append(message.text)
            if message.type == "error" and not message.text.startswith("Failed to load resource") else None)
    page.on("response", lambda response: problems.append(f"{response.status} {response.url}")
            if response.status >= 400 and not response.url.endswith("/favicon.ico") else None)

    sign_in(page, live_server.url, live_server.admin_user, live_server.admin_password)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Results").click()
    page.wait_for_load_state()
    expect(page.get_by_role("heading", name="Human scores", level=1)).to_be_visible()
    summary = page.locator("#system-summary tbody tr")
    expect(summary).to_have_count(4)
    assert summary.first.locator("td").first.inner_text().startswith("balanced-34b")
    expect(page.locator("#chart-human-means")).to_be_visible()
    expect(page.locator("#chart-human-distribution")).to_be_visible()
    expect(page.locator("#annotator-progress").get_by_text("in progress")).to_have_count(1)
    screenshot(page, "results-human")

    page.get_by_role("link", name="Annotators who finished").click()
    expect(page).to_have_url(re.compile(r"view=finished"))
    expect(page.get_by_text("from 2 annotators")).to_be_visible()

    page.locator("nav.subnav").get_by_role("link", name="Metrics vs humans").click()
    expect(page.locator(".profile-label")).to_have_text(re.compile(r"^\s*official"))
    expect(page.locator("#correlations tbody tr > td:first-of-type")).to_have_text([
        "F1", "ROUGE-L", "Keyword F1 (LV-Eval)", "−|ΔL| (words)"])
    expect(page.locator("#correlations").get_by_text("fewer than 7").first).to_be_visible()
    expect(page.locator("#significance-note")).to_be_visible()
    page.get_by_role("link", name="fixed").click()
    expect(page.locator(".profile-label")).to_have_text(re.compile(r"^\s*fixed"))
    screenshot(page, "results-correlation")

    page.locator("nav.subnav").get_by_role("link", name="Length instruction").click()
    page.get_by_label("terse-13b").check()
    page.get_by_label("balanced-34b").check()
    page.get_by_role("button", name="Save flags").click()
    expect(page.get_by_text("Updated the length-instruction flag of balanced-34b, terse-13b.")).to_be_visible()
    page.locator("nav.subnav").get_by_role("link", name="Metrics vs humans").click()
    table = page.locator("#length-instruction-table")
    expect(table.locator("tbody tr")).to_have_count(4)
    expect(table).to_be_visible()
    expect(page.locator("#chart-length-instruction")).to_be_visible()
    page.locator("#length-instruction").scroll_into_view_if_needed()
    screenshot(page, "results-length-instruction")

    page.locator("nav.subnav").get_by_role("link", name="Annotator agreement").click()
    # The click does not wait for the next page; expect() retries until it has arrived.
    expect(page.locator("#alpha tbody tr")).to_have_count(5)
    expect(page.locator("#pairs tbody tr")).to_have_count(3)
    screenshot(page, "results-agreement")

    page.locator("nav.subnav").get_by_role("link", name="Disagreements").click()
    expect(page.locator("li.disagreement")).to_have_count(10)
    screenshot(page, "results-disagreements")

    page.locator("nav.subnav").get_by_role("link", name="Exports").click()
    with page.expect_download() as download_info:
        page.get_by_role("link", name="results.json").click()
    results = json.loads(Path(download_info.value.path()).read_text(encoding="utf-8"))
    assert results["views"]["finished"]["annotators"] == ["ann1", "ann2"]
    assert results["systems"] == [{"system": s, "length_instruction": s in ("balanced-34b", "terse-13b")}
                                  for s in sorted(HUMAN_QUALITY)]
    with page.expect_download() as download_info:
        page.get_by_role("link", name="files_from_ann3.jsonl").click()
    assert download_info.value.suggested_filename == "files_from_ann3.jsonl"
    assert not problems, problems
