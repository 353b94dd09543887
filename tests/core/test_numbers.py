"""Whole numbers typed as text: ASCII digits only, bounded before conversion, never an exception."""
from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from app.core.numbers import parse_whole_number
from app.models.ids import MAX_DB_ID, parse_db_id

pytestmark = pytest.mark.database_free

# Digits that str.isdigit() accepts and int() refuses ('¹', '²3') or reads as another number ('٣' is 3,
# '３' fullwidth 3, '〇' is not even isdigit, '十' is numeric but no digit): none of them is an id.
NOT_ASCII = ["¹", "²3", "1²", "٣", "१२", "３", "12３", "〇", "十", "一二", "½", "⑦", "𝟙"]


@pytest.mark.parametrize("text", NOT_ASCII)
def test_digits_of_other_scripts_are_not_numbers(text):
    assert parse_whole_number(text, maximum=10**9) is None
    assert parse_db_id(text) is None


@pytest.mark.parametrize("text, expected", [
    ("0", 0), ("7", 7), (" 12 ", 12), ("007", 7), (str(MAX_DB_ID), MAX_DB_ID), ("\u3000" + "42\t", 42),
])
def test_ascii_digits_within_range_are_read(text, expected):
    assert parse_db_id(text) == expected


@pytest.mark.parametrize("text", [
    "", "  ", None, "-1", "+1", "1.0", "1e3", "0x10", "1_000", "1 2", str(MAX_DB_ID + 1), "9" * 5000, "00000000001",
])
def test_everything_else_is_none(text):
    assert parse_db_id(text) is None


def test_the_maximum_bounds_the_value_and_the_length():
    assert parse_whole_number("9999", maximum=9999) == 9999
    assert parse_whole_number("10000", maximum=9999) is None
    assert parse_whole_number("00001", maximum=9999) is None  # longer than the maximum's digits


@given(st.text(max_size=40))
@example("¹")
@example("²3")
@example("٣")
@example("9" * 5000)
def test_any_text_is_a_number_in_range_or_none_never_an_error(text):
    value = parse_db_id(text)
    if value is not None:
        digits = text.strip()
        assert 0 <= value <= MAX_DB_ID
        assert digits.isascii() and digits.isdigit() and int(digits) == value


@given(st.integers(min_value=0, max_value=MAX_DB_ID))
def test_every_storable_id_reads_back(number):
    assert parse_db_id(str(number)) == number
    assert parse_db_id(f" {number}\n") == number
