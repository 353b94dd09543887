"""Count tokens with the model family's real tokenizer when it can be loaded, else estimate.

OpenAI model names (``gpt-3.5-turbo``, ``gpt-4o``, ``o3``...) map to a tiktoken encoding by
tiktoken's own table. tiktoken's wheel carries no vocabulary: the first use of an encoding
reads it from tiktoken's cache (``TIKTOKEN_CACHE_DIR``, else ``$TMP/data-gym-cache``) or
downloads it. The load runs in a helper thread for at most ``LEVAL_TIKTOKEN_TIMEOUT`` seconds
(default 10) so that a machine without internet falls back at once instead of hanging;
``LEVAL_TOKENIZER=estimate`` skips tiktoken altogether.

Every other model, and any OpenAI model whose encoding cannot be loaded, is counted with the
documented estimate: one token per non-ASCII character plus one per three ASCII characters,
rounded up. On L-Eval's English documents cl100k_base gives 0.19-0.37 tokens per character,
so the estimate (0.33) is within a few percent of the worst case and over-counts typical
prose by about half: a budget estimated this way keeps less text but rarely overflows a
context. The counter always says which method it used and, for a fallback, why.
"""
from __future__ import annotations

import math
import os
import threading
from dataclasses import dataclass
from typing import Callable

ESTIMATE = "estimate"
ESTIMATE_RULE = "ceil(ascii_chars / 3) + non_ascii_chars"
DEFAULT_TIMEOUT_S = 10.0

_loaded: dict[str, tuple[object | None, str]] = {}
_lock = threading.Lock()


def estimate_tokens(text: str) -> int:
    """Return the documented estimate for ``text``."""
    ascii_chars = len(text.encode("ascii", "ignore"))
    return math.ceil(ascii_chars / 3) + (len(text) - ascii_chars)


@dataclass(frozen=True)
class TokenCounter:
    """A token-counting function with the name of its method and, for a fallback, the reason."""

    method: str  # "tiktoken:<encoding>" or "estimate"
    exact: bool
    reason: str
    _count: Callable[[str], int]

    def __call__(self, text: str) -> int:
        return self._count(text)

    def describe(self) -> dict:
        return {"method": self.method, "exact": self.exact, "reason": self.reason}


def estimating_counter(reason: str) -> TokenCounter:
    return TokenCounter(ESTIMATE, False, f"{reason}; estimated as {ESTIMATE_RULE}", estimate_tokens)


def encoding_name_for(model: str) -> str | None:
    """Return tiktoken's encoding for an OpenAI model name, or None (not OpenAI, or no tiktoken)."""
    try:
        import tiktoken
    except ImportError:
        return None
    name = model.strip()
    try:
        return tiktoken.encoding_name_for_model(name)
    except KeyError:
        # Names served through proxies often carry a provider prefix ("openai/gpt-4o").
        tail = name.rsplit("/", 1)[-1]
        if tail != name:
            try:
                return tiktoken.encoding_name_for_model(tail)
            except KeyError:
                return None
        return None


def _load_encoding(name: str, timeout: float) -> tuple[object | None, str]:
    """Load a tiktoken encoding once per process; return (encoding or None, failure reason)."""
    with _lock:
        if name in _loaded:
            return _loaded[name]
    box: dict[str, object] = {}

    def work() -> None:
        try:
            import tiktoken

            box["encoding"] = tiktoken.get_encoding(name)
        except Exception as error:  # network, cache, hash: any failure means "fall back"
            box["error"] = f"{type(error).__name__}: {str(error)[:200]}"

    thread = threading.Thread(target=work, name=f"tiktoken-load-{name}", daemon=True)
    thread.start()
    thread.join(timeout)
    if "encoding" in box:
        result = (box["encoding"], "")
    elif "error" in box:
        result = (None, f"tiktoken could not load {name} ({box['error']})")
    else:
        result = (None, f"tiktoken did not load {name} within {timeout:g} s (offline?)")
    with _lock:
        _loaded.setdefault(name, result)
        return _loaded[name]


def counter_for(model: str, encoding_loader: Callable[[str], tuple[object | None, str]] | None = None) -> TokenCounter:
    """Return the best available counter for ``model``."""
    if os.environ.get("LEVAL_TOKENIZER", "").strip().lower() == ESTIMATE:
        return estimating_counter("LEVAL_TOKENIZER=estimate")
    name = encoding_name_for(model)
    if name is None:
        try:
            import tiktoken  # noqa: F401
        except ImportError:
            return estimating_counter("tiktoken is not installed")
        return estimating_counter(f"no tokenizer library is known for model {model!r}")
    if encoding_loader is None:
        timeout = float(os.environ.get("LEVAL_TIKTOKEN_TIMEOUT", DEFAULT_TIMEOUT_S))
        encoding, reason = _load_encoding(name, timeout)
    else:
        encoding, reason = encoding_loader(name)
    if encoding is None:
        return estimating_counter(reason)
    # disallowed_special=() counts "<|endoftext|>" in a document as text, as a server does.
    return TokenCounter(
        f"tiktoken:{name}", True, "", lambda text: len(encoding.encode(text, disallowed_special=()))
    )


def forget_loaded() -> None:
    """Drop the per-process encoding memo (tests, or after seeding tiktoken's cache)."""
    with _lock:
        _loaded.clear()
