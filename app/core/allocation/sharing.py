"""A fixed study shares out documents, not questions: each document, with all its questions, goes to k annotators.

An annotator reads the whole document before scoring any question on it, so the reading is the cost.
Sharing questions scatters each annotator's share over nearly every document (k = 2 of 3 annotators read
about 36 documents where 24 do); sharing documents costs exactly k readings per document. Documents are
given longest first to the k annotators with the least reading so far (the LPT rule for balancing loads:
Graham, "Bounds on multiprocessing timing anomalies", SIAM J. Appl. Math. 1969), so the words each
annotator reads are balanced. Annotators who already scored questions of a document keep it.
"""
from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

# Words to read: CJK characters are read at roughly 0.6 of an English word each (about 400 characters a
# minute against 240 words), so a Chinese document's load is comparable to an English one's. From the
# stored counts: English runs about 6 characters a word (space included); characters beyond that are
# taken for CJK ones (a Chinese text has few spaces, so almost all its characters are).
CJK_WORDS_PER_CHARACTER = 0.6
CHARACTERS_PER_WORD = 6


def reading_load(word_count: int, char_count: int) -> float:
    """A document's reading load in English-word equivalents, from its whitespace words and characters."""
    cjk = max(0, char_count - CHARACTERS_PER_WORD * word_count)
    return word_count + CJK_WORDS_PER_CHARACTER * cjk


def share_documents(loads: Mapping[int, float], people: Sequence[int], k: int, rng: random.Random,
                    keep: Mapping[int, Sequence[int]] | None = None) -> dict[int, list[int]]:
    """{document: its k annotators}: longest document first to the least-loaded annotators (ties at random).

    `keep[document]` lists annotators who scored on it, most work first: up to k of them keep it.
    """
    keep = keep or {}
    reading = dict.fromkeys(people, 0.0)
    order = list(people)
    rng.shuffle(order)
    rank = {person: i for i, person in enumerate(order)}  # the random tie-break, fixed for the whole plan
    plan: dict[int, list[int]] = {}
    # Documents with work already done first (their annotators are fixed), then the longest first.
    documents = sorted(loads, key=lambda d: (not keep.get(d), -loads[d], d))
    for document in documents:
        chosen = [p for p in keep.get(document, ()) if p in reading][:k]
        for person in sorted(reading, key=lambda p: (reading[p], rank[p])):
            if len(chosen) >= k:
                break
            if person not in chosen:
                chosen.append(person)
        plan[document] = chosen
        for person in chosen:
            reading[person] += loads[document]
    return plan
