"""Cut a long document to a token budget, and record what was cut.

``leval`` repeats L-Eval's Baselines loop exactly. Only the document is counted; the budget is
the context window minus the answer's room (``k_to_number("16k") - max_new_tokens``). While the
document has more tokens than that, it is re-cut to its first ``budget - cnt`` pieces of
``split(" ")`` (its last ones for code), ``cnt`` growing by 250 per round. Pieces are not
tokens, so the first cut may keep far more or far fewer tokens than the budget, and a text
without spaces is cut to nothing.

``fit`` keeps the longest run of whole pieces (of characters, when not even one piece fits)
whose tokens fit a budget the caller has already reduced by the rest of the prompt.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable

Counter = Callable[[str], int]
LEVAL_STEP = 250
METHODS = ("leval", "fit")


@dataclass(frozen=True)
class Truncation:
    """The document a prompt gets and what happened to it."""

    text: str
    method: str
    budget_tokens: int
    tokens_before: int
    tokens_after: int
    pieces_before: int
    pieces_after: int
    chars_before: int
    kept: str  # "start" or "end": which part of the document was kept
    rounds: int  # how many times the document was re-cut

    @property
    def cut(self) -> bool:
        return len(self.text) != self.chars_before

    @property
    def chars_cut(self) -> int:
        return self.chars_before - len(self.text)

    def record(self) -> dict:
        """Return the facts a manifest keeps (everything but the text)."""
        data = asdict(self)
        data.pop("text")
        data.update(cut=self.cut, chars_cut=self.chars_cut, chars_after=len(self.text))
        return data


def _check_budget(budget: int) -> None:
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"the document's token budget must be a positive integer, not {budget!r}")


def truncate_leval(text: str, budget: int, count: Counter, keep_end: bool = False) -> Truncation:
    """Cut ``text`` as L-Eval's Baselines do (``keep_end`` for code: cut from the left)."""
    _check_budget(budget)
    document = text
    tokens_before = tokens = count(document)
    cnt = 0
    rounds = 0
    while tokens > budget:
        pieces = document.split(" ")
        document = " ".join(pieces[cnt - budget:] if keep_end else pieces[:budget - cnt])
        cnt += LEVAL_STEP
        rounds += 1
        tokens = count(document)
    return Truncation(
        text=document, method="leval", budget_tokens=budget, tokens_before=tokens_before,
        tokens_after=tokens, pieces_before=len(text.split(" ")), pieces_after=len(document.split(" ")),
        chars_before=len(text), kept="end" if keep_end else "start", rounds=rounds,
    )


def _longest_fitting(total: int, fits: Callable[[int], bool]) -> int:
    """Return the largest n in [0, total] with fits(n), assuming fits is monotone and fits(0)."""
    low, high = 0, total
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def truncate_fit(text: str, budget: int, count: Counter, keep_end: bool = False) -> Truncation:
    """Keep the most whole pieces of ``text`` (from its start, or its end) that fit ``budget``."""
    _check_budget(budget)
    tokens_before = count(text)
    pieces = text.split(" ")
    kept = "end" if keep_end else "start"

    def take(items: list, n: int):
        if n == 0:
            return items[:0]
        return items[-n:] if keep_end else items[:n]

    rounds = 0
    document = text
    if tokens_before > budget:
        rounds = 1
        n = _longest_fitting(len(pieces), lambda k: count(" ".join(take(pieces, k))) <= budget)
        document = " ".join(take(pieces, n))
        if n == 0 and pieces:
            # Not even one piece fits (a text without spaces): cut inside the nearest piece.
            piece = pieces[-1] if keep_end else pieces[0]
            m = _longest_fitting(len(piece), lambda k: count("".join(take(list(piece), k))) <= budget)
            document = "".join(take(list(piece), m))
    return Truncation(
        text=document, method="fit", budget_tokens=budget, tokens_before=tokens_before,
        tokens_after=count(document) if document != text else tokens_before,
        pieces_before=len(pieces), pieces_after=len(document.split(" ")), chars_before=len(text),
        kept=kept, rounds=rounds,
    )


def truncate(text: str, budget: int, count: Counter, keep_end: bool = False, method: str = "leval") -> Truncation:
    """Cut ``text`` with the named method."""
    if method == "leval":
        return truncate_leval(text, budget, count, keep_end)
    if method == "fit":
        return truncate_fit(text, budget, count, keep_end)
    raise ValueError(f"truncation method must be one of {', '.join(METHODS)}, not {method!r}")


def document_budget(context_tokens: int, max_new_tokens: int, overhead_tokens: int = 0) -> int:
    """Return the document's budget: the context window less the answer's room (and, for fit, the prompt)."""
    for name, value in (("context tokens", context_tokens), ("max tokens", max_new_tokens),
                        ("prompt tokens", overhead_tokens)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, not {value!r}")
    budget = context_tokens - max_new_tokens - overhead_tokens
    if budget < 1:
        raise ValueError(
            f"a context of {context_tokens} tokens leaves no room for the document after "
            f"{max_new_tokens} answer tokens and {overhead_tokens} prompt tokens"
        )
    return budget
