"""Evidence-anchored LLM evaluation: the `evidence` profile of the rater and the judge, its pure parts.

The model reads the document (cut to its context by the generation code's `fit` truncation and token
counting), gives its score or verdict, and backs it with up to N verbatim quotes per answer, each marked
supports/contradicts. It is asked for JSON through `response_format` (a JSON schema); a server that
refuses the schema gets the same prompt without it, and the reply may then use the text format:

    QUOTE supports: <verbatim passage>          (the rater: one answer)
    QUOTE A contradicts: <verbatim passage>     (the judge: the answer's letter first)
    ...
    [[4]]                                       (the rating, or [[A]] / [[B]] / [[C]] for a verdict)

Every quote is then checked against the stored document (app.core.quotes): offsets for the page, and a
status (exact, close, unsupported; a quote under the minimum substance is unsupported and marked too short).
A rating whose quotes are all unsupported, or that gives a quote under the minimum, is *flagged*.
Pure: no Flask, no database.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from app.core.generation.truncate import Truncation, document_budget, truncate
from app.core.json_input import JsonRefused, read_json
from app.core.quotes import CLOSE, EXACT, UNSUPPORTED, DocumentIndex

PROFILE = "evidence"
SUPPORTS, CONTRADICTS = "supports", "contradicts"
STANCES = (SUPPORTS, CONTRADICTS)
STATUSES = (EXACT, CLOSE, UNSUPPORTED)
# The profile's defaults, stated on the rater's and the judge's pages.
DEFAULT_MAX_QUOTES = 3
MAX_QUOTES = 20  # the most quotes per answer a run may ask for
DEFAULT_CONTEXT_TOKENS = 128_000
REPLY_TOKENS = 2_048  # the call's max_tokens, kept free of the document
TRUNCATION_METHOD = "fit"
NO_DECISION = "the reply holds no readable decision (neither the JSON object nor the text format)"

_TEXT_QUOTE = re.compile(r"^\s*QUOTE(?:\s+([AB]))?\s+(supports|contradicts)\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_FENCE = re.compile(r"```(?:json)?\s*(\{.*\})\s*```", re.DOTALL)


@dataclass(frozen=True)
class Quote:
    answer: str  # "" for the rater's one answer; "A" or "B" for the judge's
    stance: str  # supports | contradicts
    text: str


@dataclass(frozen=True)
class EvidenceReply:
    decision: object | None  # the score (1-5) or the verdict ("A", "B", "C"); None: no decision
    quotes: tuple[Quote, ...]
    form: str  # "json" or "text"


def check_max_quotes(max_quotes: int) -> None:
    """ValueError unless a run asks for 1 to MAX_QUOTES quotes per answer."""
    if not 1 <= max_quotes <= MAX_QUOTES:
        raise ValueError(f"quotes per answer must be between 1 and {MAX_QUOTES}")


def response_format(decision: str, decision_schema: dict, answers: Sequence[str], max_quotes: int) -> dict:
    """The `response_format` of a call: a strict JSON schema of the reply."""
    quote = {"type": "object", "additionalProperties": False, "required": ["quote", "stance"],
             "properties": {"quote": {"type": "string"}, "stance": {"type": "string", "enum": list(STANCES)}}}
    if answers:
        quote["required"] = ["answer", "quote", "stance"]
        quote["properties"]["answer"] = {"type": "string", "enum": list(answers)}
    schema = {"type": "object", "additionalProperties": False, "required": ["reasoning", "quotes", decision],
              "properties": {"reasoning": {"type": "string"},
                             "quotes": {"type": "array", "items": quote,
                                        "maxItems": max_quotes * max(1, len(answers))},
                             decision: decision_schema}}
    return {"type": "json_schema", "json_schema": {"name": f"evidence_{decision}", "strict": True, "schema": schema}}


def rating_format(max_quotes: int) -> dict:
    return response_format("score", {"type": "integer", "enum": [1, 2, 3, 4, 5]}, (), max_quotes)


def verdict_format(max_quotes: int) -> dict:
    return response_format("verdict", {"type": "string", "enum": ["A", "B", "C"]}, ("A", "B"), max_quotes)


def _json_object(text: str) -> dict | None:
    fenced = _FENCE.search(text)
    candidates = [fenced.group(1)] if fenced else []
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        candidates.append(text[start:end + 1])
    for candidate in candidates:
        try:
            value = read_json(candidate)  # a model's reply: untrusted text
        except JsonRefused:
            continue
        if isinstance(value, dict):
            return value
    return None


def _clip(quotes: Iterable[Quote], answers: Sequence[str], max_quotes: int) -> tuple[Quote, ...]:
    """At most `max_quotes` per answer, in the reply's order; quotes of an unknown answer are dropped."""
    kept: list[Quote] = []
    allowed = set(answers) or {""}
    for quote in quotes:
        if quote.answer in allowed and quote.text.strip() and sum(q.answer == quote.answer for q in kept) < max_quotes:
            kept.append(quote)
    return tuple(kept)


