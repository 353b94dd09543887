"""Prediction uploads: preview before commit, confirm, zip layouts and safety, size limit, roles."""
from __future__ import annotations

import hashlib
import json
import re
import stat
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import Job, Prediction, PredictionFile, System
from app.services import summary
from tests.support.predictions import (
    batch_id, confirm, demo_file, demo_rows, jsonl, load_demo_data, make_zip, post_upload, staged_files, stored_files,
)

QUALITY = "exam_eval/terse-13b/quality.pred.jsonl"
SCI_QA = "ngram_eval/terse-13b/scientific_qa.pred.jsonl"
HUMAN = "human_eval/terse-13b.pred.jsonl"


@pytest.fixture
def researcher(app, client, auth):
    load_demo_data(app)
    auth.login("researcher")
    return client


def counts(app) -> dict:
    with app.app_context():
        return summary.counts()


def text_of(response) -> str:
    return response.get_data(as_text=True)


def preview_page(client, batch: str) -> str:
    response = client.get(f"/predictions/uploads/{batch}")
    assert response.status_code == 200
    return text_of(response)


def test_preview_shows_each_file_and_writes_nothing(app, researcher, auth):
    before = counts(app)
    response = post_upload(researcher, auth, [("alpha.pred.jsonl", demo_file(HUMAN, "alpha")),
                                              ("quality.pred.jsonl", demo_file(QUALITY, "alpha"))], system="alpha")
    page = preview_page(researcher, batch_id(response))
    assert "alpha.pred.jsonl" in page and "quality.pred.jsonl" in page
    assert "human × 10" in page and "exam × 8" in page
    assert 'data-field="matched">10<' in page and 'data-field="matched">8<' in page
    assert 'data-field="unmatched">0<' in page
    assert "Confirm: import 2 files" in page
    assert counts(app) == before, "the preview must not write to the database"
    assert len(staged_files(app)) == 2 and stored_files(app) == []


def test_confirm_imports_stores_files_by_sha256_and_queues_a_metrics_job(app, researcher, auth):
    human, quality = demo_file(HUMAN, "alpha"), demo_file(QUALITY, "alpha")
    batch = batch_id(post_upload(researcher, auth, [("alpha.pred.jsonl", human), ("quality.pred.jsonl", quality)],
                                 system="alpha"))
    response = confirm(researcher, auth, batch)
    assert response.status_code == 302 and "/predictions?jobs=" in response.headers["Location"]
    with app.app_context():
        system = db.session.scalars(select(System).where(System.name == "alpha")).one()
        assert db.session.scalar(select(func.count()).where(Prediction.system_id == system.id)) == 18
        files = db.session.scalars(select(PredictionFile).where(PredictionFile.system_id == system.id)).all()
        assert {f.sha256 for f in files} == {hashlib.sha256(human).hexdigest(), hashlib.sha256(quality).hexdigest()}
        for f in files:
            path = Path(app.instance_path) / f.stored_path
            assert hashlib.sha256(path.read_bytes()).hexdigest() == f.sha256 and path.name == f"{f.sha256}.jsonl"
        assert {f.task for f in files} == {"", "quality"}
        job = db.session.scalars(select(Job).where(Job.kind == "metrics")).one()
        assert job.status == "queued" and job.params["system"] == "alpha" and job.total == 18
        assert job.params["files"] == sorted(f.sha256 for f in files)
    assert staged_files(app) == [], "confirmed files leave the staging area"
    page = text_of(researcher.get(response.headers["Location"]))
    assert f'data-job-id="{job.id}"' in page and "Imported 2 files" in page
    # The batch is imported: confirming again imports nothing more and says so.
    again = confirm(researcher, auth, batch)
    assert again.status_code == 302
    assert "this upload was already imported: 2 file(s), 18 prediction(s) for alpha" in text_of(
        researcher.get("/predictions"))


