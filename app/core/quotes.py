"""Check quotes an LLM judge took from a long document against the stored text.

A quote is *exact* when it is in the text after Unicode NFKC, with every run of whitespace read as
one space and typographic quotes and dashes read as their ASCII forms, beginning and ending where a
unit does (app.core.quote_scripts: a word, or any character of Han, Kana, Hangul or Thai); *close*
when only case, punctuation or spacing tell it apart from a passage (the same units, in the same
order); anything else is *unsupported*, and so is a quote under the minimum substance (*too short*).
Both verdicts rest on plain string equality of normalised texts: fuzzy matching (rapidfuzz) only
finds the nearest passage to explain an unsupported quote, so a changed number, name or negation can
never pass as close.

Pure: standard library and rapidfuzz only, so it runs without Flask or a database.
"""
from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass

from app.core.quote_changes import NOTHING, align, describe, longest_found
from app.core.quote_scripts import (
    MINIMUM_TEXT,
    continues,
    describe_size,
    substance,
    token_pattern,
    too_short,
)

EXACT, CLOSE, UNSUPPORTED = "exact", "close", "unsupported"

# Folded before and after NFKC: NFKC alone leaves curly quotes and dashes, and turns ″ into two primes.
TYPOGRAPHIC = str.maketrans({
    **dict.fromkeys("‘’‚‛′‵‹›＇`´", "'"),
    **dict.fromkeys("“”„‟″‶«»＂", '"'),
    **dict.fromkeys("‐‑‒–—―−⁃﹘﹣－", "-"),
})
# The stretches normalisation may change: whitespace other than one plain space, a character with
# combining marks, any non-ASCII character. ASCII between them is copied as it is, which keeps
# indexing a 255k-character document fast.
CHANGEABLE = re.compile(r"\s\s+|[^\S ]\s*|[^\s][\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+"
                        r"|[^\x00-\x7f]")
ANCHORS_PER_QUOTE = 5  # the quote's rarest word pairs (or words) that place candidate passages
OCCURRENCES_PER_ANCHOR = 40  # a word more frequent than this is no anchor worth following
CANDIDATES = 6  # candidate places measured with rapidfuzz per unsupported quote
BUCKET_WORDS = 4  # candidate starts this close together are one candidate
SLACK_WORDS = 4  # words around a candidate passage, so a shifted or longer passage still fits
REFIT_MARGIN = 3  # a passage starts this near where the quote fits best, and is this much longer or shorter
SCAN_OCCURRENCES = 200  # a phrase whose rarest word is this common is searched as text instead
CLOSE_ENOUGH = 50.0  # partial_ratio (of units) below this, less than half shared: no passage resembles the quote
SMALL_CHANGE = 0.5  # a change of at most half a minimum quote (2 words, 3 Han characters) is named, not a stitch


@dataclass(frozen=True)
class QuoteCheck:
    quote: str
    status: str  # exact | close | unsupported
    start: int | None  # offsets into the original stored text; None when unsupported
    end: int | None
    reason: str
    too_short: bool = False  # under the minimum substance: unsupported whatever the text holds


@dataclass
class Normalised:
    """A normalised text with, for each of its characters, the span of the original it came from."""

    text: str
    starts: list[int]
    ends: list[int]

    def span(self, start: int, end: int) -> tuple[int, int]:
        return self.starts[start], self.ends[end - 1]


def fold_unit(unit: str) -> str:
    return unicodedata.normalize("NFKC", unit.translate(TYPOGRAPHIC)).translate(TYPOGRAPHIC)


def normalise(text: str) -> Normalised:
    """NFKC, quotes and dashes to ASCII, whitespace runs to one space; keeps the offset map."""
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    last_is_space = False

    def add(folded: str, start: int, end: int) -> None:
        nonlocal last_is_space
        for char in folded:
            if char.isspace():
                if last_is_space:  # one space for a whole run, even a run NFKC made
                    ends[-1] = end
                    continue
                char = " "
            parts.append(char)
            starts.append(start)
            ends.append(end)
            last_is_space = char == " "

    copied = 0
    for match in CHANGEABLE.finditer(text):
        start, end = match.span()
        if start > copied:
            parts.append(text[copied:start])
            starts.extend(range(copied, start))
            ends.extend(range(copied + 1, start + 1))
            last_is_space = text[start - 1] == " "
        add(" " if match.group().isspace() else fold_unit(match.group()), start, end)
        copied = end
    if copied < len(text):
        parts.append(text[copied:])
        starts.extend(range(copied, len(text)))
        ends.extend(range(copied + 1, len(text) + 1))
    return Normalised("".join(parts), starts, ends)


