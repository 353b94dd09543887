"""Authoring pairs through the JSON routes: save, edit, concurrent edits, delete, export and import back."""
from __future__ import annotations

import io
import json

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import AuthoredPair, Document, Question
from app.models.corpus import HUMAN_EVAL
from app.services.question_sets import select_questions


@pytest.fixture
def doc(demo):
    with demo.app_context():
        document = db.session.scalars(select(Document).where(Document.collection == HUMAN_EVAL)
                                      .order_by(Document.word_count.desc())).first()
        return {"id": document.id, "text": document.text}


def span(text: str, quote: str) -> dict:
    start = text.index(quote)
    return {"start": start, "end": start + len(quote), "quote": quote}


def post(client, auth, url, body):
    return client.post(url, data=json.dumps(body), content_type="application/json",
                       headers={"X-CSRFToken": auth.token()})


def create(client, auth, doc, **changes):
    quote = doc["text"].split("\n")[0][:40]
    body = {"instruction": "What is the title?", "answer": "The first line.", "evidence": [span(doc["text"], quote)]}
    body.update(changes)
    return post(client, auth, f"/author/documents/{doc['id']}/pairs", body)


def test_a_pair_is_saved_at_once_with_author_and_evidence_and_becomes_a_question(demo, client, auth, doc):
    auth.login("researcher")
    response = create(client, auth, doc)
    assert response.status_code == 201, response.get_json()
    pair = response.get_json()["pair"]
    assert pair["author"] == "researcher" and pair["version"] == 1 and pair["created_at"]
    assert doc["text"][pair["evidence"][0]["start"]:pair["evidence"][0]["end"]] == pair["evidence"][0]["quote"]
    with demo.app_context():
        questions = select_questions("authored")
        assert [(q.instruction, q.reference) for q in questions] == [("What is the title?", "The first line.")]
        assert select_questions("human_eval")[0].question_id != questions[0].question_id
        assert len(select_questions("human_eval")) == 10  # the human evaluation is untouched
    listed = client.get(f"/author/documents/{doc['id']}/pairs.json").get_json()["pairs"]
    assert [p["id"] for p in listed] == [pair["id"]]


@pytest.mark.parametrize("changes,message", [
    ({"instruction": "  "}, "instruction: write the instruction"),
    ({"answer": ""}, "answer: write the answer"),
    ({"evidence": [{"start": 0, "end": 5, "quote": "zzzzz"}]}, "evidence 1: the selection does not match"),
    ({"evidence": [{"start": 10, "end": 10 ** 9, "quote": "x"}]}, "evidence 1: the selection does not match"),
    ({"evidence": "all of it"}, "evidence: a list of spans"),
    ({"instruction": "What\x00?"}, "instruction: contains a NUL character (\\u0000)"),
    ({"answer": "Yes\x00."}, "answer: contains a NUL character (\\u0000)"),
    ({"evidence": [{"start": 0, "end": 2, "quote": "a\x00"}]}, "evidence: contains a NUL character (\\u0000)"),
])
def test_bad_pairs_are_refused_with_the_field_named(demo, client, auth, doc, changes, message):
    auth.login("researcher")
    response = create(client, auth, doc, **changes)
    assert response.status_code == 400 and message in response.get_json()["error"]
    with demo.app_context():
        assert db.session.scalar(select(AuthoredPair.id)) is None


def test_two_researchers_never_overwrite_each_other(demo, client, auth, doc):
    auth.login("researcher")
    pair = create(client, auth, doc).get_json()["pair"]
    url = f"/author/pairs/{pair['id']}"
    first = post(client, auth, url, {"version": 1, "instruction": "Edited by the researcher?", "answer": "Yes.",
                                     "evidence": pair["evidence"]})
    assert first.status_code == 200 and first.get_json()["pair"]["version"] == 2
    auth.logout()
    auth.login("admin")
    stale = post(client, auth, url, {"version": 1, "instruction": "Edited by the admin?", "answer": "No.", "evidence": []})
    assert stale.status_code == 409
    body = stale.get_json()
    assert "researcher changed this pair" in body["error"] and "nothing was saved" in body["error"]
    assert body["pair"]["instruction"] == "Edited by the researcher?"
    gone = post(client, auth, url + "/delete", {"version": 1})
    assert gone.status_code == 409
    assert post(client, auth, url + "/delete", {"version": 2}).status_code == 200
    late = post(client, auth, url, {"version": 2, "instruction": "x", "answer": "y", "evidence": []})
    assert late.status_code == 409 and "admin deleted this pair" in late.get_json()["error"]
    with demo.app_context():
        assert select_questions("authored") == []
        assert db.session.get(Question, pair["question_id"]) is None


def test_an_edit_after_answers_keeps_the_answered_question(demo, client, auth, doc, runner, stub, monkeypatch):
    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")
    auth.login("researcher")
    pair = create(client, auth, doc).get_json()["pair"]
    result = runner.invoke(args=["generate", "--base-url", stub.base_url, "--model", "m", "--questions", "authored"])
    assert result.exit_code == 0, result.output
    edited = post(client, auth, f"/author/pairs/{pair['id']}", {"version": 1, "instruction": "A new question?",
                                                                "answer": "A new answer.", "evidence": []})
    new_question = edited.get_json()["pair"]["question_id"]
    assert new_question != pair["question_id"]
    with demo.app_context():
        old = db.session.get(Question, pair["question_id"])
        assert (old.instruction, old.reference) == ("What is the title?", "The first line.")
        assert [q.question_id for q in select_questions("authored")] == [new_question]