def parse_reply(text: str | None, *, decision: str, read_decision: Callable[[object], object | None],
                read_text_decision: Callable[[str], object | None], answers: Sequence[str] = (),
                max_quotes: int = DEFAULT_MAX_QUOTES) -> EvidenceReply | None:
    """Read a reply in the JSON form, else the text form; None when neither holds a decision."""
    if not text:
        return None
    value = _json_object(text)
    if value is not None and read_decision(value.get(decision)) is not None:
        quotes = []
        for entry in value.get("quotes") or []:
            if isinstance(entry, dict) and isinstance(entry.get("quote"), str):
                stance = str(entry.get("stance", SUPPORTS)).lower()
                quotes.append(Quote(str(entry.get("answer", "")).upper() if answers else "",
                                    stance if stance in STANCES else SUPPORTS, entry["quote"]))
        return EvidenceReply(read_decision(value.get(decision)), _clip(quotes, answers, max_quotes), "json")
    found = read_text_decision(text)
    if found is None:
        return None
    quotes = [Quote((letter or "").upper() if answers else "", stance.lower(), body.strip().strip('"\u201c\u201d'))
              for letter, stance, body in _TEXT_QUOTE.findall(text)]
    return EvidenceReply(found, _clip(quotes, answers, max_quotes), "text")


def read_score(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, str)) and str(value).strip() in {"1", "2", "3", "4", "5"}:
        return int(str(value).strip())
    return None


def read_verdict(value: object) -> str | None:
    return value.strip().upper() if isinstance(value, str) and value.strip().upper() in ("A", "B", "C") else None


def fit_document(text: str, count: Callable[[str], int], *, context_tokens: int, reply_tokens: int,
                 prompt_tokens: int) -> Truncation:
    """The document cut to what the context holds beside the rest of the prompt and the reply."""
    return truncate(text, document_budget(context_tokens, reply_tokens, prompt_tokens), count,
                    method=TRUNCATION_METHOD)


def check_quotes(index: DocumentIndex, quotes: Iterable[Quote]) -> list[dict]:
    """Each quote with its status, its offsets in the stored document and the reason."""
    checked = []
    for quote in quotes:
        check = index.verify(quote.text)
        checked.append({"answer": quote.answer, "stance": quote.stance, "quote": quote.text, "status": check.status,
                        "start": check.start, "end": check.end, "reason": check.reason, "too_short": check.too_short})
    return checked


def flagged_scope(noun: str, *, left_out: bool) -> str:
    """What a number of an evidence run says about its flagged decisions: "flagged judgments included".

    The rule it states: a win rate or a share counts the flagged decisions unless the one switch left them out.
    """
    return f"flagged {noun} {'left out' if left_out else 'included'}"


# Why a decision is flagged: an id (the pages' data-flag) and what the pages say.
FLAGS = {"too-short": "a quote under the minimum", "all-unsupported": "every quote unsupported"}


