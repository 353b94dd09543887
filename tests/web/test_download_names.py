"""Download names (audit "Hardening, second round", finding 4): every Content-Disposition is one ASCII
`filename` and one RFC 5987 `filename*`, built by app.web.downloads from a sanitised name.

The routes are fuzzed with tests/support/hostile_names.py through the real app; what Chromium saves is
checked in tests/e2e/test_download_names.py.
"""
from __future__ import annotations

import io
import json
import re
import unicodedata
from urllib.parse import unquote

import pytest
from sqlalchemy import select

from app.core.filenames import MAX_NAME_BYTES, ascii_fallback, is_windows_reserved, safe_file_name
from app.extensions import db
from app.models import Document
from app.services.studies.setup import StudySpec, create_study
from tests.support.hostile_names import HOSTILE_NAMES
from tests.support.predictions import load_demo_data

# The whole header, nothing else: a second filename*, a line break or a stray ; cannot hide in it.
HEADER_RE = re.compile(r"attachment; filename=(?P<ascii>[A-Za-z0-9._-]+); "
                       r"filename\*=UTF-8''(?P<utf8>[A-Za-z0-9%!#$&+.^_`|~-]+)")


def saved_name(response) -> str:
    """The name a browser saves: filename* decoded; the header must hold nothing but the two names."""
    header = response.headers["Content-Disposition"]
    match = HEADER_RE.fullmatch(header)
    assert match, f"unexpected Content-Disposition: {header!r}"
    name = unquote(match["utf8"], errors="strict")
    assert match["ascii"] == ascii_fallback(name)
    return name


@pytest.mark.database_free
@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=range(len(HOSTILE_NAMES)))
def test_a_hostile_name_becomes_a_safe_file_name_with_the_given_extension(name):
    safe = safe_file_name(name, ".jsonl")
    stem = safe[:-len(".jsonl")]
    assert safe.endswith(".jsonl") and stem and stem == stem.strip(". ")
    assert not any(ch in '/\\";:*?<>|~\r\n' or unicodedata.category(ch) in ("Cc", "Cf") for ch in safe)
    assert len(safe.encode("utf-8")) <= MAX_NAME_BYTES and not is_windows_reserved(stem)
    fallback = ascii_fallback(safe)
    assert fallback.isascii() and fallback.endswith(".jsonl") and re.fullmatch(r"[A-Za-z0-9._-]+", fallback)
    assert safe_file_name(safe, ".jsonl") == safe  # sanitising twice changes nothing


@pytest.mark.database_free
@pytest.mark.parametrize("name, extension, expected", [
    ('x"; filename*=UTF-8\'\'evil.html', ".jsonl", "x___filename_=UTF-8''evil.html.jsonl"),
    ("report.html", ".jsonl", "report.html.jsonl"),  # never another extension
    ("scores.CSV", ".csv", "scores.csv"),
    ("line\r\nbreak", ".json", "line_break.json"),
    ("L-Eval human evaluation-scores-all", ".csv", "L-Eval_human_evaluation-scores-all.csv"),  # issue 40, item 10
    ("  two  spaces\t", ".csv", "two_spaces.csv"),
    ("evil\u202egnp.html", ".jsonl", "evilgnp.html.jsonl"),
    ("../../etc/passwd", ".jsonl", "_.._etc_passwd.jsonl"),
    ("...", ".jsonl", "download.jsonl"),
    ("", ".csv", "download.csv"),
    ("com1", ".jsonl", "_com1.jsonl"),
    ("中文来源", ".jsonl", "中文来源.jsonl"),
])
def test_safe_file_names(name, extension, expected):
    assert safe_file_name(name, extension) == expected


@pytest.mark.database_free
@pytest.mark.parametrize("name, expected", [("中文来源.jsonl", "download.jsonl"), ("café – ü.csv", "cafe_u.csv"),
                                            ("com1.jsonl", "_com1.jsonl")])
def test_the_ascii_fallback_is_never_empty_nor_a_hidden_file(name, expected):
    assert ascii_fallback(name) == expected


def import_task_file(client, auth, sources: list[str]) -> None:
    lines = [{"instructions": ["q"], "outputs": ["a"], "input": f"Document number {i}: a text about {i}.",
              "source": source, "evaluation": "f1"} for i, source in enumerate(sources)]
    raw = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8")
    page = client.post("/author/import", data={"csrf_token": auth.token(), "file": (io.BytesIO(raw), "hostile.jsonl")},
                       content_type="multipart/form-data", follow_redirects=True).get_data(as_text=True)
    assert f"{len(sources)} documents ({len(sources)} new)" in page, page


def test_the_authoring_export_of_every_hostile_source_is_saved_under_its_sanitised_name(app, client, auth):
    auth.login("researcher")
    import_task_file(client, auth, HOSTILE_NAMES)
    with app.app_context():
        documents = [(d.id, d.task) for d in db.session.scalars(select(Document).order_by(Document.id))]
    assert len(documents) == len(HOSTILE_NAMES)
    for document_id, task in documents:
        response = client.get(f"/author/documents/{document_id}/export")
        assert response.status_code == 200, (task, response.status_code)
        assert response.mimetype == "application/x-ndjson"
        assert saved_name(response) == safe_file_name(f"{task}-{document_id}.authored.jsonl", ".jsonl")
        assert json.loads(response.get_data(as_text=True))["source"]  # the file itself is intact


STUDY_NAMES = [name for name in HOSTILE_NAMES if not any(unicodedata.category(ch) == "Cc" for ch in name)][:12]


def test_the_results_downloads_of_hostile_study_names_are_saved_under_their_sanitised_names(app, client, auth):
    load_demo_data(app)
    with app.app_context():
        ids = {}
        for number, name in enumerate(STUDY_NAMES):
            study = create_study(StudySpec(name=f"hostile {number}"))
            study.name = name[:120]  # a name from before new names kept to STUDY_NAME_RULE (or put in the database)
            ids[study.id] = name[:120]
        db.session.commit()
    auth.login("researcher")
    for study_id, name in ids.items():
        for url, kind, extension in [(f"/results/export/scores.csv?study={study_id}", "scores-all", ".csv"),
                                     (f"/results/export/scores.jsonl?study={study_id}&rounds=current",
                                      "scores-current", ".jsonl"),
                                     (f"/results/export/results.json?study={study_id}", "results", ".json")]:
            response = client.get(url)
            assert response.status_code == 200, (name, url)
            assert saved_name(response) == safe_file_name(f"{name}-{kind}{extension}", extension)
            assert saved_name(response).endswith(extension)
        response = client.get(f"/results/length-instruction/prompts.jsonl?study={study_id}")
        assert saved_name(response) == safe_file_name(f"{name}.length_instruction.prompts.jsonl", ".jsonl")
