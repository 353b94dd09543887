"""How an unsupported quote differs from the nearest passage: the changed units, aligned and named (pure).

The reason names the most telling change: a number first, then a negation, then a name, then any word
(app.core.quotes explains with these).
"""
from __future__ import annotations

from app.core.quote_scripts import has_negation, token_pattern

NOTHING = "(nothing)"  # the side of a change where a word was added or dropped: no word of its own


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
        return [] if side == NOTHING else token_pattern().findall(side)

    tests = (
        ("a number", lambda quote, passage: any(c.isdigit() for c in quote + passage)),
        ("a negation", lambda quote, passage: any(has_negation(side, words(side)) for side in (quote, passage)
                                                  if side != NOTHING)),
        ("a name", lambda quote, passage: all(any(w[:1].isupper() for w in words(side)) for side in (quote, passage))),
    )
    for kind, test in tests:
        change = next(((q, p) for q, p in changes if test(q, p)), None)
        if change:
            return f"{kind}: {change[0]} vs {change[1]}"
    more = f" (and {len(changes) - 1} more)" if len(changes) > 1 else ""
    return f"a word: {changes[0][0]} vs {changes[0][1]}{more}"
