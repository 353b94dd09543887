"""Check quotes an LLM judge took from a long document against the stored text.

A quote is *exact* when it is in the text after Unicode NFKC, with every run of whitespace read as
one space and typographic quotes and dashes read as their ASCII forms; *close* when only case,
punctuation or spacing tell it apart from a passage (the same words, in the same order); anything
else is *unsupported*. Both verdicts rest on plain string equality of normalised texts: fuzzy
matching (rapidfuzz) only finds the nearest passage to explain an unsupported quote, so a changed
number, name or negation can never pass as close.

Pure: standard library and rapidfuzz only, so it runs without Flask or a database.
"""
from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass


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
# Words of the looser form: numbers keep their inner punctuation (1.5 is not 15), else runs of letters/digits.
NUMBER_SEPARATORS = ".,:/"
WORD = re.compile(r"\d+(?:[.,:/]\d+)+|[^\W_]+")
NEGATIONS = frozenset({"not", "no", "never", "none", "nor", "cannot", "without", "nothing", "nobody",
                       "neither", "t"})  # "t": what is left of n't once punctuation is dropped
ANCHORS_PER_QUOTE = 3  # the quote's rarest words that place candidate passages
OCCURRENCES_PER_ANCHOR = 40  # a word more frequent than this is no anchor worth following
CANDIDATES = 4  # candidate passages scored with rapidfuzz per unsupported quote
BUCKET_WORDS = 4  # candidate starts this close together are one candidate
SLACK_WORDS = 4  # words around a candidate passage, so a shifted or longer passage still fits
SCAN_OCCURRENCES = 200  # a phrase whose rarest word is this common is searched as text instead
NOTHING = "(nothing)"  # the side of a change where a word was added or dropped: no word of its own
CLOSE_ENOUGH = 60.0  # partial_ratio below this: no passage resembles the quote at all


@dataclass(frozen=True)
class QuoteCheck:
    quote: str
    status: str  # exact | close | unsupported
    start: int | None  # offsets into the original stored text; None when unsupported
    end: int | None
    reason: str


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
    for match in WORD.finditer(normalised.text):
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


def continues(text: str, left: int, right: int) -> bool:
    """Does the word or number at text[left] go on into text[right]? (1.5, 1,000 and 10:30 are one number.)"""
    if left < 0 or right >= len(text):
        return False
    a, b = text[left], text[right]
    if a.isalnum() and b.isalnum():
        return True
    separator_after = a in NUMBER_SEPARATORS and left > 0 and text[left - 1].isdigit() and b.isdigit()
    separator_next = b in NUMBER_SEPARATORS and right + 1 < len(text) and a.isdigit() and text[right + 1].isdigit()
    return separator_after or separator_next


