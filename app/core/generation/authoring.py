"""New instruction/answer pairs on a long document: validation, and L-Eval's task-file format.

Evidence spans are character offsets into the document's text as stored (Python string
indices: code points, ``text[start:end] == quote``). An exported line is an L-Eval task-file
line (``instructions``, ``outputs``, ``input``, ``source``, ``evaluation``) holding the
document's existing questions and then its new pairs, plus one key L-Eval's readers ignore,
``authored``: aligned with ``instructions``, ``null`` for an existing question, else the pair's
author, times and evidence. Reading such a line back yields the same pairs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

AUTHORED_KEY = "authored"
MAX_INSTRUCTION_CHARS = 20_000
MAX_ANSWER_CHARS = 50_000
MAX_SPANS = 50


class PairError(ValueError):
    """A pair, span or exported line that cannot be accepted; the message names the field."""


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    quote: str

    def as_json(self) -> dict:
        return {"start": self.start, "end": self.end, "quote": self.quote}


@dataclass(frozen=True)
class PairData:
    instruction: str
    answer: str
    spans: tuple[Span, ...] = ()
    author: str = ""
    created_at: str = ""
    updated_at: str = ""


@dataclass(frozen=True)
class TaskLine:
    """One read-back line: the document, its existing questions and its authored pairs."""

    text: str
    source: str
    evaluation: str
    originals: list[tuple[str, str]] = field(default_factory=list)
    pairs: list[PairData] = field(default_factory=list)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_span(text: str, raw: Any, where: str = "evidence") -> Span:
    """Return the span if it lies inside ``text`` and its quote is the text there."""
    if not isinstance(raw, Mapping):
        raise PairError(f"{where}: a span is an object with start, end and quote")
    start, end, quote = raw.get("start"), raw.get("end"), raw.get("quote")
    if not _is_int(start) or not _is_int(end):
        raise PairError(f"{where}: start and end must be whole numbers")
    if not isinstance(quote, str):
        raise PairError(f"{where}: quote must be text")
    if not 0 <= start < end <= len(text):
        raise PairError(f"{where}: characters {start}-{end} are not inside the document (0-{len(text)})")
    if text[start:end] != quote:
        raise PairError(f"{where}: the quote does not match the document at characters {start}-{end}")
    return Span(start, end, quote)


def check_pair(text: str, instruction: Any, answer: Any, spans: Any = ()) -> PairData:
    """Validate a pair typed by a researcher; strip the ends of instruction and answer."""
    if not isinstance(instruction, str) or not instruction.strip():
        raise PairError("instruction: write the instruction (it is empty)")
    if not isinstance(answer, str) or not answer.strip():
        raise PairError("answer: write the answer (it is empty)")
    instruction = instruction.replace("\r\n", "\n").strip()
    answer = answer.replace("\r\n", "\n").strip()
    if len(instruction) > MAX_INSTRUCTION_CHARS:
        raise PairError(f"instruction: at most {MAX_INSTRUCTION_CHARS:,} characters")
    if len(answer) > MAX_ANSWER_CHARS:
        raise PairError(f"answer: at most {MAX_ANSWER_CHARS:,} characters")
    if spans is None:
        spans = ()
    if not isinstance(spans, (list, tuple)):
        raise PairError("evidence: a list of spans")
    if len(spans) > MAX_SPANS:
        raise PairError(f"evidence: at most {MAX_SPANS} spans")
    checked = sorted({(s.start, s.end): s for s in (check_span(text, raw, f"evidence {i + 1}")
                                                  for i, raw in enumerate(spans))}.values(),
                     key=lambda s: (s.start, s.end))
    return PairData(instruction, answer, tuple(checked))


def export_line(text: str, source: str, evaluation: str, originals: Sequence[tuple[str, str]],
                pairs: Sequence[PairData]) -> dict:
    """Return the L-Eval task-file line for a document with its existing questions and new pairs."""
    authored: list[dict | None] = [None] * len(originals)
    for pair in pairs:
        authored.append({
            "author": pair.author, "created_at": pair.created_at, "updated_at": pair.updated_at,
            "evidence": [span.as_json() for span in pair.spans],
        })
    return {
        "instructions": [q for q, _ in originals] + [p.instruction for p in pairs],
        "outputs": [a for _, a in originals] + [p.answer for p in pairs],
        "input": text,
        "source": source,
        "evaluation": evaluation,
        AUTHORED_KEY: authored,
    }


def read_line(data: Any, where: str) -> TaskLine:
    """Read one task-file line (ours or L-Eval's); ``where`` is "file, line N" for the messages."""
    if not isinstance(data, Mapping):
        raise PairError(f"{where}: a line must be a JSON object")
    text = data.get("input")
    if not isinstance(text, str) or not text:
        raise PairError(f"{where}, field input: the document text is missing")
    instructions, outputs = data.get("instructions"), data.get("outputs")
    if not isinstance(instructions, list) or not isinstance(outputs, list):
        raise PairError(f"{where}, field instructions/outputs: two lists are required")
    if len(instructions) != len(outputs):
        raise PairError(f"{where}, field outputs: {len(outputs)} outputs for {len(instructions)} instructions")
    source = data.get("source", "")
    evaluation = data.get("evaluation", "")
    if not isinstance(source, str) or not isinstance(evaluation, str):
        raise PairError(f"{where}, field source/evaluation: must be text")
    authored = data.get(AUTHORED_KEY)
    if authored is None:
        authored = [None] * len(instructions)
    if not isinstance(authored, list) or len(authored) != len(instructions):
        raise PairError(f"{where}, field {AUTHORED_KEY}: one entry (or null) per instruction")
    originals: list[tuple[str, str]] = []
    pairs: list[PairData] = []
    for i, (instruction, answer, meta) in enumerate(zip(instructions, outputs, authored)):
        if not isinstance(instruction, str) or not isinstance(answer, str):
            raise PairError(f"{where}, field instructions[{i}]: instructions and outputs must be text")
        if meta is None:
            originals.append((instruction, answer))
            continue
        if not isinstance(meta, Mapping):
            raise PairError(f"{where}, field {AUTHORED_KEY}[{i}]: an object or null")
        try:
            pair = check_pair(text, instruction, answer, meta.get("evidence") or [])
        except PairError as exc:
            raise PairError(f"{where}, field {AUTHORED_KEY}[{i}] {exc}") from None
        stamps = {k: meta.get(k, "") for k in ("author", "created_at", "updated_at")}
        if not all(isinstance(v, str) for v in stamps.values()):
            raise PairError(f"{where}, field {AUTHORED_KEY}[{i}]: author and times must be text")
        pairs.append(PairData(pair.instruction, pair.answer, pair.spans, **stamps))
    return TaskLine(text, source, evaluation, originals, pairs)


# --- offsets between the stored text and the document pane's text ----------------------------
# The pane shows the text with line endings normalised to "\n"; spans are stored against the
# text as stored (what an export's ``input`` holds). Both directions are exact.

def normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _removed_positions(text: str) -> list[int]:
    """Return the stored-text indices of characters the normalisation drops (the \\r of \\r\\n)."""
    return [i for i in range(len(text) - 1) if text[i] == "\r" and text[i + 1] == "\n"]


def to_stored(text: str, offset: int) -> int:
    """Map an offset in the normalised text to the stored text."""
    removed = _removed_positions(text) if "\r" in text else []
    stored = offset
    for position in removed:  # each dropped \r before the point shifts it by one
        if position < stored:
            stored += 1
        else:
            break
    return stored


def to_shown(text: str, offset: int) -> int:
    """Map an offset in the stored text to the normalised text."""
    if "\r" not in text:
        return offset
    return offset - sum(1 for position in _removed_positions(text) if position < offset)


def segment_starts(shown_text: str, segments: list[str]) -> list[int]:
    """Return where each pane segment starts in the normalised text (segments appear in order)."""
    starts = []
    cursor = 0
    for segment in segments:
        found = shown_text.find(segment, cursor)
        if found < 0:
            raise ValueError("a segment is not a substring of the document in order")
        starts.append(found)
        cursor = found + len(segment)
    return starts


def span_from_pane(text: str, start: int, end: int, quote: str) -> Span:
    """Turn a selection in the pane (normalised offsets and its text) into a span of the stored text."""
    shown = normalise_newlines(text)
    if not (_is_int(start) and _is_int(end)) or not 0 <= start < end <= len(shown) or shown[start:end] != quote:
        raise PairError("evidence: the selection does not match the document")
    s, e = to_stored(text, start), to_stored(text, end)
    return Span(s, e, text[s:e])
