"""Pair validation, evidence spans and the task-file round trip of app.core.generation.authoring."""
from __future__ import annotations

import json

import pytest

from app.core.generation.authoring import PairError, check_pair, check_span, export_line, read_line

pytestmark = pytest.mark.database_free  # a pure core: the PostgreSQL pass leaves it out

DOC = "Le café était fermé. 日本語 text\r\nsecond line with the answer: forty-two."


def span(quote: str) -> dict:
    start = DOC.index(quote)
    return {"start": start, "end": start + len(quote), "quote": quote}


def test_a_pair_keeps_its_spans_sorted_and_unique():
    pair = check_pair(DOC, "  What is the answer?\r\n", " forty-two ", [span("forty-two"), span("café"), span("café")])
    assert (pair.instruction, pair.answer) == ("What is the answer?", "forty-two")
    assert [s.quote for s in pair.spans] == ["café", "forty-two"]
    assert DOC[pair.spans[0].start:pair.spans[0].end] == "café"  # code points, not UTF-16 units


@pytest.mark.parametrize("instruction,answer,message", [
    ("", "a", "instruction: write the instruction"), ("   ", "a", "instruction: write the instruction"),
    ("q", "", "answer: write the answer"), ("q", None, "answer: write the answer"),
])
def test_empty_instruction_or_answer_is_refused(instruction, answer, message):
    with pytest.raises(PairError, match=message):
        check_pair(DOC, instruction, answer)


@pytest.mark.parametrize("raw,message", [
    ({"start": 0, "end": 3, "quote": "Lx "}, "does not match the document at characters 0-3"),
    ({"start": -1, "end": 3, "quote": "x"}, "not inside the document"),
    ({"start": 5, "end": 5, "quote": ""}, "not inside the document"),
    ({"start": 0, "end": len(DOC) + 1, "quote": DOC + "!"}, "not inside the document"),
    ({"start": "0", "end": 3, "quote": "Le "}, "whole numbers"),
    ({"start": True, "end": 3, "quote": "Le "}, "whole numbers"),
    ({"start": 0, "end": 3}, "quote must be text"),
    ("0-3", "a span is an object"),
])
def test_a_span_must_lie_inside_the_document_and_match_it(raw, message):
    with pytest.raises(PairError, match=message):
        check_span(DOC, raw)


def test_export_then_read_back_reproduces_the_pairs():
    pair = check_pair(DOC, "What is the answer?", "forty-two", [span("forty-two")])
    pair = type(pair)(pair.instruction, pair.answer, pair.spans, "ada", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z")
    line = export_line(DOC, "demo_task", "human", [("Old question?", "Old answer")], [pair])
    assert line["instructions"] == ["Old question?", "What is the answer?"]
    assert line["outputs"] == ["Old answer", "forty-two"]
    assert list(line)[:5] == ["instructions", "outputs", "input", "source", "evaluation"]
    back = read_line(json.loads(json.dumps(line)), "f.jsonl, line 1")
    assert back.originals == [("Old question?", "Old answer")]
    assert back.pairs == [pair]
    assert (back.text, back.source, back.evaluation) == (DOC, "demo_task", "human")


def test_a_plain_leval_line_reads_as_originals_only():
    back = read_line({"instructions": ["q"], "outputs": ["a"], "input": "doc", "source": "s", "evaluation": "f1"}, "x")
    assert back.originals == [("q", "a")] and back.pairs == []


@pytest.mark.parametrize("change,message", [
    ({"input": ""}, "f.jsonl, line 3, field input"),
    ({"outputs": ["a"]}, "field outputs: 1 outputs for 2 instructions"),
    ({"authored": [None]}, "field authored: one entry"),
    ({"authored": [None, {"evidence": [{"start": 0, "end": 2, "quote": "zz"}]}]}, r"field authored\[1\] evidence 1"),
    ({"authored": [None, {"author": 5}]}, "author and times must be text"),
])
def test_bad_lines_name_file_line_and_field(change, message):
    line = {"instructions": ["q", "q2"], "outputs": ["a", "a2"], "input": "document text", "source": "s",
            "evaluation": "f1", "authored": [None, {"author": "ada"}]}
    line.update(change)
    with pytest.raises(PairError, match=message):
        read_line(line, "f.jsonl, line 3")


def test_pane_offsets_map_to_the_stored_text_and_back():
    from app.core.generation import authoring

    text = "one\r\ntwo\r\n\r\nthree café\rfour"
    shown = authoring.normalise_newlines(text)
    quote = "two\n\nthree"
    start = shown.index(quote)
    stored = authoring.span_from_pane(text, start, start + len(quote), quote)
    assert text[stored.start:stored.end] == stored.quote == "two\r\n\r\nthree"
    assert authoring.to_shown(text, stored.start) == start
    assert authoring.to_shown(text, stored.end) == start + len(quote)
    for i in range(len(shown) + 1):
        assert authoring.to_shown(text, authoring.to_stored(text, i)) == i
    with pytest.raises(PairError, match="selection does not match"):
        authoring.span_from_pane(text, 0, 3, "two")
    assert authoring.segment_starts(shown, ["one\ntwo", "three"]) == [0, 9]