def test_bad_file_lists_errors_with_line_numbers_and_cannot_be_confirmed(app, researcher, auth):
    rows = demo_rows(QUALITY)
    lines = [json.dumps(rows[0]), json.dumps({k: v for k, v in rows[1].items() if k != "gt"}), "{not json",
             json.dumps(rows[3] | {"evaluation": 5}), json.dumps([1, 2])]
    before = counts(app)
    batch = batch_id(post_upload(researcher, auth, [("broken.pred.jsonl", ("\n".join(lines) + "\n").encode())]))
    page = preview_page(researcher, batch)
    assert "not importable" in page and "No file can be imported" in page and "Confirm:" not in page
    for line, fragment in ((2, "field <code>gt</code>: missing"), (3, "invalid JSON"),
                           (4, "field <code>evaluation</code>: expected a string"), (5, "expected a JSON object")):
        assert f"<strong>line {line}</strong>" in page and fragment in page
    assert confirm(researcher, auth, batch).status_code == 302
    assert counts(app) == before
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(Job)) == 0


def test_only_valid_files_are_imported_and_invalid_ones_are_named(app, researcher, auth):
    batch = batch_id(post_upload(researcher, auth, [
        ("good.pred.jsonl", demo_file(QUALITY, "good")),
        ("bad.pred.jsonl", b'{"query": "q", "gt": "g", "bad_pred": "x", "evaluation": "exam"}\n{oops\n'),
    ]))
    page = preview_page(researcher, batch)
    assert "Confirm: import 1 file" in page and "with errors will be skipped" in page
    confirm(researcher, auth, batch)
    with app.app_context():
        assert set(db.session.scalars(select(System.name))) >= {"good"}
        assert db.session.scalars(select(System).where(System.name == "bad")).first() is None


def test_confirm_is_all_or_nothing(app, researcher, auth):
    first, second = demo_file(QUALITY, "first"), demo_file(QUALITY, "second")
    batch = batch_id(post_upload(researcher, auth, [("first.pred.jsonl", first), ("second.pred.jsonl", second)]))
    staged = Path(app.config["UPLOAD_FOLDER"]) / "staging" / f"{hashlib.sha256(second).hexdigest()}.jsonl"
    staged.write_bytes(second.replace(b"second_pred", b"other_pred"))  # altered after the preview
    before = counts(app)
    response = confirm(researcher, auth, batch)
    assert response.status_code == 302
    assert "Nothing was imported" in text_of(researcher.get("/predictions"))
    assert counts(app) == before
    with app.app_context():
        assert db.session.scalars(select(System).where(System.name.in_(["first", "second"]))).first() is None


def test_zip_in_leval_layouts(app, researcher, auth):
    archive = make_zip({
        "preds/m1/quality.pred.jsonl": demo_file(QUALITY, "m1"),
        "preds/m1/scientific_qa.pred.jsonl": demo_file(SCI_QA, "m1"),
        "preds/m2.pred.jsonl": demo_file(HUMAN, "m2"),
        "preds/notes.txt": b"not a prediction file",
        "__MACOSX/preds/._m2.pred.jsonl": b"\x00\x05",
    })
    batch = batch_id(post_upload(researcher, auth, [("run.zip", archive)]))
    page = preview_page(researcher, batch)
    assert "preds/m1/quality.pred.jsonl" in page and "preds/m2.pred.jsonl" in page
    assert page.count('data-field="system">m1<') == 2 and 'data-field="system">m2<' in page
    assert "run.zip: preds/notes.txt" in page and "__MACOSX" not in page
    confirm(researcher, auth, batch)
    with app.app_context():
        per_system = dict(db.session.execute(
            select(System.name, func.count(Prediction.id)).join(Prediction).where(System.name.in_(["m1", "m2"]))
            .group_by(System.name)).all())
        assert per_system == {"m1": 12, "m2": 10}
        assert db.session.scalar(select(func.count()).where(Job.kind == "metrics")) == 2


@pytest.mark.parametrize("member", ["../evil.pred.jsonl", "/abs/evil.pred.jsonl", "ok/../../evil.pred.jsonl",
                                    "C:/evil.pred.jsonl", "..\\evil.pred.jsonl"])
