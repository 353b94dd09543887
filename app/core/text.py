"""Small text helpers shared by importers, metrics views and exports."""
from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterator
from typing import Any


def normalize_ws(text: str) -> str:
    """Collapse every run of whitespace to one space and strip the ends."""
    return " ".join(text.split())


def word_count(text: str) -> int:
    """Count whitespace-separated words, as L-Eval's length statistics do."""
    return len(text.split())


def match_key(query: str, gt: str) -> str:
    """Return the key that matches a prediction row to its question."""
    joined = normalize_ws(query) + "\x1f" + normalize_ws(gt)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    return sha256_bytes(text.encode("utf-8"))


TITLE_LIMIT = 90
TITLE_SCAN_LINES = 12  # a title sits at the top; deeper lines are the text itself
_TITLE_FIELD = re.compile(r"^title:\s*(.+)$", re.IGNORECASE)
_WIKIPEDIA = re.compile(r"^(.+?)\s+-\s+wikipedia\b", re.IGNORECASE)
_CALL = re.compile(r"\bwelcome to (?:the )?(.{5,120}?\b(?:earnings|results|conference) call)\b", re.IGNORECASE)
_BY_AUTHOR = re.compile(r"^(?:by\b|_by_$)", re.IGNORECASE)
_TITLE_BY = re.compile(r"^.{3,100}, by [A-Z]")
_AGREEMENT = re.compile(r"\b([A-Z][A-Z&,.' -]{2,80}?AGREEMENT)\b")
_CAPITAL_LEAD = re.compile(r"^([A-Z][A-Z0-9 ,&'’–-]{8,118}[A-Z])\.\s")
_SPEAKER = re.compile(r"^[^\s:]+(?: [^\s:]+){0,2}: ")
# Opening lines that are a section's heading, not the document's title.
_SECTION_HEADINGS = frozenset({
    "introduction", "abstract", "summary", "background", "contents", "table of contents", "preface", "foreword",
    "field of the invention", "cross reference to related applications", "cross-reference to related applications",
})


def shorten(text: str, limit: int = TITLE_LIMIT) -> str:
    """Collapse whitespace and cut on a word boundary with an ellipsis when longer than `limit`."""
    text = normalize_ws(text)
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return (cut or text[:limit]) + "…"


def title_line(text: str) -> str | None:
    """The title a document's opening lines state, or None.

    Recognised: a `Title:` field, a Wikipedia page's name, an earnings call's name from its
    greeting, a heading followed by a byline ("By …"), a "Name, by Author" line, and a contract's
    capitalised "… AGREEMENT" heading. Anything else is text, not a title.
    """
    lines = []
    stands_alone = False  # the first line is a paragraph of its own (a blank line follows it)
    for raw in text.splitlines():
        line = normalize_ws(raw)
        if line:
            lines.append(line)
            if len(lines) == TITLE_SCAN_LINES:
                break
        elif len(lines) == 1:
            stands_alone = True
    for line in lines:
        found = _TITLE_FIELD.match(line)
        if found:
            return found.group(1)
    if not lines:
        return None
    first = lines[0]
    found = _WIKIPEDIA.match(first)
    if found:
        return found.group(1)
    for line in lines[:3]:
        found = _CALL.search(line)
        if found:
            return found.group(1)
    if len(lines) > 1 and _BY_AUTHOR.match(lines[1]) and len(first) <= 120 and not first.endswith((".", ":", "?")):
        return first
    if _TITLE_BY.match(first):
        return first
    for line in lines[:3]:
        found = _AGREEMENT.search(line)
        if found:
            return found.group(1).strip(" ,.-")
    return _heading(first, stands_alone)


def _heading(line: str, stands_alone: bool) -> str | None:
    """The first line as a heading: a capitalised lead sentence, or a short line standing alone."""
    found = _CAPITAL_LEAD.match(line)
    if found and len(found.group(1).split()) >= 3:
        return found.group(1)
    words = line.split()
    if (not stands_alone or not 3 <= len(words) <= 16 or len(line) > 120 or line[0] in "[(0123456789"
            or line.endswith((".", "?", "!", ":", ";", ",")) or _SPEAKER.match(line)
            or line.lower() in _SECTION_HEADINGS):
        return None
    return line


def document_title(text: str, task: str, number: int, limit: int = TITLE_LIMIT) -> str:
    """A document's title: the title its opening lines state, else its task and its number in that task.

    The first line of most long texts is not a title (a speaker's turn, "Introduction", a
    transcriber's note), so it is never used as one.
    """
    found = title_line(text)
    if found:
        return shorten(found, limit)
    return f"{task or 'document'} · document {number}"


SHARED_LEAD_MIN = 20