def test_export_then_import_reproduces_the_pairs(demo, client, auth, doc):
    auth.login("researcher")
    text = doc["text"]
    create(client, auth, doc)
    create(client, auth, doc, instruction="Second?", answer="Two.", evidence=[span(text, text[200:260]),
                                                                              span(text, text[500:520])])
    exported = client.get(f"/author/documents/{doc['id']}/export")
    line = json.loads(exported.get_data(as_text=True))
    assert list(line)[:5] == ["instructions", "outputs", "input", "source", "evaluation"]
    assert line["input"] == text and line["instructions"][-2:] == ["What is the title?", "Second?"]
    assert line["authored"][:-2] == [None] * (len(line["instructions"]) - 2)
    assert [len(a["evidence"]) for a in line["authored"][-2:]] == [1, 2]
    with demo.app_context():
        before = [(p.instruction, p.answer, p.evidence, p.author_name)
                  for p in db.session.scalars(select(AuthoredPair).order_by(AuthoredPair.id))]
        for p in db.session.scalars(select(AuthoredPair)):
            db.session.delete(p)
        db.session.commit()
    upload = {"csrf_token": auth.token(), "file": (io.BytesIO(exported.get_data()), "export.jsonl")}
    page = client.post("/author/import", data=upload, content_type="multipart/form-data", follow_redirects=True)
    assert "2 pairs added" in page.get_data(as_text=True)
    with demo.app_context():
        after = [(p.instruction, p.answer, p.evidence, p.author_name)
                 for p in db.session.scalars(select(AuthoredPair).order_by(AuthoredPair.id))]
    assert after == before
    again = client.post("/author/import", data={"csrf_token": auth.token(),
                                                "file": (io.BytesIO(exported.get_data()), "export.jsonl")},
                        content_type="multipart/form-data", follow_redirects=True)
    assert "0 pairs added, 2 already there" in again.get_data(as_text=True)


def test_a_bad_import_names_file_line_and_field_and_stores_nothing(demo, client, auth):
    auth.login("researcher")
    lines = [{"instructions": ["q"], "outputs": ["a"], "input": "A new document text.", "source": "mine",
              "evaluation": "f1", "authored": [{"author": "x", "evidence": []}]},
             {"instructions": ["q"], "outputs": ["a"], "input": "Another text.", "source": "mine",
              "evaluation": "f1", "authored": [{"evidence": [{"start": 0, "end": 3, "quote": "abc"}]}]}]
    raw = "".join(json.dumps(l) + "\n" for l in lines).encode()
    page = client.post("/author/import", data={"csrf_token": auth.token(), "file": (io.BytesIO(raw), "mine.jsonl")},
                       content_type="multipart/form-data", follow_redirects=True).get_data(as_text=True)
    assert "mine.jsonl, line 2, field authored[0] evidence 1" in page and "Nothing was imported" in page
    with demo.app_context():
        assert db.session.scalar(select(AuthoredPair.id)) is None
        assert db.session.scalar(select(Document.id).where(Document.collection == "imported")) is None


def test_an_edit_with_a_nul_character_is_refused_and_the_pair_is_unchanged(demo, client, auth, doc):
    auth.login("researcher")
    pair = create(client, auth, doc).get_json()["pair"]
    response = post(client, auth, f"/author/pairs/{pair['id']}", {
        "version": 1, "instruction": "Edited\x00?", "answer": "Yes.", "evidence": pair["evidence"]})
    assert response.status_code == 400
    assert "instruction: contains a NUL character (\\u0000)" in response.get_json()["error"]
    with demo.app_context():
        stored = db.session.get(AuthoredPair, pair["id"])
        assert (stored.instruction, stored.version) == ("What is the title?", 1)


@pytest.mark.parametrize("line, message", [
    ({"instructions": ["q"], "outputs": ["a"], "input": "A new\x00 document.", "source": "mine", "evaluation": "f1"},
     "mine.jsonl, line 1, field input: contains a NUL character (\\u0000)"),
    ({"instructions": ["q\x00"], "outputs": ["a"], "input": "A new document.", "source": "mine", "evaluation": "f1"},
     "mine.jsonl, line 1, field instructions: contains a NUL character (\\u0000)"),
    ({"instructions": ["q"], "outputs": ["a"], "input": "A new document.", "source": "mine", "evaluation": "f1",
      "authored": [{"author": "x" * 81, "evidence": []}]},
     "mine.jsonl, line 1, field authored author: is 81 characters long; at most 80 are allowed"),
])
def test_an_import_with_text_the_database_cannot_store_names_the_field_and_stores_nothing(demo, client, auth, line,
                                                                                         message):
    auth.login("researcher")
    raw = (json.dumps(line) + "\n").encode()
    page = client.post("/author/import", data={"csrf_token": auth.token(), "file": (io.BytesIO(raw), "mine.jsonl")},
                       content_type="multipart/form-data", follow_redirects=True).get_data(as_text=True)
    assert message in page and "Nothing was imported" in page
    with demo.app_context():
        assert db.session.scalar(select(AuthoredPair.id)) is None
        assert db.session.scalar(select(Document.id).where(Document.collection == "imported")) is None


def test_half_a_surrogate_pair_is_refused_naming_the_field_not_a_500(demo, client, auth, doc):
    auth.login("researcher")
    body = b'{"instruction": "What\\ud800?", "answer": "Yes.", "evidence": []}'  # JSON can name half a pair
    response = client.post(f"/author/documents/{doc['id']}/pairs", data=body, content_type="application/json",
                           headers={"X-CSRFToken": auth.token()})
    assert response.status_code == 400
    assert response.get_json()["error"] == "instruction: holds half of a surrogate pair, which is not valid Unicode text"
    with demo.app_context():
        assert db.session.scalar(select(AuthoredPair.id)) is None
