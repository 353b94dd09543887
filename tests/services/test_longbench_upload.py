"""LongBench's files zipped, on the upload page and through the API: a preview that writes nothing, every bad line by
file, line and field, each model whole or not at all, and the same numbers as eval.py and result.py once scored."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import Job, LongbenchItem, Prediction, System
from app.services.metrics.compute import score_system
from tests.support import longbench_reference as ref
from tests.support.api import make_token
from tests.support.longbench_data import model_rows, write_data, write_model, write_rows, write_v2
from tests.support.predictions import batch_id, confirm, make_zip, post_upload

V1_SET = ["hotpotqa", "dureader", "lsht", "repobench-p"]
E_SET = ["samsum", "passage_retrieval_en"]


def zip_tree(root: Path, *folders: str) -> bytes:
    """A zip of folders under root, named from root (`pred/alpha/hotpotqa.jsonl`, …), as a person zips them."""
    return make_zip({p.relative_to(root).as_posix(): p.read_bytes()
                     for folder in folders for p in sorted((root / folder).rglob("*")) if p.is_file()})


def counts(app) -> tuple[int, int, int]:
    with app.app_context():
        return tuple(db.session.scalar(select(func.count()).select_from(model))
                     for model in (System, LongbenchItem, Prediction))


@pytest.fixture
def researcher(client, auth):
    auth.login("researcher")
    return client


def test_a_zip_of_pred_pred_e_and_results_is_previewed_then_imported_and_scored(app, researcher, auth, tmp_path):
    write_model(tmp_path, "alpha", datasets=V1_SET)
    write_model(tmp_path, "alpha", e=True, datasets=E_SET)
    write_v2(tmp_path, "alpha")
    response = post_upload(researcher, auth, [("longbench.zip", zip_tree(tmp_path, "pred", "pred_e", "results"))])
    page = researcher.get(f"/predictions/uploads/{batch_id(response)}").get_data(as_text=True)
    assert page.count('class="file-preview is-ok"') == len(V1_SET) + len(E_SET) + 1
    assert "pred_e/alpha/samsum.jsonl" in page and "LongBench-E" in page and "LongBench v2" in page
    assert counts(app) == (0, 0, 0), "the preview writes nothing"
    assert confirm(researcher, auth, batch_id(response)).status_code == 302
    rows = sum(len(model_rows(d)) for d in V1_SET) + sum(len(model_rows(d, e=True)) for d in E_SET) + 36
    assert counts(app) == (1, rows, rows)
    with app.app_context():
        job = db.session.scalars(select(Job).where(Job.kind == "metrics")).one()
        score_system(job.params["system_id"])
        db.session.commit()
    assert researcher.get("/leaderboard/json?benchmark=longbench").get_json()["systems"][0]["result_json"] == \
        ref.evaluate_model(tmp_path / "pred" / "alpha")
    e_json = researcher.get("/leaderboard/json?benchmark=longbench").get_json()["systems"][0]["result_json_e"]
    assert e_json == ref.evaluate_model(tmp_path / "pred_e" / "alpha", e=True)


def test_a_bad_line_keeps_the_whole_model_out_and_names_file_line_and_field(app, researcher, auth, tmp_path):
    folder = write_model(tmp_path, "broken", datasets=["lsht", "hotpotqa"])
    rows = model_rows("lsht")
    rows[1]["pred"] = None
    rows[3]["all_classes"] = None  # lsht is scored against its classes
    write_rows(folder / "lsht.jsonl", rows)
    (folder / "hotpotqa.jsonl").write_bytes((folder / "hotpotqa.jsonl").read_bytes() + b"{not json\n")
    response = post_upload(researcher, auth, [("broken.zip", zip_tree(tmp_path, "pred"))])
    page = researcher.get(f"/predictions/uploads/{batch_id(response)}").get_data(as_text=True)
    assert "<strong>line 2</strong> field <code>pred</code>: expected a string, got null" in page
    assert "<strong>line 4</strong> field <code>all_classes</code>" in page
    assert f"<strong>line {len(model_rows('hotpotqa')) + 1}</strong>" in page
    assert "No file can be imported" in page
    assert confirm(researcher, auth, batch_id(response)).status_code in (302, 400)
    assert counts(app) == (0, 0, 0)


def test_the_data_files_and_a_model_in_one_zip_tie_every_row_to_its_question(app, researcher, auth, tmp_path):
    write_data(tmp_path, datasets=["hotpotqa"])
    write_model(tmp_path, "alpha", datasets=["hotpotqa"])
    response = post_upload(researcher, auth, [("with-data.zip", zip_tree(tmp_path, "data", "pred"))])
    page = researcher.get(f"/predictions/uploads/{batch_id(response)}").get_data(as_text=True)
    assert page.count('class="file-preview is-ok"') == 2, page
    assert confirm(researcher, auth, batch_id(response)).status_code == 302
    with app.app_context():
        from app.models import Question

        assert db.session.scalar(select(func.count()).select_from(Question).where(Question.instruction == "")) == 0
        assert db.session.scalar(select(func.count()).select_from(Prediction)) == len(model_rows("hotpotqa"))


def test_the_api_takes_the_same_zip(app, tmp_path):
    write_model(tmp_path, "api-model", datasets=["lsht"])
    client = app.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = "Bearer " + make_token(app, "researcher", "write")
    answer = client.post("/api/v1/predictions", content_type="multipart/form-data", data={
        "file": (io.BytesIO(zip_tree(tmp_path, "pred")), "lb.zip"), "system": ""})
    assert answer.status_code == 201, answer.get_json()
    body = answer.get_json()
    assert [s["name"] for s in body["systems"]] == ["api-model"] and body["predictions"] == len(model_rows("lsht"))
    broken = tmp_path / "bad"
    rows = model_rows("lsht")
    rows[0]["answers"] = "体育"
    write_rows(broken / "pred" / "other" / "lsht.jsonl", rows)
    refused = client.post("/api/v1/predictions", content_type="multipart/form-data", data={
        "file": (io.BytesIO(zip_tree(broken, "pred")), "bad.zip"), "system": ""})
    assert refused.status_code == 422
    error = refused.get_json()["errors"][0]
    assert (error["line"], error["field"]) == (1, "answers") and error["file"].endswith("pred/other/lsht.jsonl")
    assert counts(app)[0] == 1
