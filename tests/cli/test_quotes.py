"""`python run.py verify-quotes DOCUMENT QUOTES.jsonl [--json]`: a text file, a stored question's document, bad input."""
from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import Question

DOCUMENT = "Minutes.\r\nIn 1998 the board resigned.\r\nIt did not meet again, and nobody minded.\n"


@pytest.fixture
def document_file(tmp_path):
    path = tmp_path / "minutes.txt"
    path.write_bytes(DOCUMENT.encode("utf-8"))  # CRLF kept: offsets count every character
    return path


def write_quotes(tmp_path, *lines: str):
    path = tmp_path / "quotes.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def json_lines(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines()]


def test_a_text_file_gets_one_json_object_per_quote_and_a_summary(runner, tmp_path, document_file):
    quotes = write_quotes(tmp_path, json.dumps({"quote": "the board resigned. It did"}), "",
                          json.dumps({"quote": "IT DID NOT MEET AGAIN"}),
                          json.dumps({"quote": "In 1997 the board resigned", "source": "judge"}),
                          json.dumps({"quote": "the board"}))
    result = runner.invoke(args=["verify-quotes", str(document_file), str(quotes), "--json"])
    assert result.exit_code == 0, result.output
    *rows, summary = json_lines(result.output)
    assert summary == {"summary": {"exact": 1, "close": 1, "unsupported": 2, "too_short": 1, "total": 4}}
    assert [list(row) for row in rows] == [["line", "quote", "status", "start", "end", "reason", "too_short"]] * 4
    exact, close, unsupported, short = rows
    assert (short["status"], short["too_short"], short["start"]) == ("unsupported", True, None)
    assert short["reason"].startswith("too short: 2 words, under the minimum of at least 4 words")
    assert (exact["line"], exact["status"]) == (1, "exact")
    assert DOCUMENT[exact["start"]:exact["end"]] == "the board resigned.\r\nIt did"
    assert (close["line"], close["status"]) == (3, "close")  # the blank line 2 is skipped, not renumbered
    assert DOCUMENT[close["start"]:close["end"]] == "It did not meet again"
    assert unsupported["status"] == "unsupported" and unsupported["start"] is None and unsupported["end"] is None
    assert "1997 vs 1998" in unsupported["reason"]


def test_without_json_a_table_and_a_count(runner, tmp_path, document_file):
    quotes = write_quotes(tmp_path, json.dumps({"quote": "In 1998 the board resigned"}),
                          json.dumps({"quote": "It did meet again"}), json.dumps({"quote": "resigned"}))
    result = runner.invoke(args=["verify-quotes", str(document_file), str(quotes)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split()[:4] == ["line", "status", "span", "quote"]
    start = DOCUMENT.index("In 1998 the board resigned")
    assert lines[1].split()[:3] == ["1", "exact", f"{start}-{start + len('In 1998 the board resigned')}"]
    assert lines[2].split()[:3] == ["2", "unsupported", "-"] and "negation" in lines[2]
    assert lines[3].split()[:3] == ["3", "unsupported", "-"] and "too short: 1 word" in lines[3]
    assert lines[-1] == "3 quotes: 1 exact, 0 close, 2 unsupported (1 too short)"


def test_a_stored_questions_document(runner, demo, tmp_path):
    with demo.app_context():
        question = db.session.scalars(select(Question).order_by(Question.id)).first()
        text, question_id = question.document.text, question.id
    words = text.split()
    passage = " ".join(words[40:52])
    quotes = write_quotes(tmp_path, json.dumps({"quote": passage}), json.dumps({"quote": passage.upper()}))
    result = runner.invoke(args=["verify-quotes", f"question:{question_id}", str(quotes), "--json"])
    assert result.exit_code == 0, result.output
    exact, close, summary = json_lines(result.output)
    assert exact["status"] == "exact" and " ".join(text[exact["start"]:exact["end"]].split()) == passage
    assert close["status"] in ("close", "exact") and close["start"] == exact["start"]
    assert summary["summary"]["total"] == 2


@pytest.mark.parametrize("line, message", [
    ('{"quote": "the board"', "line 2: not valid JSON"),
    ('{"quote": ' + "[" * 100_000 + "]" * 100_000 + "}",  # a RecursionError traceback before
     'line 2: field "quote" not valid JSON (JSON nested deeper than 100 levels, column 110)'),
    ('{"引文": ' + "9" * 5000 + "}", 'line 2: field "引文" not valid JSON (a number of 5,000 characters; at most 300'),
    ('["the board"]', 'line 2: expected an object like {"quote": "..."}, got a list'),
    ('"the board"', "line 2: expected an object like {\"quote\": \"...\"}, got a string"),
    ('{"text": "the board"}', 'line 2: field "quote" is missing'),
    ('{"quote": "   "}', 'line 2: field "quote" is empty'),
    ('{"quote": 1998}', 'line 2: field "quote" must be a string, got a number'),
    ('{"quote": null}', 'line 2: field "quote" must be a string, got null'),
])
def test_a_bad_line_names_file_line_and_field(runner, tmp_path, document_file, line, message):
    quotes = write_quotes(tmp_path, json.dumps({"quote": "the board"}), line)
    result = runner.invoke(args=["verify-quotes", str(document_file), str(quotes), "--json"])
    assert result.exit_code == 1
    assert f"Error: {quotes}, {message}" in result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert '"summary"' not in result.output  # nothing half-done is printed


def test_a_line_that_is_not_utf8(runner, tmp_path, document_file):
    quotes = tmp_path / "quotes.jsonl"
    quotes.write_bytes(b'{"quote": "the board"}\n{"quote": "caf\xe9"}\n')
    result = runner.invoke(args=["verify-quotes", str(document_file), str(quotes)])
    assert result.exit_code == 1 and f"Error: {quotes}, line 2: not UTF-8 text" in result.output


@pytest.mark.parametrize("which", ["document", "quotes"])
def test_a_missing_file(runner, tmp_path, document_file, which):
    quotes = write_quotes(tmp_path, json.dumps({"quote": "the board"}))
    missing = tmp_path / "absent.txt"
    args = [str(missing), str(quotes)] if which == "document" else [str(document_file), str(missing)]
    result = runner.invoke(args=["verify-quotes", *args])
    assert result.exit_code == 1
    assert f"Error: {'DOCUMENT' if which == 'document' else 'QUOTES'} {missing}: no such file" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("document, message", [
    ("question:999999", "DOCUMENT question:999999: no question with id 999999"),
    ("question:abc", "DOCUMENT question:abc: the id must be a number"),
    ("question:¹", "DOCUMENT question:¹: the id must be a number"),  # isdigit() but not int(): was a traceback
    ("question:9" + "9" * 30, "DOCUMENT question:9" + "9" * 30 + ": the id must be a number"),
])
def test_an_unknown_question(runner, tmp_path, document, message):
    quotes = write_quotes(tmp_path, json.dumps({"quote": "the board"}))
    result = runner.invoke(args=["verify-quotes", document, str(quotes)])
    assert result.exit_code == 1 and f"Error: {message}" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_document_that_is_not_utf8(runner, tmp_path):
    document = tmp_path / "latin1.txt"
    document.write_bytes("caf\xe9 au lait".encode("latin-1"))
    quotes = write_quotes(tmp_path, json.dumps({"quote": "au lait"}))
    result = runner.invoke(args=["verify-quotes", str(document), str(quotes)])
    assert result.exit_code == 1 and f"Error: DOCUMENT {document}: not UTF-8 text" in result.output
