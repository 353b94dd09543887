"""The one reader of outside JSON: whatever it is given, a value json would read, or JsonRefused saying why and
where; never RecursionError, int()'s 4,300-digit ValueError or anything else."""
from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.core.json_input import MAX_DEPTH, MAX_NUMBER_CHARS, JsonRefused, read_json

pytestmark = pytest.mark.database_free

SCALARS = (st.none() | st.booleans() | st.integers(min_value=-10**30, max_value=10**30)
           | st.floats(allow_nan=False) | st.text())
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=30)


def nested(depth: int, *, key: str = "field", opener: str = "[", closer: str = "]") -> str:
    return '{"' + key + '": ' + opener * depth + "0" + closer * depth + "}"


@given(VALUES)
def test_what_json_writes_is_read_back_as_it_was(value):
    assert read_json(json.dumps(value)) == value
    assert read_json(json.dumps(value, ensure_ascii=False).encode("utf-8")) == value


@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from('[]{}",:0123456789-.eE \n\\"abc中'), max_size=400) | st.text(max_size=200))
@example("[" * 100_000)
@example('{"n": ' + "9" * 5000 + "}")
@example('"\\ud800"')
@example("1" * 5000)
def test_any_text_is_json_s_value_or_a_located_refusal(text):
    try:
        value = read_json(text)
    except JsonRefused as refused:
        assert refused.reason and str(refused)
        return
    assert json.dumps(value) == json.dumps(json.loads(text))  # the same value json reads (NaN included)


@pytest.mark.parametrize("opener, closer", [("[", "]"), ('{"k": ', "}")])
def test_nesting_up_to_the_limit_is_read_and_one_deeper_is_refused_where_it_starts(opener, closer):
    assert read_json(nested(MAX_DEPTH - 1, opener=opener, closer=closer))
    with pytest.raises(JsonRefused) as refused:
        read_json(nested(MAX_DEPTH, opener=opener, closer=closer))
    assert refused.value.reason == f"JSON nested deeper than {MAX_DEPTH} levels"
    assert refused.value.field == "field" and refused.value.line == 1
    assert refused.value.column == len('{"field": ') + (MAX_DEPTH - 1) * len(opener) + 1


@pytest.mark.parametrize("depth", [1_000, 100_000, 200_000])
def test_deep_nesting_past_pythons_recursion_limit_is_refused_not_raised(depth):
    for text in (nested(depth), nested(depth, opener='{"k": ', closer="}"), "[" * depth + "]" * depth, "[" * depth):
        with pytest.raises(JsonRefused, match="nested deeper than 100 levels"):
            read_json(text)


def test_the_field_and_line_of_a_refusal_are_named_in_chinese_too():
    text = '{\n  "标题": "研究",\n  "答案": [\n' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "]}"
    with pytest.raises(JsonRefused) as refused:
        read_json(text.encode("utf-8"))
    assert refused.value.field == "答案" and refused.value.line == 4 and refused.value.path[:2] == ("答案", 0)
    assert "(in 答案.0.0.0.0.0.…)" in str(refused.value)


def test_a_number_past_the_limit_is_refused_before_int_converts_it():
    assert read_json('{"n": ' + "9" * MAX_NUMBER_CHARS + "}")["n"] == int("9" * MAX_NUMBER_CHARS)
    for number in ("9" * 5000, "-" + "1" * MAX_NUMBER_CHARS, "1." + "0" * MAX_NUMBER_CHARS):
        with pytest.raises(JsonRefused) as refused:
            read_json('{"rows": [1, {"gold": ' + number + "}]}")
        assert refused.value.path == ("rows", 1, "gold") and refused.value.field == "rows"
        assert refused.value.reason == f"a number of {len(number):,} characters; at most {MAX_NUMBER_CHARS} are read"


def test_brackets_and_digits_inside_strings_are_text():
    text = json.dumps({"prompt": "[" * 500 + "9" * 5000 + "{" * 500, "中文": "【】「」"})
    assert read_json(text)["prompt"].startswith("[[[")


def test_syntax_errors_bad_bytes_and_size_are_refused_with_their_place():
    with pytest.raises(JsonRefused) as refused:
        read_json('{"a": 1,\n "b": }')
    assert refused.value.reason.startswith("invalid JSON: Expecting value") and refused.value.line == 2
    with pytest.raises(JsonRefused, match=r"not valid UTF-8 \(byte 7\)"):
        read_json(b'{"a": "\xff"}')
    assert read_json(b'\xef\xbb\xbf{"a": "\xe4\xb8\xad"}') == {"a": "中"}
    with pytest.raises(JsonRefused, match="11 bytes of JSON; at most 10 are read"):
        read_json(b'{"a": 1234}', max_bytes=10)


def _read_below(frames: int, text: str) -> str:
    """read_json's refusal, called `frames` calls deep (a request handler, a job, a command)."""
    if frames:
        return _read_below(frames - 1, text)
    try:
        read_json(text)
    except JsonRefused as refused:
        return str(refused)
    return "read"


@pytest.mark.parametrize("text", ["[" * 1000, '{"a": [' * 600 + "}", "[" * 150 + "]" * 149])
def test_the_same_document_is_refused_the_same_way_however_deep_the_caller_is(text):
    """json meets its recursion limit sooner when called from deeper: the refusal names the first problem in the
    text all the same (these are too deep and also unfinished)."""
    refusals = {_read_below(frames, text) for frames in (0, 300, 700, 900)}
    assert len(refusals) == 1 and "nested deeper than 100 levels" in refusals.pop()
