"""The upload page takes a zip of OpenCompass's output folder: preview by file and key, then all or nothing."""
from __future__ import annotations

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import Job, Prediction, PredictionFile, System
from app.services.importers import import_path
from tests.support.opencompass import (
    folder_bytes,
    tiny_rows,
    write_dataset,
    write_tiny_task,
)
from tests.support.predictions import batch_id, confirm, make_zip, post_upload


@pytest.fixture
def researcher(app, client, auth, tmp_path):
    write_tiny_task(tmp_path / "tasks")
    with app.app_context():
        assert not import_path(tmp_path / "tasks").failed
    auth.login("researcher")
    return client


def counts(app) -> tuple[int, int, int]:
    with app.app_context():
        return tuple(db.session.scalar(select(func.count(model.id))) for model in (System, Prediction, Job))


def test_a_zip_of_an_output_folder_is_previewed_then_imported_with_its_metrics_queued(app, researcher, auth,
                                                                                     tmp_path):
    out = tmp_path / "20240601_101010"
    write_dataset(out, "internlm2-7b", "LEval_quality", tiny_rows(("(A)", "(A)", "(B)"), as_messages=True), parts=2)
    (out / "predictions" / "internlm2-7b" / "gsm8k.json").write_text("{}")
    (out / "configs").mkdir()
    (out / "configs" / "run.py").write_text("models = []")
    batch = batch_id(post_upload(researcher, auth, [("oc.zip", make_zip(folder_bytes(tmp_path / "20240601_101010")))]))
    page = researcher.get(f"/predictions/uploads/{batch}").get_data(as_text=True)
    assert "2 importable" in page and "with errors" not in page
    assert 'data-file="predictions/internlm2-7b/LEval_quality_0.json"' in page
    assert "OpenCompass" in page and "LEval_quality" in page
    assert "adds 2 new" in page and "adds 1 new" in page
    assert counts(app) == (0, 0, 0)
    response = confirm(researcher, auth, batch)
    assert response.status_code == 302 and "jobs=" in response.headers["Location"]
    with app.app_context():
        system = db.session.scalar(select(System).where(System.name == "internlm2-7b"))
        assert system.pred_key == "internlm2-7b_pred"
        assert sorted(db.session.scalars(select(PredictionFile.filename).where(PredictionFile.system_id == system.id))) \
            == ["predictions/internlm2-7b/LEval_quality_0.json", "predictions/internlm2-7b/LEval_quality_1.json"]
        assert sorted(db.session.execute(select(Prediction.line_no, Prediction.text, Prediction.evaluation)
                                         .where(Prediction.system_id == system.id)).all()) == [
            (1, "(A)", "exam"), (2, "(A)", "exam"), (3, "(B)", "exam")]
    assert counts(app) == (1, 3, 1)
    again = batch_id(post_upload(researcher, auth, [("oc.zip", make_zip(folder_bytes(out)))]))
    page = researcher.get(f"/predictions/uploads/{again}").get_data(as_text=True)
    assert "adds nothing: already stored" in page and "adds 2 new" not in page and "adds 1 new" not in page


def test_errors_are_shown_by_file_and_key_and_a_broken_part_holds_back_its_dataset(app, researcher, auth,
                                                                                 tmp_path):
    out = tmp_path / "outputs"
    rows = tiny_rows()
    rows[2]["gold"] = "D"
    write_dataset(out, "broken", "LEval_quality", rows, parts=2)
    write_dataset(out, "fine", "LEval_quality", tiny_rows())
    (out / "predictions" / "fine" / "LEval_gsm101.json").write_text("{}")
    batch = batch_id(post_upload(researcher, auth, [("oc.zip", make_zip(folder_bytes(out)))]))
    page = researcher.get(f"/predictions/uploads/{batch}").get_data(as_text=True)
    assert "1 importable" in page and "3 with errors" in page
    assert ("field <code>&#34;0&#34;</code>: matches no stored question of quality" in page)
    assert "unknown dataset &#39;LEval_gsm101&#39;" in page
    assert ("not importable on its own: the parts of a dataset are imported together, and "
            "predictions/broken/LEval_quality_1.json has errors") in page
    confirm(researcher, auth, batch)
    with app.app_context():
        assert list(db.session.scalars(select(System.name))) == ["fine"]
        assert db.session.scalar(select(func.count(Prediction.id))) == 3


def test_a_question_removed_after_the_preview_rolls_back_the_whole_upload(app, researcher, auth, tmp_path):
    out = tmp_path / "outputs"
    write_dataset(out, "first", "LEval_quality", tiny_rows())
    write_dataset(out, "second", "LEval_quality", tiny_rows())
    batch = batch_id(post_upload(researcher, auth, [("oc.zip", make_zip(folder_bytes(out)))]))
    with app.app_context():  # the questions change between the preview and the confirm
        from app.models import Question

        question = db.session.scalars(select(Question).order_by(Question.id.desc())).first()
        question.reference = "(C)"
        db.session.commit()
    response = confirm(researcher, auth, batch)
    assert response.status_code == 302 and response.headers["Location"].endswith(batch)
    page = researcher.get(response.headers["Location"]).get_data(as_text=True)
    assert "Nothing was imported" in page and "matches no stored question of quality" in page
    assert counts(app) == (0, 0, 0)


def test_a_dataset_file_nested_too_deep_or_with_a_huge_number_is_refused_by_name_and_nothing_is_stored(
        app, researcher, auth, tmp_path):
    out = tmp_path / "outputs"
    write_dataset(out, "fine", "LEval_quality", tiny_rows())
    deep, huge = (out / "predictions" / name / "LEval_quality.json" for name in ("deep", "huge"))
    for path in (deep, huge):
        path.parent.mkdir(parents=True)
    deep.write_text('{"0": {"prediction": ' + "[" * 200_000 + "]" * 200_000 + "}}")  # answered 500
    huge.write_text('{"0": {"prediction": "(A)",\n "gold": ' + "7" * 5000 + "}}")  # answered 500 too
    batch = batch_id(post_upload(researcher, auth, [("oc.zip", make_zip(folder_bytes(out)))]))
    page = researcher.get(f"/predictions/uploads/{batch}").get_data(as_text=True)
    assert "1 importable" in page and "2 with errors" in page
    assert ("field <code>&#34;0&#34;.prediction</code>: JSON nested deeper than 100 levels (line 1, column 120)"
            in page)
    assert "field <code>&#34;0&#34;.gold</code>: a number of 5,000 characters; at most 300 are read (line 2" in page
    confirm(researcher, auth, batch)
    with app.app_context():
        assert list(db.session.scalars(select(System.name))) == ["fine"]
