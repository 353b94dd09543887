"""Score exports stream in constant memory and are made once per change of their data (issue 38).

Memory is measured with tracemalloc (allocations, not time) around one download through the page's
route, at two study sizes four times apart, with the streaming pieces made small so that both sizes
span many of them.
"""
from __future__ import annotations

import shutil
import tracemalloc

import pytest
from sqlalchemy import insert, select

from app.extensions import db
from app.models import Study, User
from app.services.accounts import create_user
from app.services.exports import rows, stored, writers
from app.services.folders import export_cache_folder
from tests.conftest import PASSWORDS, AuthActions
from tests.support.scoring_data import generate_scores


def _annotators(app, names: list[str]) -> None:
    """Accounts sharing one password hash (hashing each would only slow the set-up)."""
    with app.app_context():
        template = create_user(names[0], "annotator-pass-123", "annotator")
        db.session.execute(insert(User), [{"username": name, "password_hash": template.password_hash,
                                           "role": "annotator", "active": True} for name in names[1:]])
        db.session.commit()


def _peak_of_download(app, client, fmt: str) -> tuple[int, int]:
    """(peak bytes allocated while the download is made and read piece by piece, bytes received)."""
    with app.app_context():
        shutil.rmtree(export_cache_folder(), ignore_errors=True)  # made from the database, not a kept file
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        response = client.get(f"/results/export/scores.{fmt}", buffered=False)
        assert response.status_code == 200
        received = 0
        for piece in response.response:
            received += len(piece)
        response.close()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - base, received


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_an_export_s_peak_memory_does_not_grow_with_the_number_of_scores(demo, monkeypatch, fmt):
    monkeypatch.setattr(rows, "STREAM_CHUNK", 50)
    monkeypatch.setattr(writers, "CHUNK_CHARS", 8 * 1024)
    names = [f"scorer{i:02d}" for i in range(40)]
    _annotators(demo, names)
    with demo.app_context():
        study_id = db.session.scalar(select(Study.id))
        assert generate_scores(names[:10], seed=1, study_id=study_id) == 400
    client = demo.test_client()
    assert AuthActions(client).login("researcher", PASSWORDS["researcher"]).status_code == 302
    client.get(f"/results/export/scores.{fmt}").close()  # imports and first compiles out of the measure
    small, small_bytes = _peak_of_download(demo, client, fmt)
    with demo.app_context():
        assert generate_scores(names[10:], seed=2, study_id=study_id) == 1200
    large, large_bytes = _peak_of_download(demo, client, fmt)
    assert large_bytes > 3.5 * small_bytes
    # Four times the scores, four times the bytes sent; the memory used on the way stays where it was.
    assert large < 1.25 * small + 32 * 1024, (small, large)


def test_an_unchanged_export_is_made_once_and_a_save_makes_it_again(demo, monkeypatch):
    made = []
    real = stored.export_chunks

    def counting(fmt, study_id, **kwargs):
        made.append(fmt)
        return real(fmt, study_id, **kwargs)

    monkeypatch.setattr(stored, "export_chunks", counting)
    with demo.app_context():
        study_id = db.session.scalar(select(Study.id))
        generate_scores(["scorer00"], seed=3, study_id=study_id)
    client = demo.test_client()
    assert AuthActions(client).login("researcher", PASSWORDS["researcher"]).status_code == 302
    first = client.get("/results/export/scores.csv").get_data()
    assert client.get("/results/export/scores.csv").get_data() == first
    assert made == ["csv"]
    with demo.app_context():
        generate_scores(["scorer01"], seed=4, study_id=study_id)
    second = client.get("/results/export/scores.csv").get_data()
    assert made == ["csv", "csv"] and second.count(b"\n") == 2 * first.count(b"\n") - 1
    assert client.get("/results/export/scores.jsonl").get_data().count(b"\n") == second.count(b"\n") - 1
    with demo.app_context():
        kept = sorted(path.name for path in export_cache_folder().iterdir())
    assert len(kept) == 3 and not any(name.endswith(".part") for name in kept)


def test_a_failed_export_leaves_no_file(demo, monkeypatch):
    def broken(fmt, study_id, **kwargs):
        yield "annotator,system\n"
        raise OSError("disk full")

    monkeypatch.setattr(stored, "export_chunks", broken)
    with demo.app_context():
        study_id = db.session.scalar(select(Study.id))
        with pytest.raises(OSError):
            stored.stored_export("csv", study_id)
        folder = export_cache_folder()
        assert not folder.exists() or list(folder.iterdir()) == []


def test_each_row_carries_its_own_question_s_text_when_the_texts_kept_run_out(demo, monkeypatch):
    """A question's text and reference are read once per chunk of rows and kept for a few questions only: with
    chunks of 7 rows and 3 questions kept, every row still carries its own question's (issue 38)."""
    from app.models import Question

    monkeypatch.setattr(rows, "STREAM_CHUNK", 7)
    monkeypatch.setattr(rows, "TEXTS_KEPT", 3)
    names = [f"scorer{i:02d}" for i in range(3)]
    _annotators(demo, names)
    with demo.app_context():
        study_id = db.session.scalar(select(Study.id))
        generate_scores(names, seed=4, study_id=study_id)
        texts = {qid: (query, gt) for qid, query, gt in db.session.execute(
            select(Question.id, Question.instruction, Question.reference))}
        exported = list(rows.iter_score_rows(study_id, "all"))
        assert len(exported) > 3 * 7 and len({row["question_id"] for row in exported}) > 3
        for row in exported:
            assert (row["query"], row["gt"]) == texts[row["question_id"]], row["question_id"]
        # A page of rows from the middle, as the API reads them, too.
        page = list(rows.iter_score_rows(study_id, "all", offset=10, limit=9))
        assert [r["question_id"] for r in page] == [r["question_id"] for r in exported[10:19]]
        assert all((r["query"], r["gt"]) == texts[r["question_id"]] for r in page)
