"""Property tests of quote verification against an independent oracle (tests/support/quote_text.py: str.find on
folded text for exact, difflib on units for close), on generated English, Chinese and mixed documents: exact
copies, whitespace, case and punctuation changes, spacing in Chinese, one digit changed, a negation added or
removed, a name swapped, truncated quotes and quotes across paragraphs."""
from __future__ import annotations

import random
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from app.core.quotes import CLOSE, EXACT, UNSUPPORTED, DocumentIndex
from tests.support.quote_text import (
    EN_FIRST,
    EN_LAST,
    ZH_GIVEN,
    ZH_SURNAMES,
    ZH_VERBS,
    document,
    fold,
    oracle_status,
    token_changes,
    tokens,
)

pytestmark = pytest.mark.database_free

PROPERTY = settings(max_examples=60, deadline=None)
UNIT = re.compile(r"[A-Za-z0-9]+|[\u4e00-\u9fff]")  # the generated documents' units (ASCII words, Han characters)
WHITESPACE = st.sampled_from([" ", "  ", "\n", "\t", " \r\n ", "\u3000"])


@st.composite
def passages(draw, script: str | None = None, *, across: bool = False, min_units: int = 6):
    """(document, start, end): a document and a span of 6 to 30 of its units, starting and ending on one."""
    script = script or draw(st.sampled_from(["en", "zh", "mixed"]))
    text = document(random.Random(draw(st.integers(0, 10 ** 6))), script=script, paragraphs=4)
    units = [m.span() for m in UNIT.finditer(text)]
    if across:  # a span that runs over a paragraph break
        at = draw(st.sampled_from([m.start() for m in re.finditer("\n\n", text)]))
        middle = next(i for i, (start, _) in enumerate(units) if start > at)
        first = draw(st.integers(max(0, middle - 12), middle - 1))
        last = draw(st.integers(middle, min(len(units) - 1, first + 30)))
        assume(last - first + 1 >= min_units)
    else:
        first = draw(st.integers(0, len(units) - min_units))
        last = draw(st.integers(first + min_units - 1, min(len(units) - 1, first + 29)))
    return text, units[first][0], units[last][1]


def checked(text: str, quote: str):
    """The verifier's check, asserted equal to the oracle's status, with offsets that hold the quote's units."""
    check = DocumentIndex(text).verify(quote)
    assert check.status == oracle_status(text, quote), (quote, check)
    if check.status in (EXACT, CLOSE):
        assert tokens(text[check.start:check.end]) == tokens(quote), (quote, check)
        if check.status == EXACT:
            assert fold(text[check.start:check.end]) == fold(quote), (quote, check)
    else:
        assert (check.start, check.end) == (None, None)
    return check


def distance(a: list[str], b: list[str]) -> int:
    """Edit distance between two lists of units (insert, delete, replace: one each)."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, start=1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1]


def names_the_change(reason: str, text: str, source: str, quote: str) -> bool:
    """Does the reason show what changed? When it names a nearest passage, that passage must be at least as near
    the quote as the one it was made from (templated text repeats phrases: another place may be as near), and
    the reason must show one of difflib's changes between them; else a change from the source."""
    stitched = re.search(r"stitched from two places: its start is at (\d+)–(\d+), its end at (\d+)–(\d+)", reason)
    if stitched:  # true when the quote is the start of one place and the end of another, verbatim
        a, b, c, d = (int(group) for group in stitched.groups())
        head, tail, units = tokens(text[a:b]), tokens(text[c:d]), tokens(quote)
        return units[:len(head)] == head and units[len(units) - len(tail):] == tail and len(head) + len(tail) >= \
            len(units)
    located = re.search(r"nearest passage at (\d+)–(\d+) differs in", reason)
    if located:
        passage = text[int(located[1]):int(located[2])]
        assert distance(tokens(passage), tokens(quote)) <= distance(tokens(source), tokens(quote)), (passage, reason)
        source = passage
    flat = "".join(tokens(reason))
    return any("".join(tokens(new or old)) in flat for old, new in token_changes(source, quote))


@PROPERTY
@given(passages())
def test_exact_copies(case):
    text, start, end = case
    assert checked(text, text[start:end]).status == EXACT


@PROPERTY
@given(passages(across=True), st.data())
def test_whitespace_changes_and_quotes_across_paragraphs_stay_exact(case, data):
    text, start, end = case
    quote = re.sub(r"\s+", lambda _: data.draw(WHITESPACE), text[start:end])
    assert checked(text, data.draw(WHITESPACE) + quote + data.draw(WHITESPACE)).status == EXACT


@PROPERTY
@given(passages(across=True))
def test_a_paragraph_break_left_out_is_close(case):
    text, start, end = case
    joined = re.sub(r"\n\n", "", text[start:end])
    status = checked(text, joined).status
    assert status in (EXACT, CLOSE)  # an English break needs its space: "resigned.It" is close, as is "天。李"


@PROPERTY
@given(passages(), st.sampled_from(["upper", "lower", "no punctuation", "other punctuation"]))
def test_case_and_punctuation_changes_are_exact_or_close(case, change):
    text, start, end = case
    passage = text[start:end]
    quote = {"upper": passage.upper(), "lower": passage.lower(),
             "no punctuation": re.sub(r"[,.;，。]", "", passage),
             "other punctuation": passage.translate(str.maketrans({"，": "、", "。": "！", ",": ";", ".": "!"}))}[change]
    assert checked(text, quote).status in (EXACT, CLOSE)