def test_zip_with_unsafe_path_is_refused_whole(app, researcher, auth, member):
    archive = make_zip({"m1/quality.pred.jsonl": demo_file(QUALITY, "m1"), member: demo_file(QUALITY, "evil")})
    before = counts(app)
    batch = batch_id(post_upload(researcher, auth, [("evil.zip", archive)]))
    page = preview_page(researcher, batch)
    assert "unsafe path" in page and "the archive was not read" in page and "No file can be imported" in page
    assert staged_files(app) == []
    confirm(researcher, auth, batch)
    assert counts(app) == before
    assert not list(Path(app.instance_path).parent.rglob("evil.pred.jsonl"))


def test_zip_with_symlink_is_refused(app, researcher, auth):
    archive = make_zip({"m1/quality.pred.jsonl": b"/etc/passwd"}, symlinks=("m1/quality.pred.jsonl",))
    page = preview_page(researcher, batch_id(post_upload(researcher, auth, [("link.zip", archive)])))
    assert "is a symbolic link" in page and staged_files(app) == []


@pytest.mark.parametrize("mode, kind", [(stat.S_IFIFO | 0o644, "is a named pipe (FIFO)"), (stat.S_IFSOCK | 0o755,
                                         "is a socket"), (stat.S_IFCHR | 0o600, "is a device")])
def test_zip_with_a_member_that_is_no_regular_file_is_refused_as_a_folder_would_be(app, researcher, auth, mode, kind):
    archive = make_zip({"m1/quality.pred.jsonl": demo_file(QUALITY, "m1"), "m1/中文.pred.jsonl": b"{}"},
                       modes={"m1/中文.pred.jsonl": mode})
    page = preview_page(researcher, batch_id(post_upload(researcher, auth, [("odd.zip", archive)])))
    assert f"member &#39;m1/中文.pred.jsonl&#39; {kind}; the archive was not read" in page
    assert staged_files(app) == []


def test_zip_uncompressed_size_is_bounded(app, researcher, auth):
    app.config["LEVAL_MAX_UNZIPPED_MB"] = 1
    row = json.dumps({"query": "q", "gt": "g", "big_pred": "x" * 1000, "evaluation": "f1"})
    bomb = make_zip({"big.pred.jsonl": ((row + "\n") * 3000).encode()})  # ~3 MB that deflates to a few KB
    assert len(bomb) < 100_000
    page = preview_page(researcher, batch_id(post_upload(researcher, auth, [("bomb.zip", bomb)])))
    assert "uncompressed contents exceed the limit of 1 MB" in page and staged_files(app) == []


def test_zip_member_count_is_bounded(app, researcher, auth):
    app.config["LEVAL_MAX_ZIP_MEMBERS"] = 2
    archive = make_zip({f"m{i}.pred.jsonl": demo_file(QUALITY, f"m{i}") for i in range(3)})
    page = preview_page(researcher, batch_id(post_upload(researcher, auth, [("many.zip", archive)])))
    assert "at most 2 are accepted" in page


def test_not_a_zip_and_wrong_extension_are_refused(app, researcher, auth):
    page = preview_page(researcher, batch_id(post_upload(researcher, auth, [
        ("fake.zip", b"this is not a zip"), ("preds.csv", b"a,b\n1,2\n")])))
    assert "fake.zip: not a valid zip archive" in page
    assert "preds.csv: only .jsonl files (predictions, L-Eval task or reference files) and .zip archives of them are accepted" in page


def test_oversized_upload_gets_a_clear_413_page(app, researcher, auth):
    app.config["MAX_CONTENT_LENGTH"] = 64 * 1024
    before = counts(app)
    response = post_upload(researcher, auth, [("big.pred.jsonl", b"x" * (200 * 1024))])
    assert response.status_code == 413
    page = text_of(response)
    assert "Upload too large" in page and "; the limit is 64 KB per upload." in page
    assert re.search(r"This upload is 20\d KB", page)  # the file plus its multipart framing
    assert "Nothing was stored." in page and "LEVAL_MAX_UPLOAD_MB" in page
    assert staged_files(app) == [] and counts(app) == before