def flag_of(quotes: Sequence[dict]) -> str | None:
    """Why a decision is flagged ("too-short", "all-unsupported"), or None. A quote under the minimum substance
    flags it (a quote like "the" is no evidence; quoting one is how a model steered by the document games the
    check, so it flags the decision even beside genuine quotes), and so do quotes that are all unsupported."""
    if any(q.get("too_short") for q in quotes):
        return "too-short"
    if quotes and all(q["status"] == UNSUPPORTED for q in quotes):
        return "all-unsupported"
    return None


def flag_reason(quotes: Sequence[dict]) -> str | None:
    """What the pages say of a flagged decision, or None."""
    flag = flag_of(quotes)
    return FLAGS[flag] if flag else None


def is_flagged(quotes: Sequence[dict]) -> bool:
    """A decision resting on nothing the document holds: see flag_of."""
    return flag_of(quotes) is not None


@dataclass(frozen=True)
class Rated:
    """One decision of a run, for the report: the system it is about, the answer's length, its checked quotes."""

    system: str
    answer_chars: int
    quotes: tuple[dict, ...]


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def summarise(decisions: Sequence[Rated], *, leave_out_flagged: bool = False) -> dict:
    """Shares of exact/close/unsupported quotes, decisions resting on an unsupported one, flags, clusters.

    `leave_out_flagged` drops flagged decisions first; the result says whether it did.
    """
    flagged = sum(is_flagged(d.quotes) for d in decisions)
    kept = [d for d in decisions if not (leave_out_flagged and is_flagged(d.quotes))]
    quotes = [q for d in kept for q in d.quotes]
    counts = {status: sum(q["status"] == status for q in quotes) for status in STATUSES}
    resting = sum(any(q["status"] == UNSUPPORTED for q in d.quotes) for d in kept)
    systems: dict[str, list[Rated]] = {}
    for d in kept:
        systems.setdefault(d.system, []).append(d)
    per_system = []
    for system, rows in sorted(systems.items()):
        system_quotes = [q for d in rows for q in d.quotes]
        unsupported = sum(q["status"] == UNSUPPORTED for q in system_quotes)
        per_system.append({"system": system, "decisions": len(rows), "quotes": len(system_quotes),
                           "unsupported": unsupported, "unsupported_share": _share(unsupported, len(system_quotes)),
                           "flagged": sum(is_flagged(d.quotes) for d in rows),
                           "mean_answer_chars": sum(d.answer_chars for d in rows) / len(rows)})
    return {"leave_out_flagged": leave_out_flagged, "decisions": len(kept), "flagged": flagged,
            "left_out": len(decisions) - len(kept), "quotes": len(quotes),
            **{status: counts[status] for status in STATUSES},
            **{f"{status}_share": _share(counts[status], len(quotes)) for status in STATUSES},
            "with_quotes": sum(bool(d.quotes) for d in kept), "resting_on_unsupported": resting,
            "resting_on_unsupported_share": _share(resting, len(kept)),
            "per_system": per_system, "by_length": by_length(kept)}


def by_length(decisions: Sequence[Rated]) -> dict:
    """Does the model invent more for long answers? The unsupported share of quotes for the answers up to the
    median length and above it, and Spearman's rho between answer length and the decision's unsupported count."""
    quoted = [d for d in decisions if d.quotes]
    if len(quoted) < 2:
        return {"median_chars": None, "shorter_share": None, "longer_share": None, "rho": None, "n": len(quoted)}
    lengths = sorted(d.answer_chars for d in quoted)
    median = lengths[len(lengths) // 2]

    def share(rows: list[Rated]) -> float | None:
        pool = [q for d in rows for q in d.quotes]
        return _share(sum(q["status"] == UNSUPPORTED for q in pool), len(pool))

    rho = None
    unsupported = [sum(q["status"] == UNSUPPORTED for q in d.quotes) for d in quoted]
    if len(set(unsupported)) > 1 and len({d.answer_chars for d in quoted}) > 1:
        from scipy.stats import spearmanr

        rho = float(spearmanr([d.answer_chars for d in quoted], unsupported).statistic)
    return {"median_chars": median, "shorter_share": share([d for d in quoted if d.answer_chars <= median]),
            "longer_share": share([d for d in quoted if d.answer_chars > median]), "rho": rho, "n": len(quoted)}

