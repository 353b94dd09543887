"""display_answer: each layout habit a system may have is gone from what the annotator is shown."""
from __future__ import annotations

import pytest

from app.core.text import display_answer

pytestmark = pytest.mark.database_free  # a pure core: the PostgreSQL pass leaves it out

PLAIN = "The answer is 42.\n\nBecause:\n- one\n- two"


@pytest.mark.parametrize("habit, text", [
    ("leading spaces", "   " + PLAIN),
    ("leading newlines", "\n\n  " + PLAIN),
    ("leading tab", "\t" + PLAIN),
    ("trailing whitespace", PLAIN + " \n\n\t "),
    ("CRLF line ends", PLAIN.replace("\n", "\r\n")),
    ("CR line ends", PLAIN.replace("\n", "\r")),
    ("unicode line separators", PLAIN.replace("\n\n", "\u2029").replace("\n", "\u2028")),
    ("byte-order mark", "\ufeff" + PLAIN),
    ("zero-width characters", "The\u200b answer\u200d is\u2060 42.\u200c\n\nBecause:\n- one\n- t\u00adwo"),
    ("trailing spaces on lines", "The answer is 42.   \n\nBecause: \t\n- one  \n- two"),
    ("runs of blank lines", "The answer is 42.\n\n\n\n\nBecause:\n- one\n- two"),
    ("blank lines made of spaces", "The answer is 42.\n   \n \t \n\nBecause:\n- one\n- two"),
    ("no-break spaces", "The\u00a0answer\u202fis\u200942.\n\nBecause:\n- one\n- two"),
    ("everything at once", "\ufeff \r\n The answer is 42.  \r\n\r\n\r\n\r\nBecause:\r\n- one\u200b \r\n- two \r\n\r\n"),
])
def test_a_layout_habit_is_not_shown(habit, text):
    assert display_answer(text) == PLAIN, habit


def test_tabs_indent_like_spaces():
    assert display_answer("List:\n\t- one\n\t\t- two") == display_answer("List:\n    - one\n        - two")


def test_words_line_breaks_and_one_blank_line_are_kept():
    text = "First line\nsecond line\n\nNew paragraph with  two spaces inside.\n    indented code"
    assert display_answer(text) == text


def test_long_unbroken_lines_and_empty_text_are_left_as_they_are():
    assert display_answer("x" * 5000) == "x" * 5000  # wrapped by the page's CSS (overflow-wrap: anywhere)
    assert display_answer("") == "" and display_answer(" \r\n\ufeff\t") == ""