def test_upload_limit_is_configurable(app, monkeypatch, tmp_path):
    from app import create_app

    monkeypatch.setenv("LEVAL_MAX_UPLOAD_MB", "3")
    other = create_app({"INSTANCE_PATH": tmp_path / "other"})
    assert other.config["MAX_CONTENT_LENGTH"] == 3 * 1024 * 1024


def test_task_named_file_needs_a_system_name(app, researcher, auth):
    page = preview_page(researcher, batch_id(post_upload(researcher, auth, [("quality.pred.jsonl",
                                                                              demo_file(QUALITY, "x"))])))
    assert "named after the task &#39;quality&#39;" in page and "No file can be imported" in page
    page = preview_page(researcher, batch_id(post_upload(researcher, auth, [("quality.pred.jsonl",
                                                                              demo_file(QUALITY, "x"))], system="beta")))
    assert 'data-field="system">beta<' in page and "Confirm: import 1 file" in page


def test_other_file_kinds_are_pointed_elsewhere(app, researcher, auth):
    lveval = jsonl([{"pred": "Paris", "answers": ["Paris"], "gold_ans": "Paris", "length": 16000}])
    reference = (Path(__file__).parents[2] / "data/demo/human_eval/demo.ref.jsonl").read_bytes()
    page = preview_page(researcher, batch_id(post_upload(researcher, auth, [
        ("lv.jsonl", lveval), ("demo.ref.jsonl", reference), ("empty.pred.jsonl", b"\n\n")])))
    assert "unknown LV-Eval dataset in &#39;lv&#39;" in page
    assert "the file has no JSON lines" in page
    # The reference file is read on this page too, as documents; no page sends a web user to the command line.
    assert "L-Eval human-evaluation reference file" in page and "run.py" not in page and "import-leval" not in page


def test_unmatched_rows_are_reported_and_a_file_matching_nothing_is_refused(app, researcher, auth):
    rows = demo_rows(QUALITY)
    rows[2] = rows[2] | {"query": "A question no document has"}
    unmatched_only = [{"query": "nothing", "gt": "here", "zed_pred": "x", "evaluation": "f1"}]
    page = preview_page(researcher, batch_id(post_upload(researcher, auth, [
        ("partial.pred.jsonl", jsonl(rows)), ("zed.pred.jsonl", jsonl(unmatched_only))])))
    assert 'data-field="matched">7<' in page and 'data-field="unmatched">1<' in page
    # Every row is accounted for, and a file that skips rows says so in amber, not in green.
    assert '<span class="badge warn">adds 7 new; 1 skipped (1 unmatched)</span>' in page
    assert "line 3: A question no document has" in page
    assert "no row matches a stored question" in page


def test_changed_predictions_are_conflicts_until_replace(app, researcher, auth):
    changed = demo_file(QUALITY, "terse-13b", change=lambda i, text: "D" if i < 3 else text)
    batch = batch_id(post_upload(researcher, auth, [("quality.pred.jsonl", changed)], system="terse-13b"))
    page = preview_page(researcher, batch)
    assert ('data-field="new">0<' in page and 'data-field="unchanged">5<' in page and 'data-field="differ">3<' in page
            and "Replace stored predictions that differ" in page)
    assert "adds nothing; 3 differ, replaced only if ticked; 5 skipped (5 unchanged)" in page
    confirm(researcher, auth, batch, replace=True)
    with app.app_context():
        system = db.session.scalars(select(System).where(System.name == "terse-13b")).one()
        texts = db.session.scalars(select(Prediction.text).where(Prediction.system_id == system.id,
                                                                 Prediction.text == "D")).all()
        assert len(texts) >= 3