def at_word_boundaries(text: str, start: int, end: int) -> bool:
    """A match must not begin or end inside a word or number: "not" is not in "nothing", nor 5 in 1.5 or 1997."""
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

    def verify(self, quote: str) -> QuoteCheck:
        if not isinstance(quote, str) or not quote.strip():
            raise ValueError("a quote must be non-empty text")
        strict = normalise(quote)
        needle = strict.text.strip()
        found = self._find_strict(needle)
        if found is not None:
            start, end = self.strict.span(*found)
            how = "verbatim" if self.text[start:end] == quote else "after folding whitespace, quotes and dashes"
            return QuoteCheck(quote, EXACT, start, end, f"found at {span_text(start, end)} {how}")
        quote_words = words_of(strict)
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
        if passage.lower() == strict_quote.lower():
            return "case"
        if re.sub(r"[\W_]+", "", passage) == re.sub(r"[\W_]+", "", strict_quote):
            return "punctuation or spacing"
        return "case and punctuation or spacing"

    def _explain(self, quote: str, quote_words: Words) -> str:
        words = quote_words.words
        stitched = self._stitched(words)
        if stitched:
            return stitched
        window = self._nearest_window(words)
        if window is None:
            return "none of its words is in the document"
        first, stop, score = window
        blocks, first, stop = align(words, self.loose.words[first:stop], first)
        start, end = self.loose.span(first, stop)
        shared = len(words) - sum(q1 - q0 for q0, q1, _, _ in blocks)
        if score < CLOSE_ENOUGH or shared * 2 < len(words):
            return (f"no passage in the document is close to it (the nearest, at {span_text(start, end)}, "
                    f"shares {shared} of its {len(words)} words)")
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

    def _nearest_window(self, words: list[str]) -> tuple[int, int, float] | None:
        """(first word, end word, partial_ratio) of the stretch most like the quote, found from its rare words."""
        present = [(len(self.positions[w]), offset, w) for offset, w in enumerate(words) if w in self.positions]
        if not present:
            return None
        votes: Counter[int] = Counter()
        for _, offset, word in sorted(present)[:ANCHORS_PER_QUOTE]:
            for position in self.positions[word][:OCCURRENCES_PER_ANCHOR]:
                votes[max(0, position - offset) // BUCKET_WORDS] += 1  # nearby starts vote together
        from rapidfuzz import fuzz  # here, not at import: the pages that only read stored statuses never load it

        joined = " ".join(words)
        best: tuple[int, int, float] | None = None
        for bucket, _ in votes.most_common(CANDIDATES):
            first = max(0, bucket * BUCKET_WORDS - SLACK_WORDS)
            stop = min(len(self.loose.words), bucket * BUCKET_WORDS + len(words) + BUCKET_WORDS + SLACK_WORDS)
            score = fuzz.partial_ratio(joined, " ".join(self.loose.words[first:stop]))
            if best is None or score > best[2]:
                best = (first, stop, score)
        return best


def align(quote: list[str], window: list[str], offset: int) -> tuple[list[tuple[int, int, int, int]], int, int]:
    """Word-level differences of the quote from the passage in a window that starts at word `offset`.

    Returns the changed blocks (quote first, quote stop, passage first, passage stop; passage in
    document words) and the passage's first and end word. The window's extra words at either end
    are context, not part of the passage: an end block keeps only as many passage words as it
    has quote words, so "1997 the board" in "... in 1998 the board" pairs 1997 with 1998.
    """
    from rapidfuzz.distance import Levenshtein

    blocks: list[list[int]] = []
    covered: list[tuple[int, int]] = []  # window words the passage is made of
    for op in Levenshtein.opcodes(quote, window):
        if op.tag == "equal":
            covered.append((op.dest_start, op.dest_end))
        elif blocks and blocks[-1][1] == op.src_start and blocks[-1][3] == op.dest_start:
            blocks[-1][1], blocks[-1][3] = op.src_end, op.dest_end
        else:
            blocks.append([op.src_start, op.src_end, op.dest_start, op.dest_end])
    if blocks and blocks[0][0] == 0 and blocks[0][2] == 0:
        block = blocks[0]
        block[2] = block[3] - min(block[1] - block[0], block[3] - block[2])
    if blocks and blocks[-1][1] == len(quote) and blocks[-1][3] == len(window):
        block = blocks[-1]
        block[3] = block[2] + min(block[1] - block[0], block[3] - block[2])
    blocks = [b for b in blocks if b[1] > b[0] or b[3] > b[2]]
    covered += [(p0, p1) for _, _, p0, p1 in blocks if p1 > p0]
    first = min((a for a, _ in covered), default=0)
    stop = max((b for _, b in covered), default=1)
    return [(q0, q1, p0 + offset, p1 + offset) for q0, q1, p0, p1 in blocks], first + offset, stop + offset


def shown(text: str, words: Words, first: int, stop: int) -> str:
    """The original text of words first..stop-1, or a mark for none."""
    if stop <= first:
        return NOTHING
    start, end = words.span(first, stop)
    return text[start:end]


def longest_found(found, limit: int) -> int:
    """The largest k in 0..limit with found(k), for a monotone found (a prefix found means shorter ones are)."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if found(middle):
            low = middle
        else:
            high = middle - 1
    return low


def describe(changes: list[tuple[str, str]]) -> str:
    """Name the most telling difference: a number first, then a negation, then a name, then any word."""
    if not changes:
        return "its word order"

    def words(side: str) -> list[str]:
        return [] if side == NOTHING else WORD.findall(side)

    tests = (
        ("a number", lambda quote, passage: any(c.isdigit() for c in quote + passage)),
        ("a negation", lambda quote, passage: any(w.lower() in NEGATIONS for w in words(quote) + words(passage))),
        ("a name", lambda quote, passage: all(any(w[:1].isupper() for w in words(side)) for side in (quote, passage))),
    )
    for kind, test in tests:
        change = next(((q, p) for q, p in changes if test(q, p)), None)
        if change:
            return f"{kind}: {change[0]} vs {change[1]}"
    more = f" (and {len(changes) - 1} more)" if len(changes) > 1 else ""
    return f"a word: {changes[0][0]} vs {changes[0][1]}{more}"


def verify_quotes(text: str, quotes: list[str]) -> list[QuoteCheck]:
    """Check each quote against one document, indexing it once."""
    index = DocumentIndex(text)
    return [index.verify(quote) for quote in quotes]
