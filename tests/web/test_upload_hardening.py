"""Uploads under attack: double and concurrent confirms, streams with bounded memory, text the database cannot
store, names, empty batches, over-long answers and the cap on new systems.

Concurrency runs real threads against the real SQLite file through the real app; nothing in these tests is
SQLite-specific, so they hold on PostgreSQL as well (the refusals are checked, not only the absence of a 500).
"""
from __future__ import annotations

import io
import threading
import tracemalloc
import zipfile

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.core.metrics.files import iter_jsonl
from app.models import Prediction, PredictionFile, StudyAnswer, System, UploadBatch
from app.models.corpus import LONG_ANSWER_HELD, LONG_ANSWER_SHOWN
from app.services.input_rules import MAX_HUMAN_ANSWER_CHARS
from app.services.studies.setup import StudySpec, create_study
from app.services.uploads import preview_upload
from tests.conftest import AuthActions
from tests.support.predictions import (
    as_system, batch_id, confirm, demo_file, demo_rows, jsonl, load_demo_data, make_zip, post_upload,
)

QUALITY = "exam_eval/terse-13b/quality.pred.jsonl"
HUMAN = "human_eval/terse-13b.pred.jsonl"
MB = 1024 * 1024


@pytest.fixture
def researcher(app, client, auth):
    load_demo_data(app)
    auth.login("researcher")
    return client


def signed_in_researcher(app):
    client = app.test_client()
    auth = AuthActions(client)
    assert auth.login("researcher").status_code == 302
    return client, auth


def flashes(client) -> str:
    return client.get("/predictions").get_data(as_text=True)


def preview_of(app, batch: str):
    from app.services.uploads import load_batch

    with app.app_context():
        from app.models import User

        user = db.session.scalar(select(User.id).where(User.username == "researcher"))
        return load_batch(batch, user)


