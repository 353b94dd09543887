"""Text normalisation and tokenisation shared by the metrics."""

from __future__ import annotations

import logging
import re
import string
import unicodedata
from functools import lru_cache
from typing import Iterable

ASCII_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES_RE = re.compile(r"\b(a|an|the)\b")

# Han ideographs (CJK unified, extension A, compatibility, supplementary planes).
HAN_CHARS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef"
HAN_RUN_RE = re.compile(f"[{HAN_CHARS}]+")
_HAN_CHAR_RE = re.compile(f"[{HAN_CHARS}]")
# rouge-score's tokenizer: lowercase, keep [a-z0-9] runs, everything else separates.
_ROUGE_ASCII_TOKEN_RE = re.compile(r"[a-z0-9]+")
# The fixed tokenizer keeps every letter and digit: Han runs go to jieba, other
# scripts stay as alphanumeric runs ("_" excluded, as it is punctuation here).
_UNICODE_TOKEN_RE = re.compile(f"([{HAN_CHARS}]+)|([^\\W_{HAN_CHARS}]+)")


def has_han(text: str) -> bool:
    """Tell whether the text contains any Han character."""
    return _HAN_CHAR_RE.search(text) is not None


@lru_cache(maxsize=1)
def _jieba():
    # Imported lazily: loading the dictionary costs ~0.7 s and the official
    # L-Eval path never needs it.
    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


def jieba_cut(text: str) -> list[str]:
    """Segment text with jieba in accurate mode (``cut_all=False``), as LV-Eval does."""
    return list(_jieba().cut(text, cut_all=False))


def remove_articles(text: str) -> str:
    return _ARTICLES_RE.sub(" ", text)


def squeeze_spaces(text: str) -> str:
    return " ".join(text.split())


_DELETE_ASCII_PUNCTUATION = str.maketrans("", "", "".join(ASCII_PUNCTUATION))


def strip_ascii_punctuation(text: str) -> str:
    # str.translate deletes the same characters as a per-character test, many times faster.
    return text.translate(_DELETE_ASCII_PUNCTUATION)


@lru_cache(maxsize=4096)
def _is_unicode_punct_or_symbol(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "PS"


def strip_unicode_punctuation(text: str) -> str:
    """Remove every punctuation or symbol character, not only the ASCII ones."""
    return "".join(ch for ch in text if not _is_unicode_punct_or_symbol(ch))


def em_normalize(text: str) -> str:
    """Normalise for L-Eval exact match: ASCII punctuation, articles, whitespace; no lowercasing."""
    return squeeze_spaces(remove_articles(strip_ascii_punctuation(text)))


def f1_normalize(text: str) -> str:
    """Normalise for SQuAD-style token F1: lowercase, ASCII punctuation, articles, whitespace."""
    return squeeze_spaces(remove_articles(strip_ascii_punctuation(text.lower())))


def f1_normalize_unicode(text: str) -> str:
    """Like :func:`f1_normalize` but strips Unicode punctuation too (curly quotes, dashes, CJK marks)."""
    return squeeze_spaces(remove_articles(strip_unicode_punctuation(text.lower())))


def split_han_words(tokens: Iterable[str]) -> list[str]:
    """Segment any token that contains Han characters with jieba; keep the others."""
    out: list[str] = []
    for token in tokens:
        if has_han(token):
            out.extend(piece for piece in (p.strip() for p in jieba_cut(token)) if piece)
        else:
            out.append(token)
    return out


def rouge_tokens_ascii(text: str) -> list[str]:
    """Tokenise exactly like rouge-score's default tokenizer without stemming."""
    return _ROUGE_ASCII_TOKEN_RE.findall(text.lower())


def rouge_tokens_unicode(text: str) -> list[str]:
    """Tokenise keeping non-ASCII letters and digits; Han runs are segmented with jieba."""
    tokens: list[str] = []
    for han_run, other_run in _UNICODE_TOKEN_RE.findall(text.lower()):
        if han_run:
            tokens.extend(p for p in jieba_cut(han_run) if p.strip())
        else:
            tokens.append(other_run)
    return tokens


def count_words(text: str, *, count_han_chars: bool = False) -> int:
    """Count whitespace-separated words; optionally count each Han character as one word."""
    if not count_han_chars:
        return len(text.split())
    han = len(_HAN_CHAR_RE.findall(text))
    return han + len(_HAN_CHAR_RE.sub(" ", text).split())