@dataclass
class Words:
    """The looser form of a text: lower-case words joined by one space, punctuation gone."""

    normalised: Normalised
    words: list[str]
    starts: list[int]  # each word's first character in normalised.text

    def span(self, first: int, stop: int) -> tuple[int, int]:
        """The original text's offsets of words first..stop-1."""
        return self.normalised.span(self.starts[first], self.starts[stop - 1] + len(self.words[stop - 1]))


def words_of(normalised: Normalised) -> Words:
    """Lower-case the words of a normalised text, drop what lies between them, and keep the offset map."""
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    words: list[str] = []
    word_starts: list[int] = []
    length = 0
    for match in token_pattern().finditer(normalised.text):
        a, b = match.span()
        word = match.group().lower()
        if parts:
            parts.append(" ")
            starts.append(normalised.ends[a - 1])
            ends.append(normalised.starts[a])
            length += 1
        if len(word) == b - a:
            starts.extend(normalised.starts[a:b])
            ends.extend(normalised.ends[a:b])
        else:  # lower() changed the length (İ): every character maps to the whole word
            starts.extend([normalised.starts[a]] * len(word))
            ends.extend([normalised.ends[b - 1]] * len(word))
        parts.append(word)
        words.append(word)
        word_starts.append(length)
        length += len(word)
    return Words(Normalised("".join(parts), starts, ends), words, word_starts)


def at_word_boundaries(text: str, start: int, end: int) -> bool:
    """A match must not begin or end inside a word or number: "not" is not in "nothing", nor 5 in 1.5 or 1997.
    In Han, Kana, Hangul and Thai every character is a unit: 不喜欢 is in 他不喜欢 (but never half a character
    and its marks)."""
    return not (continues(text, start - 1, start) or continues(text, end - 1, end))


def span_text(start: int, end: int) -> str:
    return f"{start}–{end}"