@PROPERTY
@given(passages("zh"), st.data())
def test_spaces_between_chinese_characters_are_close(case, data):
    text, start, end = case
    passage = text[start:end]
    places = [i for i in range(1, len(passage)) if ("\u4e00" <= passage[i - 1] <= "\u9fff"
                                                    or "\u4e00" <= passage[i] <= "\u9fff")
              and not (passage[i - 1].isspace() or passage[i].isspace())]
    cuts = sorted(set(data.draw(st.lists(st.sampled_from(places), min_size=1, max_size=4))))
    quote = "".join(passage[a:b] + data.draw(WHITESPACE) for a, b in zip([0] + cuts, cuts)) + passage[cuts[-1]:]
    assert checked(text, quote).status == CLOSE


def altered(text: str, start: int, end: int, quote: str, kind: str) -> str:
    """The verifier's reason for an altered quote, which must be unsupported and name the change, and the kind of
    change when the passage it names differs from the quote as the source does (not another as near)."""
    assume(oracle_status(text, quote) == UNSUPPORTED)  # not by chance a passage of the document too
    # A change that leaves less than half the quote (a name of three characters in a six-character quote) leaves
    # nothing to find its passage by: that quote is "like nothing in the document", and its reason says so.
    assume(2 * distance(tokens(text[start:end]), tokens(quote)) < len(tokens(quote)))
    check = checked(text, quote)
    assert check.status == UNSUPPORTED
    assert names_the_change(check.reason, text, text[start:end], quote), (quote, text[start:end], check.reason)
    located = re.search(r"nearest passage at (\d+)–(\d+) differs in", check.reason)
    if located and token_changes(text[int(located[1]):int(located[2])], quote) == token_changes(text[start:end],
                                                                                                quote):
        assert f"differs in {kind}: " in check.reason, (quote, check.reason)
    return check.reason


@PROPERTY
@given(passages(), st.data())
def test_one_digit_changed_is_unsupported_and_named(case, data):
    text, start, end = case
    passage = text[start:end]
    digits = [m.start() for m in re.finditer(r"\d", passage)]
    assume(digits)
    at = data.draw(st.sampled_from(digits))
    quote = passage[:at] + str((int(passage[at]) + data.draw(st.integers(1, 9))) % 10) + passage[at + 1:]
    altered(text, start, end, quote, "a number")


NEGATABLE_EN = re.compile(r"\b(?:was|did|is) ")
NEGATION_EN = re.compile(r"\b(?:not|never) ")


@PROPERTY
@given(passages(), st.booleans(), st.data())
def test_a_negation_added_or_removed_is_unsupported_and_named(case, add, data):
    text, start, end = case
    passage = text[start:end]
    if add:
        places = [(m.end(), "not ") for m in NEGATABLE_EN.finditer(passage)] + \
                 [(m.start(), negated[0]) for verb, negated in ZH_VERBS for m in re.finditer(verb, passage)
                  if not passage[:m.start()].endswith(negated[0])]
        assume(places)
        at, word = data.draw(st.sampled_from(places))
        quote = passage[:at] + word + passage[at:]
    else:
        places = [m.span() for m in NEGATION_EN.finditer(passage)] + \
                 [m.span() for m in re.finditer("[不没无非]", passage)]
        assume(places)
        a, b = data.draw(st.sampled_from(places))
        quote = passage[:a] + passage[b:]
    assume(len(tokens(quote)) >= 6)
    altered(text, start, end, quote, "a negation")


NAME = re.compile(rf"\b(?:{'|'.join(EN_FIRST)}) (?:{'|'.join(EN_LAST)})\b|[{ZH_SURNAMES}](?:{'|'.join(ZH_GIVEN)})")


@PROPERTY
@given(passages(), st.data())
def test_a_name_swapped_is_unsupported_and_named(case, data):
    text, start, end = case
    passage = text[start:end]
    names = list(NAME.finditer(passage))
    assume(names)
    match = data.draw(st.sampled_from(names))
    rng = random.Random(data.draw(st.integers(0, 10 ** 6)))
    other = (f"{rng.choice(EN_FIRST)} {rng.choice(EN_LAST)}" if match.group().isascii()
             else rng.choice(ZH_SURNAMES) + rng.choice(ZH_GIVEN))
    assume(other != match.group())
    altered(text, start, end, passage[:match.start()] + other + passage[match.end():],
            "a name" if other.isascii() else "a word")


@PROPERTY
@given(passages(), st.integers(0, 6), st.integers(0, 6))
def test_truncated_quotes_agree_with_the_oracle(case, cut_start, cut_end):
    """Cut anywhere, even inside a word or a number: a Chinese quote stays exact, a cut word never is."""
    text, start, end = case
    quote = text[start + cut_start:end - cut_end]
    assume(quote.strip())
    check = checked(text, quote)
    if re.fullmatch(r"[\u4e00-\u9fff].*[\u4e00-\u9fff]", quote, re.DOTALL) and not check.too_short:
        assert check.status == EXACT