def test_discard_forgets_the_batch(app, researcher, auth):
    batch = batch_id(post_upload(researcher, auth, [("alpha.pred.jsonl", demo_file(HUMAN, "alpha"))]))
    researcher.post(f"/predictions/uploads/{batch}/discard", data={"csrf_token": auth.token()})
    assert researcher.get(f"/predictions/uploads/{batch}").status_code == 302
    confirm(researcher, auth, batch)
    with app.app_context():
        assert db.session.scalars(select(System).where(System.name == "alpha")).first() is None


def test_a_batch_belongs_to_its_uploader(app, client, auth):
    load_demo_data(app)
    auth.login("researcher")
    batch = batch_id(post_upload(client, auth, [("alpha.pred.jsonl", demo_file(HUMAN, "alpha"))]))
    auth.logout()
    auth.login("admin")
    assert client.get(f"/predictions/uploads/{batch}").status_code == 302
    confirm(client, auth, batch)
    with app.app_context():
        assert db.session.scalars(select(System).where(System.name == "alpha")).first() is None
    assert client.get("/predictions/uploads/..%2F..%2Fsecret_key").status_code in (302, 404)


def test_predictions_page_is_staff_only(app, client, auth):
    auth.login("annotator")
    assert client.get("/predictions").status_code == 403
    token = auth.token()
    response = client.post("/predictions/upload", data={"csrf_token": token, "files": []},
                           content_type="multipart/form-data")
    assert response.status_code == 403
    assert client.post("/predictions/systems/1/score", data={"csrf_token": token}).status_code == 403


def test_predictions_page_lists_systems_and_offers_scoring(app, researcher, auth):
    page = text_of(researcher.get("/predictions"))
    assert "terse-13b" in page and "Compute metrics" in page and "not scored" in page
    with app.app_context():
        system_id = db.session.scalar(select(System.id).where(System.name == "terse-13b"))
    response = researcher.post(f"/predictions/systems/{system_id}/score", data={"csrf_token": auth.token()})
    assert response.status_code == 302
    again = researcher.post(f"/predictions/systems/{system_id}/score", data={"csrf_token": auth.token()})
    assert "already queued" in text_of(researcher.get(again.headers["Location"]))


def test_a_file_that_adds_nothing_says_what_confirming_does(app, researcher, auth):
    changed = demo_file(QUALITY, "terse-13b", change=lambda i, text: "D" if i < 3 else text)
    same = demo_file(HUMAN, "terse-13b")
    batch = batch_id(post_upload(researcher, auth, [("quality.pred.jsonl", changed), ("terse-13b.pred.jsonl", same)],
                                 system="terse-13b"))
    page = preview_page(researcher, batch)
    outcomes = dict(re.findall(r'<tr data-file="([^"]+)".*?data-field="outcome"><span class="badge [a-z]*">([^<]+)<',
                               page, re.S))
    assert outcomes == {"quality.pred.jsonl": "adds nothing; 3 differ, replaced only if ticked; 5 skipped (5 unchanged)",
                        "terse-13b.pred.jsonl": "adds nothing: already stored"}
    assert ">ready<" not in page
    assert ('Confirming adds <strong data-field="total-new">0</strong> new rows and skips '
            '<strong data-field="total-skipped">15</strong>') in page


def test_non_human_rows_are_matched_in_the_task_files_only(app, researcher, auth):
    """As the README says: an f1 row with a human-evaluation question's (query, gt) does not take its answer's place."""
    rows = [dict(row, evaluation="f1") for row in demo_rows(HUMAN)]
    before = counts(app)
    batch = batch_id(post_upload(researcher, auth, [("terse-13b.pred.jsonl", jsonl(rows))]))
    page = preview_page(researcher, batch)
    assert 'data-field="matched">0<' in page and "not importable" in page
    assert "10 row(s) have the question of a human-evaluation question, but only rows whose evaluation is " \
           "&#39;human&#39; are matched there" in page
    assert "Confirm:" not in page
    assert counts(app) == before