class DocumentIndex:
    """One document, normalised once, against which any number of quotes are checked."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.strict = normalise(text)
        self.loose = words_of(self.strict)
        self.padded_loose = f" {self.loose.normalised.text} "  # " w1 w2 " finds whole words only
        self.positions: dict[str, list[int]] = {}
        for index, word in enumerate(self.loose.words):
            self.positions.setdefault(word, []).append(index)
        self._pairs: dict[tuple[str, str], list[int]] | None = None

    def verify(self, quote: str) -> QuoteCheck:
        if not isinstance(quote, str) or not quote.strip():
            raise ValueError("a quote must be non-empty text")
        strict = normalise(quote)
        quote_words = words_of(strict)
        check = self._match(quote, strict, quote_words)
        if not too_short(quote_words.words):
            return check
        found = ("it is in the document" if check.status == EXACT else "it is in the document apart from case, "
                 "punctuation or spacing" if check.status == CLOSE else "it is not in the document either")
        return QuoteCheck(quote, UNSUPPORTED, None, None,
                          f"too short: {describe_size(quote_words.words)}, under the minimum of {MINIMUM_TEXT} "
                          f"({found})", too_short=True)

    def _match(self, quote: str, strict: Normalised, quote_words: Words) -> QuoteCheck:
        needle = strict.text.strip()
        found = self._find_strict(needle)
        if found is not None:
            start, end = self.strict.span(*found)
            how = "verbatim" if self.text[start:end] == quote else "after folding whitespace, quotes and dashes"
            return QuoteCheck(quote, EXACT, start, end, f"found at {span_text(start, end)} {how}")
        if not quote_words.words:
            return QuoteCheck(quote, UNSUPPORTED, None, None, "the quote has no words to look for")
        first = self._find_words(quote_words.words)
        if first is not None:
            start, end = self.loose.span(first, first + len(quote_words.words))
            return QuoteCheck(quote, CLOSE, start, end,
                              f"matches {span_text(start, end)} apart from {self._what_differs(needle, start, end)}")
        return QuoteCheck(quote, UNSUPPORTED, None, None, self._explain(quote, quote_words))

    def _find_strict(self, needle: str) -> tuple[int, int] | None:
        text = self.strict.text
        at = text.find(needle)
        while at >= 0:
            if at_word_boundaries(text, at, at + len(needle)):
                return at, at + len(needle)
            at = text.find(needle, at + 1)
        return None

    def _find_words(self, words: list[str]) -> int | None:
        """The index of the first word of a whole-word occurrence of these words, if any."""
        counts = [(len(self.positions.get(word, ())), offset) for offset, word in enumerate(words)]
        rarest, offset = min(counts)
        if rarest <= SCAN_OCCURRENCES:  # follow the rarest word: cheaper than scanning 250k characters
            n = len(words)
            return next((p - offset for p in self.positions.get(words[offset], ())
                         if p >= offset and self.loose.words[p - offset:p - offset + n] == words), None)
        at = self.padded_loose.find(f" {' '.join(words)} ")
        # padded position `at` is the loose text's position `at` (the pad and the space cancel out)
        return None if at < 0 else bisect_left(self.loose.starts, at)

    def _what_differs(self, strict_quote: str, start: int, end: int) -> str:
        passage = normalise(self.text[start:end]).text
        if "".join(passage.split()) == "".join(strict_quote.split()):
            return "spacing"
        if passage.lower() == strict_quote.lower():
            return "case"
        if re.sub(r"[\W_]+", "", passage) == re.sub(r"[\W_]+", "", strict_quote):
            return "punctuation or spacing"
        return "case and punctuation or spacing"

    def _explain(self, quote: str, quote_words: Words) -> str:
        """Name the change: the nearest passage's changed units when a few explain the quote, else the two places
        it was stitched from, else how little of it the nearest passage shares."""
        words = quote_words.words
        window = self._nearest_window(words)
        if window is None:
            return self._stitched(words) or "none of its words is in the document"
        first, stop, score = window
        blocks, first, stop = align(words, self.loose.words[first:stop], first)
        start, end = self.loose.span(first, stop)
        shared = len(words) - sum(q1 - q0 for q0, q1, _, _ in blocks)
        close = score >= CLOSE_ENOUGH and shared * 2 >= len(words)
        # A small change in one place (a number, a negation, a name) explains a quote better than two far places
        # that happen to share its start and its end ("it was not" is in many places): look for a stitch after.
        small = all(substance(units) <= SMALL_CHANGE for units in (
            [w for q0, q1, _, _ in blocks for w in words[q0:q1]],
            [w for _, _, p0, p1 in blocks for w in self.loose.words[p0:p1]]))
        if not (close and small):
            stitched = self._stitched(words)
            if stitched:
                return stitched
        if not close:
            return (f"no passage in the document is close to it (the nearest, at {span_text(start, end)}, "
                    f"shares {shared} of its {len(words)} {'units' if len(words) != 1 else 'unit'})")
        # A change inside the quote tells more than one at its ends, where the passage's bounds are a guess.
        inner_first = sorted(blocks, key=lambda b: b[0] == 0 or b[1] == len(words))
        changes = [(shown(quote, quote_words, q0, q1), shown(self.text, self.loose, p0, p1))
                   for q0, q1, p0, p1 in inner_first]
        return f"nearest passage at {span_text(start, end)} differs in {describe(changes)}"

    def _stitched(self, words: list[str]) -> str | None:
        """Name the two places when the quote's start and end are each in the text, but not together."""
        if len(words) < 4:
            return None
        head = longest_found(lambda k: self._find_words(words[:k]) is not None, len(words))
        tail = longest_found(lambda k: self._find_words(words[-k:]) is not None, len(words))
        if head < 2 or tail < 2 or head + tail < len(words):
            return None
        head_at = self._find_words(words[:head])
        tail_at = self._find_words(words[-tail:])
        near_head = self.loose.words[head_at:head_at + len(words) + SLACK_WORDS]
        if any(near_head[i:i + tail] == words[-tail:] for i in range(len(near_head))):
            return None  # both parts in one place: a word left out or added there, which the nearest passage shows
        first = span_text(*self.loose.span(head_at, head_at + head))
        second = span_text(*self.loose.span(tail_at, tail_at + tail))
        return f"stitched from two places: its start is at {first}, its end at {second}"

    def _pair_positions(self) -> dict[tuple[str, str], list[int]]:
        """Where each pair of neighbouring units starts: far rarer than units alone (a Chinese character is
        rarely rare), so a quote's rarest pairs place it. Built on the first quote that needs it."""
        if self._pairs is None:
            self._pairs = {}
            words = self.loose.words
            for index, pair in enumerate(zip(words, words[1:])):
                self._pairs.setdefault(pair, []).append(index)
        return self._pairs

    def _anchors(self, words: list[str]) -> list[tuple[int, list[int]]]:
        """(offset in the quote, positions in the document) of the quote's rarest pairs found in the document, or
        of its rarest units when no pair is."""
        pairs = self._pair_positions()
        found = [(len(pairs[pair]), offset, pairs[pair]) for offset, pair in enumerate(zip(words, words[1:]))
                 if pair in pairs]
        if not found:
            found = [(len(self.positions[w]), offset, self.positions[w]) for offset, w in enumerate(words)
                     if w in self.positions]
        return [(offset, positions) for _, offset, positions in sorted(found, key=lambda f: f[:2])[:ANCHORS_PER_QUOTE]]

    def _nearest_window(self, words: list[str]) -> tuple[int, int, float] | None:
        """(first word, end word, partial_ratio) of the stretch most like the quote, found from its rare words."""
        anchors = self._anchors(words)
        if not anchors:
            return None
        votes: Counter[int] = Counter()
        for offset, positions in anchors:
            for position in positions[:OCCURRENCES_PER_ANCHOR]:
                # Nearby starts vote together, and a rare anchor weighs more: the place sharing the quote's rare
                # pair ("vault was") beats the many that share its common ones ("was not finished until").
                votes[max(0, position - offset) // BUCKET_WORDS] += 1 / len(positions)
        from rapidfuzz import fuzz  # here, not at import: the pages that only read stored statuses never load it
        from rapidfuzz.distance import Levenshtein

        # Each candidate narrowed to its stretch nearest the quote (edit distance of units), its length within a few
        # units of the quote's: the passage's ends are not known, and a unit repeated in the margin ("the" of the
        # next clause, "座" of the sentence before) must not pull the alignment away from it. The nearest wins:
        # unit by unit, a long name shared with another place cannot outweigh the passage sharing all the rest.
        n, best = len(words), None
        for bucket, _ in votes.most_common(CANDIDATES):
            first = max(0, bucket * BUCKET_WORDS - SLACK_WORDS)
            window = self.loose.words[first:bucket * BUCKET_WORDS + n + BUCKET_WORDS + SLACK_WORDS]
            fit = fuzz.partial_ratio_alignment(words, window)  # where n units fit best (fewer at the window's end)
            short = n - (fit.dest_end - fit.dest_start)
            for a in range(max(0, fit.dest_start - REFIT_MARGIN + 1 - short),
                           min(len(window), fit.dest_start + REFIT_MARGIN)):
                for b in range(a + max(1, n - REFIT_MARGIN), min(len(window), a + n + REFIT_MARGIN) + 1):
                    cutoff = None if best is None else best[0]
                    stretch = (Levenshtein.distance(words, window[a:b], score_cutoff=cutoff), abs(b - a - n),
                               first + a, first + b)
                    if best is None or stretch < best:
                        best = stretch
        if best is None:
            return None
        _, _, first, stop = best
        return first, stop, fuzz.partial_ratio(words, self.loose.words[first:stop])


def shown(text: str, words: Words, first: int, stop: int) -> str:
    """The original text of words first..stop-1, or a mark for none."""
    if stop <= first:
        return NOTHING
    start, end = words.span(first, stop)
    return text[start:end]


def verify_quotes(text: str, quotes: list[str]) -> list[QuoteCheck]:
    """Check each quote against one document, indexing it once."""
    index = DocumentIndex(text)
    return [index.verify(quote) for quote in quotes]
