"""Quote verification (app/core/quotes.py): hand-made cases, then 40 quotes planted in L-Eval's longest document.

The planted quotes are built at test time from ../shared/leval (its text is GPL and stays out of
the repository): 20 genuine ones with whitespace, line-break, quote-mark, dash, case and
punctuation variations, which must be exact or close with offsets that slice the original text to
the passage; 20 altered ones (a digit changed, a negation added or removed, a name swapped, a
sentence stitched from two places, a paraphrase, a quote from another document), all unsupported.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from app.core.quotes import CLOSE, EXACT, UNSUPPORTED, DocumentIndex, normalise, verify_quotes, words_of
from tests.support.shared import HUMAN_EVAL, REPO_ROOT, require_shared

pytestmark = pytest.mark.database_free  # a pure core: the PostgreSQL pass leaves it out

BOARD = "Minutes.\r\nIn 1998 the board resigned. It did not meet again, and didn't care.\r\n"


def loose_words(text: str) -> list[str]:
    return words_of(normalise(text)).words


# Hand-made cases: no shared data needed.

def test_the_changed_year_is_unsupported_and_the_reason_names_both_numbers():
    check = DocumentIndex(BOARD).verify("In 1997 the board resigned")
    assert (check.status, check.start, check.end) == (UNSUPPORTED, None, None)
    assert "a number: 1997 vs 1998" in check.reason
    exact = DocumentIndex(BOARD).verify("In 1998 the board resigned")
    assert exact.status == EXACT and BOARD[exact.start:exact.end] == "In 1998 the board resigned"


def test_offsets_map_back_through_nfkc_expanding_characters():
    text = "The ﬁrst ﬁeld is ﬁne and the ﬁfth is not."  # each ligature is one character that NFKC makes two
    check = DocumentIndex(text).verify("The first field is")
    assert check.status == EXACT
    assert text[check.start:check.end] == "The ﬁrst ﬁeld is"
    assert DocumentIndex(text).verify("fine and the fifth").start == text.index("ﬁne")
    assert DocumentIndex(text).verify("ield is fine and").status == UNSUPPORTED  # never half a word or ligature


def test_crlf_and_runs_of_whitespace_are_one_space_with_offsets_in_the_original():
    check = DocumentIndex(BOARD).verify("Minutes. In 1998 the")
    assert check.status == EXACT and BOARD[check.start:check.end] == "Minutes.\r\nIn 1998 the"
    assert DocumentIndex(BOARD).verify("  In 1998  the   board\n\tresigned  ").status == EXACT


def test_curly_quotes_and_dashes_fold_to_ascii_both_ways():
    text = "He said \u201cyes\u201d \u2014 and didn\u2019t look back; pages 10\u201312."
    index = DocumentIndex(text)
    check = index.verify('He said "yes" - and didn\'t look back')
    assert check.status == EXACT and text[check.start:check.end].startswith("He said \u201c")
    assert index.verify("look back; pages 10-12").status == EXACT
    straight = DocumentIndex("it isn't \"so\" at all").verify("isn\u2019t \u201cso\u201d at all")
    assert straight.status == EXACT and (straight.start, straight.end) == (3, 20)


def test_case_and_punctuation_only_are_close_with_the_passage_offsets():
    index = DocumentIndex(BOARD)
    check = index.verify("it did not meet again and didnt care")
    assert check.status == UNSUPPORTED  # "didnt" is not the words "didn" + "t": no word is ever merged
    check = index.verify("IT DID NOT MEET AGAIN")
    assert check.status == CLOSE and "case" in check.reason
    assert BOARD[check.start:check.end] == "It did not meet again"
    check = index.verify("...the board resigned; it did not meet again")
    assert check.status == CLOSE and BOARD[check.start:check.end] == "the board resigned. It did not meet again"


@pytest.mark.parametrize("quote, difference", [
    ("It did meet again", "negation"),
    ("It did not never meet again", "negation"),
    ("In 1998 the council resigned", "word: council vs board"),
    ("the board resigned. A new chair arrived in spring", "stitched"),
    ("the recipe needs two eggs and some flour", "no passage"),
])
def test_changed_content_is_unsupported(quote, difference):
    check = DocumentIndex(BOARD + "Reports were filed on time. " * 5 + "A new chair arrived in spring.").verify(quote)
    assert check.status == UNSUPPORTED and difference in check.reason, check


def test_an_added_or_dropped_word_is_no_negation_because_its_mark_reads_nothing():
    index = DocumentIndex(BOARD)
    assert index.verify("In 1998 the whole board resigned").reason.endswith("a word: whole vs (nothing)")
    assert index.verify("In 1998 board resigned").reason.endswith("a word: (nothing) vs the")
    assert "a negation: not vs (nothing)" in index.verify("It did not not meet again").reason


def test_a_number_is_never_matched_inside_a_longer_one_nor_a_word_inside_another():
    index = DocumentIndex("Back then it cost 1.5 million in 19978; nothing was left.")
    assert index.verify("then it cost 15 million").status == UNSUPPORTED
    assert index.verify("5 million in 19978").status == UNSUPPORTED
    assert "a number: 5 vs 1.5" in index.verify("5 million in 19978").reason
    assert index.verify("Back then it cost 1").status == UNSUPPORTED
    assert index.verify("it cost 1.5 million").status == EXACT
    assert "a number: 1997 vs 19978" in index.verify("million in 1997; nothing").reason
    assert "a negation: not vs nothing" in index.verify("in 19978; not was left").reason


@pytest.mark.parametrize("quote", ["", "   ", "\r\n\t"])
def test_an_empty_quote_raises(quote):
    with pytest.raises(ValueError):
        DocumentIndex(BOARD).verify(quote)


def test_verify_quotes_keeps_the_order():
    checks = verify_quotes(BOARD, ["In 1998 the board", "In 1998 the committee", "IN 1998 THE BOARD"])
    assert [c.status for c in checks] == [EXACT, UNSUPPORTED, CLOSE]


def test_the_module_imports_without_flask():
    # `app` stands in as a bare package (its __init__ makes the Flask app): only app.core is imported.
    code = ("import sys, types; app = types.ModuleType('app'); app.__path__ = [sys.argv[1]]; sys.modules['app'] = app; "
            "from app.core import quotes; "
            "assert quotes.DocumentIndex('a b c d').verify('a b c d').status == 'exact'; "
            "assert not {'flask', 'sqlalchemy', 'werkzeug'} & set(sys.modules), sorted(sys.modules); "
            "assert {m for m in sys.modules if m.startswith('app')} == "
            "{'app', 'app.core', 'app.core.quotes', 'app.core.quote_scripts', 'app.core.quote_changes'}, "
            "sorted(sys.modules)")
    done = subprocess.run([sys.executable, "-c", code, str(REPO_ROOT / "app")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


# Quotes planted in a real long document.

def leval_documents() -> list[str]:
    require_shared()
    with open(HUMAN_EVAL / "claude.gpt4.ref.jsonl", encoding="utf-8") as handle:
        texts = {json.loads(line)["input"] for line in handle if line.strip()}
    return sorted(texts, key=len, reverse=True)


@pytest.fixture(scope="module")
def documents() -> list[str]:
    return leval_documents()


class Planter:
    """Picks passages of whole words from the body of a document, each occurring once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.words = list(re.finditer(r"\S+", text))
        self.used: set[int] = set()

    def passages(self, test, count: int, length: int = 12) -> list[tuple[int, int]]:
        """`count` distinct (start, end) spans of `length` words whose text passes `test`."""
        found: list[tuple[int, int]] = []
        for i in range(len(self.words) // 20, len(self.words) - length, 7):  # past the front matter
            if any(j in self.used for j in range(i, i + length)):
                continue
            start, end = self.words[i].start(), self.words[i + length - 1].end()
            passage = self.text[start:end]
            if (re.fullmatch(r"[A-Za-z][A-Za-z0-9,;:.'\"\s-]*[A-Za-z0-9]", passage) and test(passage)
                    and self.text.count(passage) == 1 and self.text.find(" ".join(passage.split())) <= start):
                found.append((start, end))
                self.used.update(range(i, i + length))
                if len(found) == count:
                    return found
        raise AssertionError(f"the document has fewer than {count} passages for {test}")


def genuine_quotes(text: str) -> list[tuple[str, str, int, int]]:
    """(quote, expected status, start, end) for 20 quotes of the document with harmless variations."""
    planter = Planter(text)
    plain = lambda p: True  # noqa: E731
    quotes = []
    for start, end in planter.passages(plain, 4):
        quotes.append((text[start:end], EXACT, start, end))  # verbatim
    for start, end in planter.passages(lambda p: "\n" in p, 4):
        quotes.append((" ".join(text[start:end].split()), EXACT, start, end))  # line breaks as spaces
    for start, end in planter.passages(plain, 2):
        quotes.append(("   " + "  \n ".join(text[start:end].split()) + "\t", EXACT, start, end))
    for start, end in planter.passages(lambda p: "'" in p or '"' in p, 3):
        curly = re.sub(r'"(\w)', "\u201c\\1", text[start:end]).replace('"', "\u201d").replace("'", "\u2019")
        quotes.append((curly, EXACT, start, end))
    for start, end in planter.passages(lambda p: re.search(r"\w-\w", p), 1):
        quotes.append((text[start:end].replace("-", "\u2013"), EXACT, start, end))
    for start, end in planter.passages(plain, 3):
        quotes.append((text[start:end].upper(), CLOSE, start, end))
    for start, end in planter.passages(lambda p: re.search(r"\w[,;:]", p), 3):
        quotes.append(("\u2026" + re.sub(r"[,;:.]", "", text[start:end]).lower(), CLOSE, start, end))
    return quotes


def change_digit(passage: str) -> str:
    match = re.search(r"\d", passage)
    return passage[:match.start()] + str((int(match.group()) + 1) % 10) + passage[match.end():]


def altered_quotes(text: str, other: str) -> list[tuple[str, str]]:
    """(quote, the kind of change) for 20 quotes that the document does not support."""
    planter = Planter(text)
    altered: list[tuple[str, str]] = []
    for start, end in planter.passages(lambda p: re.search(r"\b1\d{3}\b", p), 4, length=10):
        altered.append((change_digit(text[start:end]), "a number"))
    for start, end in planter.passages(lambda p: re.search(r"\b(is|was|will|can) ", p), 3):
        added = re.sub(r"\b(is|was|will|can) ", r"\1 not ", text[start:end], count=1)
        altered.append((added, "a negation"))
    for start, end in planter.passages(lambda p: re.search(r"\b(not|never|no) ", p), 3):
        altered.append((re.sub(r"\b(not|never|no) ", "", text[start:end], count=1), "a negation"))
    for start, end in planter.passages(lambda p: re.search(r"\b(Herzl|Jews|Palestine|Argentine)\b", p), 3):
        altered.append((re.sub(r"\b(Herzl|Jews|Palestine|Argentine)\b", "Napoleon", text[start:end], count=1),
                        "a name"))
    first, second = planter.passages(lambda p: True, 3, length=16), planter.passages(lambda p: True, 3, length=16)
    for (a, a_end), (b, b_end) in zip(first, reversed(second)):  # the first place's start, a far place's end
        head, tail = " ".join(text[a:a_end].split()[:8]), " ".join(text[b:b_end].split()[-8:])
        altered.append((f"{head} {tail}", "stitched"))
    synonyms = {"great": "huge", "large": "big", "many": "numerous"}
    for start, end in planter.passages(lambda p: re.search(r"\b(great|large|many)\b", p), 2):
        passage = re.sub(r"\b(great|large|many)\b", lambda m: synonyms[m.group()], text[start:end], count=1)
        altered.append((" ".join(reversed(passage.split(", ", 1))) if ", " in passage else "truly " + passage,
                        "paraphrase"))
    for start, end in Planter(other).passages(lambda p: True, 2):
        altered.append((other[start:end], "another document"))
    return altered


def test_genuine_quotes_are_exact_or_close_and_slice_the_passage(documents):
    text = documents[0]
    assert len(text) == 255_521
    quotes = genuine_quotes(text)
    assert len(quotes) == 20
    index = DocumentIndex(text)
    for quote, status, start, end in quotes:
        check = index.verify(quote)
        assert check.status == status, (quote, check)
        if status == EXACT:
            assert normalise(text[check.start:check.end]).text == normalise(quote).text.strip(), check
        else:
            assert loose_words(text[check.start:check.end]) == loose_words(quote), check
        assert start <= check.start and check.end <= end and text[check.start:check.end].strip() == \
            text[check.start:check.end], (quote, check, start, end)
        if quote.strip() == text[start:end]:
            assert (check.start, check.end) == (start, end)


def test_altered_quotes_are_unsupported_with_a_reason(documents):
    text, other = documents[0], documents[1]
    altered = altered_quotes(text, other)
    assert len(altered) == 20
    index = DocumentIndex(text)
    for quote, change in altered:
        check = index.verify(quote)
        assert (check.status, check.start, check.end) == (UNSUPPORTED, None, None), (change, quote, check)
        assert check.reason, check
        if change in ("a number", "a negation"):
            assert f"differs in {change}" in check.reason, (change, quote, check)
        if change == "stitched":
            assert "stitched from two places" in check.reason, (quote, check)