def shared_lead(texts: list[str]) -> int:
    """How many leading characters (of each whitespace-normalised text) all texts share, cut at a word.

    Questions on one document often repeat one preamble ("You are asked to act as … and answer the
    question: …"); a list that drops it shows what tells them apart. 0 when fewer than two texts,
    when the shared part is short, or when it would leave a text empty.
    """
    texts = [normalize_ws(t) for t in texts]
    if len(texts) < 2:
        return 0
    first, last = min(texts), max(texts)  # the common prefix of all is that of the extremes
    size = 0
    while size < len(first) and first[size] == last[size]:
        size += 1
    if size == len(first):  # one question is the start of another (or equal to it): nothing to drop
        return 0
    cut = first[:size].rfind(" ") + 1  # after the last whole shared word
    if cut < SHARED_LEAD_MIN or any(len(t) <= cut for t in texts):
        return 0
    return cut


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a parsed JSON value, keys included: the one walker of nested input."""
    pending = [value]
    while pending:  # a loop, not recursion: the value may be nested as deeply as json allows
        item = pending.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)


def is_valid_unicode(value: Any) -> bool:
    """Tell whether every string in a parsed JSON value (keys too) can be encoded as UTF-8."""
    for text in strings_in(value):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # half of a surrogate pair
            return False
    return True


# -- segments of a long document (the document panel renders and searches them) -----------------

SEGMENT_CHARS = 1600
_BLANK_LINES = re.compile(r"\n[ \t]*\n\s*")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])[\"'”’)\]]*\s+")



def _cut_long_line(line: str, limit: int) -> list[str]:
    """Cut a line longer than `limit` at sentence ends, else at spaces, else anywhere."""
    pieces: list[str] = []
    rest = line
    while len(rest) > limit:
        window = rest[:limit]
        cut = 0
        for match in _SENTENCE_END.finditer(window):
            if match.end() > limit // 3:
                cut = match.end()
        if not cut:
            space = window.rfind(" ", limit // 3)
            cut = space + 1 if space > 0 else limit
        pieces.append(rest[:cut])
        rest = rest[cut:]
    if rest:
        pieces.append(rest)
    return pieces


def segment_text(text: str, limit: int = SEGMENT_CHARS) -> list[tuple[str, bool]]:
    """Cut text into (segment, starts_paragraph) pairs of at most `limit` characters.

    Blank lines start paragraphs. Inside a paragraph, whole lines are grouped (their line
    breaks kept); a line longer than the limit is cut on its own.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    segments: list[tuple[str, bool]] = []
    for paragraph in _BLANK_LINES.split(text.strip("\n")):
        if not paragraph.strip():
            continue
        starts = True
        buffer: list[str] = []
        size = 0

        def flush() -> None:
            nonlocal buffer, size, starts
            if buffer:
                segments.append(("\n".join(buffer), starts))
                starts = False
            buffer, size = [], 0

        for line in paragraph.split("\n"):
            if len(line) > limit:
                flush()
                for piece in _cut_long_line(line, limit):
                    segments.append((piece, starts))
                    starts = False
                continue
            if buffer and size + 1 + len(line) > limit:
                flush()
            buffer.append(line)
            size += len(line) + (1 if size else 0)
        flush()
    return segments


# -- an answer as an annotator sees it ----------------------------------------------------------

# Characters that show nothing (or a mere space) yet differ by system: a byte-order mark, zero-width
# spaces and joiners, the word joiner, soft hyphens.
_INVISIBLE = re.compile("[\ufeff\u200b\u200c\u200d\u2060\u00ad]")
# Spaces other than the plain one (no-break, en/em, thin, narrow no-break, medium mathematical).
_ODD_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f]")
_LINE_ENDS = re.compile("\r\n|\r|\u2028|\x0b|\x0c|\x85")
_TRAILING_SPACES = re.compile(r"[ \t]+$", re.MULTILINE)
_BLANK_RUNS = re.compile(r"\n{3,}")
DISPLAY_TAB = "    "


def display_answer(text: str) -> str:
    """An answer's text as the annotator is shown it: free of layout habits that would tell its system.

    Systems differ in how they lay text out, not only in what they say: one begins every answer
    with a space or a newline, another ends lines with CRLF, leaves trailing spaces, a BOM or
    zero-width characters, indents with tabs or leaves runs of blank lines. Shown with
    `white-space: pre-wrap`, any of these marks the same system on every question and breaks the
    blinding. This keeps the words and their line breaks and drops the habits: line endings become
    "\\n", invisible characters go, odd spaces become plain ones, tabs become four spaces, lines lose
    their trailing spaces, two or more blank lines become one, and the ends are trimmed.
    Display only: the stored text and its sha256 (what a save is checked against) are untouched.
    """
    text = _LINE_ENDS.sub("\n", text).replace("\u2029", "\n\n")  # a paragraph separator is a blank line
    text = _INVISIBLE.sub("", text)
    text = _ODD_SPACES.sub(" ", text).replace("\t", DISPLAY_TAB)
    text = _TRAILING_SPACES.sub("", text)
    text = _BLANK_RUNS.sub("\n\n", text)
    return text.strip()


# --- search boxes -------------------------------------------------------------------------------

SEARCH_TERMS = 8  # words of a search box that count; the rest are ignored
SEARCH_TERM_CHARS = 100


def search_terms(query: str | None) -> list[str]:
    """A search box's query as the words every match must contain (lower-cased; any script: a Chinese query
    without spaces is one term, matched inside the text). The one reading of a query, for the SQL searches
    (services) and the searches over lists alike."""
    words = unicodedata.normalize("NFKC", query or "").lower().split()
    return [word[:SEARCH_TERM_CHARS] for word in words[:SEARCH_TERMS]]


def matches_search(terms: list[str], *texts: str | None) -> bool:
    """Whether every term appears in one of the texts (an empty query matches everything)."""
    haystack = "\n".join(unicodedata.normalize("NFKC", text or "").lower() for text in texts)
    return all(term in haystack for term in terms)


# --- system names that may be one model ------------------------------------------------------------


def name_key(name: str) -> str:
    """A system's name as two spellings of one model share it: letter case, width and the separators - _ and
    space aside (L-Eval calls one model Claude-100k in one folder and claude-100k in another)."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return re.sub(r"[\s_-]+", "-", folded).strip("-")


def lookalike_groups(names: list[str]) -> list[list[str]]:
    """Groups of two or more names that differ only as name_key allows: a hint that they may be one model."""
    groups: dict[str, list[str]] = {}
    for name in sorted(set(names)):
        groups.setdefault(name_key(name), []).append(name)
    return sorted(group for group in groups.values() if len(group) > 1)