def run_together(*calls):
    """Run the calls in threads released at the same moment; return their results (or raised exceptions)."""
    barrier = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def worker(index, call):
        barrier.wait()
        try:
            results[index] = call()
        except BaseException as exc:  # noqa: BLE001 - reported to the test below
            results[index] = exc

    threads = [threading.Thread(target=worker, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return results


# -- finding 2: confirm twice, or two imports of one new system at once ------------------------------------


@pytest.mark.parametrize("trial", range(3))
def test_two_simultaneous_confirms_of_one_batch_import_it_once(app, trial):
    load_demo_data(app)
    first, first_auth = signed_in_researcher(app)
    second, second_auth = signed_in_researcher(app)
    name = f"twice{trial}"
    batch = batch_id(post_upload(first, first_auth, [(f"{name}.pred.jsonl", demo_file(HUMAN, name)),
                                                     ("quality.pred.jsonl", demo_file(QUALITY, name))], system=name))
    results = run_together(lambda: confirm(first, first_auth, batch), lambda: confirm(second, second_auth, batch))
    assert [getattr(r, "status_code", r) for r in results] == [302, 302]
    said = flashes(first) + flashes(second)
    assert said.count("Imported 2 files: 18 predictions") == 1
    assert said.count(f"this upload was already imported: 2 file(s), 18 prediction(s) for {name}") == 1
    with app.app_context():
        system = db.session.scalars(select(System).where(System.name == name)).one()
        assert db.session.scalar(select(func.count()).where(Prediction.system_id == system.id)) == 18
        assert db.session.scalar(select(func.count()).where(PredictionFile.system_id == system.id)) == 2
        assert db.session.scalar(select(func.count()).select_from(UploadBatch)) == 1
    again = confirm(first, first_auth, batch)
    assert again.status_code == 302 and "already imported" in flashes(first)


@pytest.mark.parametrize("trial", range(3))
def test_two_uploads_creating_the_same_new_system_at_once_both_land(app, trial):
    load_demo_data(app)
    first, first_auth = signed_in_researcher(app)
    second, second_auth = signed_in_researcher(app)
    name = f"racing{trial}"
    one = batch_id(post_upload(first, first_auth, [(f"{name}.pred.jsonl", demo_file(HUMAN, name))]))
    two = batch_id(post_upload(second, second_auth, [("quality.pred.jsonl", demo_file(QUALITY, name))], system=name))
    results = run_together(lambda: confirm(first, first_auth, one), lambda: confirm(second, second_auth, two))
    assert [getattr(r, "status_code", r) for r in results] == [302, 302]
    assert "Imported 1 file: 10 predictions" in flashes(first)
    assert "Imported 1 file: 8 predictions" in flashes(second)
    with app.app_context():
        system = db.session.scalars(select(System).where(System.name == name)).one()
        assert db.session.scalar(select(func.count()).where(Prediction.system_id == system.id)) == 18
        assert db.session.scalar(select(func.count()).select_from(UploadBatch)) == 2


# -- finding 3: streams, bounded memory, the line limit ------------------------------------------------------


def test_a_line_over_the_limit_is_an_error_naming_file_and_line_and_is_skipped():
    raw = b'{"a": 1}\n' + b'{"b": "' + b"x" * 100 + b'"}\n\n{"c": 3}\n'
    items = list(iter_jsonl(io.BytesIO(raw), "big.pred.jsonl", max_line_bytes=50))
    assert [type(item).__name__ for item in items] == ["Row", "FileFormatError", "Row"]
    assert (items[1].file, items[1].line) == ("big.pred.jsonl", 2) and "longer than the limit" in items[1].message
    assert items[2].line == 4 and items[2].data == {"c": 3}


def test_a_real_upload_with_one_line_over_20_mb_is_refused_on_its_line(app, researcher, auth):
    rows = as_system(demo_rows(QUALITY), "huge")
    rows[1]["huge_pred"] = "y" * (21 * MB)
    batch = batch_id(post_upload(researcher, auth, [("huge.pred.jsonl", jsonl(rows))]))
    (preview,) = preview_of(app, batch).files
    assert {"line": 2, "field": None, "message": "the line is longer than the limit of 20 MB for one JSON line"} \
        in preview.errors


def _newline_zip(megabytes: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("model/quality.pred.jsonl", "w") as member:
            for _ in range(megabytes):
                member.write(b"\n" * MB)
    return buffer.getvalue()


def test_a_zip_of_newlines_is_read_as_a_stream_in_little_memory(app, researcher):
    archive = _newline_zip(48)
    with app.test_request_context():
        from app.models import User

        user = db.session.scalar(select(User.id).where(User.username == "researcher"))
        tracemalloc.start()
        try:
            batch = preview_upload([("newlines.zip", io.BytesIO(archive))], user_id=user)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    (preview,) = batch.files
    assert preview.errors[0]["message"] == "the file has no JSON lines" and preview.size == 48 * MB
    assert peak < 12 * MB, f"peak {peak / MB:.1f} MB: the member was held in memory"


# -- finding 4: text the database cannot store ----------------------------------------------------------------


def _errors_of(app, researcher, auth, name: str, raw: bytes, system: str = "") -> list[dict]:
    (preview,) = preview_of(app, batch_id(post_upload(researcher, auth, [(name, raw)], system=system))).files
    return preview.errors


@pytest.mark.parametrize("change, field, message", [
    (lambda row: row | {"withnul_pred": "an answer \x00 with NUL"}, "withnul_pred", "NUL character"),
    (lambda row: row | {"query": row["query"] + "\x00"}, "query", "NUL character"),
    (lambda row: row | {"prompt": "p\x00"}, "prompt", "NUL character"),
    (lambda row: row | {"evaluation": "e" * 21}, "evaluation", "21 characters long; at most 20"),
])
def test_rows_the_database_cannot_store_are_refused_by_line_and_field(app, researcher, auth, change, field, message):
    rows = as_system(demo_rows(QUALITY), "withnul")
    rows[2] = change(rows[2])
    errors = _errors_of(app, researcher, auth, "withnul.pred.jsonl", jsonl(rows))
    assert len(errors) == 1 and errors[0]["line"] == 3 and errors[0]["field"] == field, errors
    assert message in errors[0]["message"]
    with app.app_context():
        assert db.session.scalars(select(System).where(System.name == "withnul")).first() is None


def test_a_prediction_key_longer_than_its_column_is_refused(app, researcher, auth):
    key = "k" * 160 + "_pred"
    rows = [{k if not k.endswith("_pred") else key: v for k, v in row.items()} for row in demo_rows(QUALITY)]
    errors = _errors_of(app, researcher, auth, "longkey.pred.jsonl", jsonl(rows))
    assert errors[0]["line"] == 1 and "165 characters long; at most 160" in errors[0]["message"], errors


def test_a_zip_member_path_longer_than_its_column_is_refused(app, researcher, auth):
    path = "d" * 490 + "/model/quality.pred.jsonl"
    errors = _errors_of(app, researcher, auth, "deep.zip", make_zip({path: demo_file(QUALITY, "model")}))
    assert errors == [{"line": None, "field": None,
                       "message": "the file name is 515 characters long; at most 500 are allowed"}]


def test_a_file_name_with_nul_is_refused(app):
    load_demo_data(app)
    with app.test_request_context():
        batch = preview_upload([("bad\x00name.pred.jsonl", io.BytesIO(demo_file(QUALITY, "x")))], user_id=1)
    (preview,) = batch.files
    assert "\x00" not in preview.name and "NUL character" in preview.errors[0]["message"]


def test_the_score_api_refuses_a_comment_with_nul(app):
    from app.services.annotation import scoring

    body = {"study": 1, "question_id": 1, "label": "A", "answer": "0" * 64, "value": 3, "comment": "ok\x00"}
    with pytest.raises(scoring.ScoreError) as caught:
        scoring.parse_score_payload(body)
    assert caught.value.field == "comment" and "NUL character" in str(caught.value)


# -- finding 12: names, empty batches, long answers, the cap on new systems ----------------------------------


def test_an_empty_system_name_is_refused(app, researcher, auth):
    errors = _errors_of(app, researcher, auth, ".pred.jsonl", demo_file(QUALITY, "x"))
    assert "the system name is empty" in errors[0]["message"]


@pytest.mark.parametrize("name, problem", [("a\x00b", "NUL character"), ("n" * 121, "at most 120")])
def test_bad_system_names_from_the_form_are_refused(app, researcher, auth, name, problem):
    errors = _errors_of(app, researcher, auth, "quality.pred.jsonl", demo_file(QUALITY, "x"), system=name)
    assert problem in errors[0]["message"], errors


@pytest.mark.parametrize("folder", ["tab\there", "line\u2028break", "trailing "])
def test_bad_system_names_from_a_zip_layout_are_refused(app, researcher, auth, folder):
    archive = make_zip({f"{folder}/quality.pred.jsonl": demo_file(QUALITY, "x")})
    errors = _errors_of(app, researcher, auth, "names.zip", archive)
    assert "is not allowed: a system name has 1 to 120 characters, no control characters" in errors[0]["message"]


def test_confirming_a_batch_without_a_valid_file_does_not_report_success(app, researcher, auth):
    batch = batch_id(post_upload(researcher, auth, [("broken.pred.jsonl", b"{oops\n")]))
    response = confirm(researcher, auth, batch)
    assert response.status_code == 302
    page = flashes(researcher)
    assert "Imported" not in page and "Metrics are being computed" not in page
    assert "Nothing was imported: no file of this upload can be imported" in page


def test_an_answer_over_the_cap_is_imported_but_held_out_of_studies_until_a_researcher_shows_it(app, researcher,
                                                                                             auth):
    long_text = "word " * (MAX_HUMAN_ANSWER_CHARS // 5 + 1)
    body = demo_file(HUMAN, "wordy", change=lambda i, text: long_text if i == 0 else text)
    confirm(researcher, auth, batch_id(post_upload(researcher, auth, [("wordy.pred.jsonl", body)])))
    with app.app_context():
        system = db.session.scalars(select(System).where(System.name == "wordy")).one()
        flags = dict(db.session.execute(select(Prediction.question_id, Prediction.long_answer)
                                        .where(Prediction.system_id == system.id)).all())
        assert sorted(flags.values()).count(LONG_ANSWER_HELD) == 1 and len(flags) == 10
        held = next(q for q, flag in flags.items() if flag == LONG_ANSWER_HELD)
        study = create_study(StudySpec(name="Wordy", question_ids=list(flags), system_ids=[system.id]))
        pinned = set(db.session.scalars(select(StudyAnswer.question_id).where(StudyAnswer.study_id == study.id)))
        assert held not in pinned and len(pinned) == 9
        study_id, system_id = study.id, system.id
    page = flashes(researcher)
    assert 'data-long-held="1"' in page and "held back from annotators" in page
    response = researcher.post(f"/predictions/systems/{system_id}/long-answers",
                               data={"csrf_token": auth.token(), "decision": "show"})
    assert response.status_code == 302
    assert "1 answer(s) over 100,000 characters are now shown to annotators" in flashes(researcher)
    with app.app_context():
        assert db.session.scalar(select(Prediction.long_answer).where(
            Prediction.system_id == system_id, Prediction.question_id == held)) == LONG_ANSWER_SHOWN
        pinned = set(db.session.scalars(select(StudyAnswer.question_id).where(StudyAnswer.study_id == study_id)))
        assert held in pinned and len(pinned) == 10


def test_one_upload_creates_at_most_the_configured_number_of_new_systems(app, researcher, auth):
    app.config["LEVAL_MAX_NEW_SYSTEMS"] = 2
    members = {f"{name}/quality.pred.jsonl": demo_file(QUALITY, name) for name in ("s1", "s2", "s3")}
    members["terse-13b/quality.pred.jsonl"] = demo_file(QUALITY, "terse-13b")  # exists already: not new
    batch = preview_of(app, batch_id(post_upload(researcher, auth, [("many.zip", make_zip(members))])))
    refused = {f.system: f.errors for f in batch.files if f.errors}
    assert list(refused) == ["s3"] and "at most 2 new systems" in refused["s3"][0]["message"]



def test_the_command_line_importer_refuses_a_bad_system_name_too(app, tmp_path):
    from app.services.demo import DEMO_PATH
    from app.services.importers import import_path

    load_demo_data(app)
    (tmp_path / "bad\tname.pred.jsonl").write_bytes((DEMO_PATH / HUMAN).read_bytes())
    with app.app_context():
        (report,) = import_path(tmp_path).files
        assert "the system name 'bad\\tname' is not allowed" in report.error["message"]
        assert db.session.scalars(select(System).where(System.name == "bad\tname")).first() is None


def test_an_lveval_answer_with_nul_is_refused_by_line_and_field(app, researcher, auth):
    rows = [{"pred": "Paris", "answers": ["Paris"], "input": "Capital of France?", "length": 100},
            {"pred": "Ber\x00lin", "answers": ["Berlin"], "input": "Capital of Germany?", "length": 100}]
    errors = _errors_of(app, researcher, auth, "lv.zip", make_zip({"lvmodel/cmrc_mixup_16k.jsonl": jsonl(rows)}))
    assert [(e["line"], e["field"]) for e in errors] == [(2, "pred")] and "NUL character" in errors[0]["message"]
