"""The upload's counts agree from preview to confirmation to metrics job, and the job page says what the job did.

An LV-Eval model folder of several files is the case where they used to disagree: the preview counted
files, the confirmation counted models, and the metrics job counted only L-Eval's predictions (0 / 0).
"""
from __future__ import annotations

import re

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import Document, Job, Prediction, Question, System
from app.models.corpus import LVEVAL
from app.services.demo import DEMO_PATH
from app.services.jobs.worker import execute_job
from tests.support.lveval_data import write_model
from tests.support.predictions import (
    batch_id,
    confirm,
    load_demo_data,
    make_zip,
    post_upload,
)

DATASETS, LEVELS = ("cmrc_mixup", "factrecall_en"), ("16k", "32k")


@pytest.fixture
def researcher(app, client, auth):
    auth.login("researcher")
    return client


@pytest.fixture
def model_zip(tmp_path) -> bytes:
    folder = write_model(tmp_path, "kite-16k", rows=3, datasets=DATASETS, levels=LEVELS)
    return make_zip({f"{folder.name}/{p.name}": p.read_bytes() for p in sorted(folder.iterdir())})


def test_preview_confirmation_and_metrics_job_count_the_same_things(app, researcher, auth, model_zip):
    files = len(DATASETS) * len(LEVELS)
    batch = batch_id(post_upload(researcher, auth, [("kite.zip", model_zip)]))
    page = researcher.get(f"/predictions/uploads/{batch}").get_data(as_text=True)
    assert f'data-field="importable-files">{files} importable<' in page and f"Confirm: import {files} files" in page
    new = int(re.search(r'data-field="total-new">(\d+)<', page).group(1))

    response = confirm(researcher, auth, batch)
    said = researcher.get(response.headers["Location"]).get_data(as_text=True)
    assert f"Imported {files} files: {new} predictions stored for kite-16k." in said
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(Prediction)) == new
        job_id = db.session.scalar(select(Job.id).where(Job.kind == "metrics"))
    execute_job(app, job_id)
    with app.app_context():
        job = db.session.get(Job, job_id)
        assert job.status == "done", job.error
        # The job counts the predictions it scored, LV-Eval's too (it used to end at "0 / 0").
        assert (job.done, job.total) == (new, new)


def test_the_job_page_says_what_a_metrics_job_did(app, researcher, auth, model_zip):
    confirm(researcher, auth, batch_id(post_upload(researcher, auth, [("kite.zip", model_zip)])))
    with app.app_context():
        job_id = db.session.scalar(select(Job.id).where(Job.kind == "metrics"))
        hashes = db.session.get(Job, job_id).params["files"]
    queued = researcher.get(f"/jobs/{job_id}").get_data(as_text=True)
    assert ('data-field="description">Scores 12 predictions of kite-16k (4 files) under the official and fixed '
            'profiles.<') in queued
    execute_job(app, job_id)
    page = researcher.get(f"/jobs/{job_id}").get_data(as_text=True)
    assert ('data-field="description">Scored 12 predictions of kite-16k (4 files) under the official and fixed '
            'profiles: 12 LV-Eval predictions in 4 cells.<') in page
    # The raw parameters (one sha256 per file) are there for whoever needs them, closed, below the sentence.
    raw = page[page.index('<details class="job-raw"'):]
    assert all(h in raw for h in hashes) and not any(h in page[:page.index('<details class="job-raw"')] for h in hashes)


def test_an_unsupported_file_is_named_and_the_picker_filters_by_type(app, researcher, auth):
    form = researcher.get("/predictions").get_data(as_text=True)
    assert 'accept=".jsonl,.zip"' in form
    batch = batch_id(post_upload(researcher, auth, [("notes.txt", b"just some notes\n")]))
    page = researcher.get(f"/predictions/uploads/{batch}").get_data(as_text=True)
    alert = re.search(r'<div class="flash flash-error" role="alert" data-field="nothing-read">(.*?)</div>', page, re.DOTALL)
    assert alert and "notes.txt: only .jsonl files" in alert.group(1)
    assert "Confirm:" not in page and 'id="upload-summary"' not in page


def test_an_lveval_model_uploads_beside_the_demo_into_documents_of_its_own(app, researcher, auth, model_zip):
    """The README's way: the demo is there, real data arrives, then an LV-Eval model is uploaded. The demo's
    documents of the same datasets and levels must neither block the import nor receive the real model."""
    load_demo_data(app)
    task = (DEMO_PATH / "LEval-data/Closed-ended-tasks/quality.jsonl").read_bytes().replace(b"district", b"borough")
    confirm(researcher, auth, batch_id(post_upload(researcher, auth, [("quality.jsonl", task)])))  # real data now
    response = confirm(researcher, auth, batch_id(post_upload(researcher, auth, [("kite.zip", model_zip)])))
    said = researcher.get(response.headers["Location"]).get_data(as_text=True)
    assert "Imported 4 files: 12 predictions stored for kite-16k." in said
    with app.app_context():
        marks = set(db.session.execute(
            select(Document.task, Document.is_demo).join(Question).join(Prediction).join(System)
            .where(System.name == "kite-16k", Document.collection == LVEVAL)).all())
        assert marks == {(f"{d}_{level}", False) for d in DATASETS for level in LEVELS}
        demo_documents = db.session.scalar(select(func.count()).select_from(Document).where(
            Document.collection == LVEVAL, Document.is_demo.is_(True)))
        assert demo_documents == 55, "the demo keeps its own documents"
