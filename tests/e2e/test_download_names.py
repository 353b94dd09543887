"""The names Chromium saves downloads under, for hostile document sources and study names (audit finding 4).

Before: a quote in an imported `source` injected a second filename* and Chromium saved the export as
evil.html; a line break or Chinese text made the export a 500. Now every name a person clicks is saved
as app.core.filenames.safe_file_name makes it, with the file's own extension.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.core.filenames import safe_file_name
from tests.e2e.conftest import sign_in, wait_until
from tests.support.hostile_names import HOSTILE_NAMES

pytestmark = pytest.mark.e2e

STUDY_NAMES = ['x"; filename*=UTF-8\'\'evil.html', "中文研究", "evil\u202egnp.html", "../../etc/passwd", "CON",
               "semi;colon; filename=evil.html", "长" * 120]


def task_file(path: Path) -> Path:
    lines = [{"instructions": ["q"], "outputs": ["a"], "input": f"Document number {i}: a text about {i}.",
              "source": source, "evaluation": "f1"} for i, source in enumerate(HOSTILE_NAMES)]
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return path


def stored(instance: Path) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(id, task) of the imported documents and (id, name) of new studies with hostile names, in the server's
    database."""
    from sqlalchemy import select

    from app import create_app
    from app.extensions import db
    from app.models import Document
    from app.models.generation import IMPORTED
    from app.services.studies.setup import StudySpec, create_study

    app = create_app({"INSTANCE_PATH": instance})
    with app.app_context():
        documents = [(d.id, d.task) for d in db.session.scalars(
            select(Document).where(Document.collection == IMPORTED).order_by(Document.id))]
        studies = []
        for number, name in enumerate(STUDY_NAMES):
            # Some of these names the study name rule now refuses (U+202E, a /); studies named before the rule
            # keep their names, so the download must still be saved safely: those are renamed in the database.
            study = create_study(StudySpec(name=f"hostile {number}"))
            study.name = name
            db.session.commit()
            studies.append((study.id, name))
        db.session.remove()
        db.engine.dispose()
    return documents, studies


def saved_as(page, link) -> str:
    """The name Chromium saves the link's download under, or what came instead (another page: an error)."""
    downloads = []

    def started(download) -> None:
        downloads.append(download)

    before = page.url
    page.on("download", started)
    try:
        link.click()
        wait_until(page, lambda: downloads or page.url != before, "a download, or another page")
    finally:
        page.remove_listener("download", started)
    if not downloads:
        page.wait_for_load_state()
        return f"no download: {page.title()}"
    assert downloads[0].failure() is None
    return downloads[0].suggested_filename


def test_chromium_saves_hostile_names_as_their_sanitised_names(live_server, page, tmp_path):
    sign_in(page, live_server.url, live_server.admin_user, live_server.admin_password)
    page.goto(live_server.url + "/author/")
    page.get_by_label("L-Eval task file or an export (.jsonl)").set_input_files(str(task_file(tmp_path / "h.jsonl")))
    page.get_by_role("button", name="Import").click()
    expect(page.locator(".flash, .flashes").first).to_contain_text(f"{len(HOSTILE_NAMES)} documents")
    documents, studies = stored(live_server.instance)
    assert len(documents) == len(HOSTILE_NAMES)

    wrong = []
    for document_id, task in documents:
        page.goto(f"{live_server.url}/author/documents/{document_id}")
        name = saved_as(page, page.get_by_role("link", name="Export task file"))
        expected = safe_file_name(f"{task}-{document_id}.authored.jsonl", ".jsonl")
        if name != expected or not name.endswith(".jsonl"):
            wrong.append((task, name, expected))
    # The studies are over the demo's questions, so they belong to the demo: show it, as a researcher would.
    page.goto(f"{live_server.url}/")
    page.locator('[data-field="show-demo"]').click()
    expect(page.locator('[data-field="demo-view"]')).to_be_visible()
    for study_id, study in studies:
        page.goto(f"{live_server.url}/results/exports?study={study_id}")
        for link, suffix, extension in [("scores-all.csv", "scores-all.csv", ".csv"),
                                        ("results.json", "results.json", ".json")]:
            name = saved_as(page, page.get_by_role("link", name=link))
            expected = safe_file_name(f"{study}-{suffix}", extension)
            if name != expected or not name.endswith(extension):
                wrong.append((study, name, expected))
    assert not wrong, "saved under another name:\n" + "\n".join(map(repr, wrong))
