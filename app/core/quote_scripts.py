"""What a quote's words are, script by script: the units quote verification compares (app.core.quotes).

Han, Kana, Hangul and Thai are written without spaces between words (Hangul with spaces between phrases,
which carry their particles): there, each character is a unit of its own, with the combining marks that
follow it, so a quote may start or end at any character. Every other script is read in words: a run of
letters, digits and combining marks, and a number keeps its inner punctuation (1.5, 1,000, 10:30).

A quote needs a minimum substance to count as evidence: four words, or six Han, Kana or Hangul
characters, or ten Thai characters; a quote mixing scripts reaches it when its shares add up to one
(words / 4 + Han, Kana and Hangul characters / 6 + Thai characters / 10 >= 1).

Pure: standard library only.
"""
from __future__ import annotations

import re
import unicodedata
from functools import cache

# Scripts written without spaces between words, read character by character.
CHARACTER_RANGES = {
    "han": "\u2e80-\u2fdf\u3005\u3007\u3021-\u3029\u3038-\u303b\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
           "\U00020000-\U0003ffff",
    "kana": "\u3041-\u309f\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f\U0001b000-\U0001b16f",
    "hangul": "\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff",
    "thai": "\u0e00-\u0e7f",
}
_ALL_CHARACTERS = "".join(CHARACTER_RANGES.values())
_CHARACTER = re.compile(f"[{_ALL_CHARACTERS}]")
_THAI = re.compile(f"[{CHARACTER_RANGES['thai']}]")

MINIMUM_WORDS = 4
MINIMUM_CHARACTERS = 6  # Han, Kana or Hangul
MINIMUM_THAI = 10
MINIMUM_TEXT = (f"at least {MINIMUM_WORDS} words, {MINIMUM_CHARACTERS} Han, Kana or Hangul characters, "
                f"or {MINIMUM_THAI} Thai characters")

# Negations, for naming a change: words of space-separated scripts, and marks within a run of characters.
NEGATION_WORDS = frozenset({"not", "no", "never", "none", "nor", "cannot", "without", "nothing", "nobody",
                            "neither", "t"})  # "t": what is left of n't once punctuation is dropped
NEGATION_MARKS = ("不", "没", "沒", "非", "无", "無", "未", "别", "別", "莫", "勿", "ない", "ません", "않", "못", "ไม่")


def is_mark(char: str) -> bool:
    return unicodedata.category(char)[0] == "M"


def is_character_unit(char: str) -> bool:
    """Is this a letter or digit of a script read character by character (Han, Kana, Hangul, Thai)?"""
    return bool(_CHARACTER.match(char)) and (char.isalnum() or is_mark(char))


@cache
def _marks() -> str:
    """Every combining mark of the first two planes and the variation selectors, as a character class body."""
    ranges: list[list[int]] = []
    for code in (*range(0x300, 0x20000), *range(0xE0100, 0xE01F0)):
        if unicodedata.category(chr(code))[0] == "M":
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1][1] = code
            else:
                ranges.append([code, code])
    return "".join(re.escape(chr(a)) + ("-" + re.escape(chr(b)) if b > a else "") for a, b in ranges)


@cache
def token_pattern() -> re.Pattern[str]:
    """One unit per match: a number with its inner punctuation, a character of a script written without spaces
    (with its marks), or a word of any other script (letters, digits and marks)."""
    marks = _marks()
    return re.compile(rf"\d+(?:[.,:/]\d+)+|(?=[^\W_])[{_ALL_CHARACTERS}][{marks}]*"
                      rf"|(?:[^\W_{_ALL_CHARACTERS}]|[{marks}])+")


def continues(text: str, left: int, right: int) -> bool:
    """Does the unit at text[left] go on into text[right]? A word or a number does (1.5, 1,000 and 10:30 are one
    number), and so does any character into its combining marks; two characters of a script read character by
    character, or one of them and a word, do not."""
    if left < 0 or right >= len(text):
        return False
    a, b = text[left], text[right]
    if is_mark(b):
        return True
    if (a.isalnum() or is_mark(a)) and b.isalnum():
        return not (is_character_unit(a) or is_character_unit(b))
    separator_after = a in ".,:/" and left > 0 and text[left - 1].isdigit() and b.isdigit()
    separator_next = b in ".,:/" and right + 1 < len(text) and a.isdigit() and text[right + 1].isdigit()
    return separator_after or separator_next


def substance(units: list[str]) -> float:
    """How much of the minimum a quote's units reach (1.0 is the minimum)."""
    total = 0.0
    for unit in units:
        if _THAI.match(unit[0]):
            total += 1 / MINIMUM_THAI
        elif is_character_unit(unit[0]):
            total += 1 / MINIMUM_CHARACTERS
        else:
            total += 1 / MINIMUM_WORDS
    return total


def too_short(units: list[str]) -> bool:
    return substance(units) < 1 - 1e-9


def describe_size(units: list[str]) -> str:
    """"2 words", "5 characters", "3 words and 4 characters": what a quote holds, for its reason."""
    characters = sum(is_character_unit(unit[0]) for unit in units)
    words = len(units) - characters
    parts = [f"{n} {noun}{'s' if n != 1 else ''}" for n, noun in ((words, "word"), (characters, "character")) if n]
    return " and ".join(parts) or "no words"


def has_negation(text: str, words: list[str]) -> bool:
    """Does a changed stretch hold a negation: a negating word, or a negation mark inside a run of characters?"""
    return any(word.lower() in NEGATION_WORDS for word in words) or any(mark in text for mark in NEGATION_MARKS)
