"""Scripted replies of an `evidence` rater or judge for the stub server: genuine and invented quotes.

The reply depends only on what is sent (the answer's hash picks the kind), so a re-run asks the same
and gets the same. Kinds, for the rater:
- 0: JSON, a verbatim quote and an upper-cased one (close): nothing unsupported;
- 1: JSON, a verbatim quote and an invented one (a word swapped): rests on an unsupported quote;
- 2: the text format, two invented quotes: every quote unsupported, so the rating is flagged.
"""
from __future__ import annotations

import hashlib
import json
import re

_DOCUMENT = re.compile(r"## Document\n(.*?)\n\n## End of the document", re.DOTALL)
_ANSWER = re.compile(r"## The assistant's answer\n(.*)\n\n## End of the answer", re.DOTALL)
INVENTED = "the zebra council met at midnight in 1887 and resolved nothing"


def kind_of(answer: str) -> int:
    return hashlib.sha256(answer.encode()).digest()[0] % 3


def score_of(answer: str) -> int:
    return 1 + hashlib.sha256(answer.encode()).digest()[1] % 5


def genuine(document: str, seed: str, words: int = 8) -> str:
    """A run of `words` plain words of the document (in a row, as it writes them), picked by `seed`."""
    tokens = document.split()
    plain = [i for i in range(len(tokens) - words)
             if all(re.fullmatch(r"[A-Za-z]{2,}[,.]?", t) for t in tokens[i:i + words])]
    assert plain, "the document has no run of plain words to quote"
    start = plain[hashlib.sha256(seed.encode()).digest()[2] % len(plain)]
    return " ".join(tokens[start:start + words])


def swapped(passage: str) -> str:
    parts = passage.split()
    parts[len(parts) // 2] = "zebra"
    return " ".join(parts)


def user_text(body) -> str:
    return "\n".join(m.get("content", "") for m in body["messages"] if m.get("role") == "user")


def rater_reply(body) -> str:
    text = user_text(body)
    document, answer = _DOCUMENT.search(text).group(1), _ANSWER.search(text).group(1)
    kind, score = kind_of(answer), score_of(answer)
    quote = genuine(document, answer)
    if kind == 0:
        quotes = [{"quote": quote, "stance": "supports"}, {"quote": genuine(document, answer + "+").upper(),
                                                           "stance": "contradicts"}]
    elif kind == 1:
        quotes = [{"quote": quote, "stance": "supports"}, {"quote": swapped(quote), "stance": "supports"}]
    else:
        return (f"The answer misreads the document.\nQUOTE contradicts: \"{INVENTED}\"\n"
                f"QUOTE supports: {swapped(quote)}\nRating: [[{score}]]")
    return json.dumps({"reasoning": "Checked against the document.", "quotes": quotes, "score": score})


_ANSWERS = re.compile(r"## Assistant A's answer\n(.*)\n\n## Assistant B's answer\n(.*)\n\n## End of answers", re.DOTALL)


def judge_kind(answer_a: str, answer_b: str) -> int:
    return kind_of(answer_a + "\x00" + answer_b)


def judge_reply(body) -> str:
    """The judge's kinds, as the rater's: 0 genuine quotes for both answers, 1 one of them invented, 2 only
    invented quotes in the text format (flagged). The verdict: the longer answer wins (a tie when equal)."""
    text = user_text(body)
    document = _DOCUMENT.search(text).group(1)
    answer_a, answer_b = _ANSWERS.search(text).groups()
    verdict = "A" if len(answer_a) > len(answer_b) else "B" if len(answer_b) > len(answer_a) else "C"
    kind = judge_kind(answer_a, answer_b)
    quote = genuine(document, answer_a + answer_b)
    if kind == 2:
        return (f"QUOTE A supports: {INVENTED}\nQUOTE B contradicts: {swapped(quote)}\nVerdict: [[{verdict}]]")
    second = genuine(document, answer_b) if kind == 0 else swapped(quote)
    quotes = [{"answer": "A", "quote": quote, "stance": "supports"},
              {"answer": "B", "quote": second, "stance": "contradicts"}]
    return json.dumps({"reasoning": "Checked against the document.", "quotes": quotes, "verdict": verdict})
