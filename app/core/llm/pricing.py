"""What calls cost: a configurable price table and the dry-run estimate."""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import NamedTuple, TypedDict



class ModelPrice(NamedTuple):
    """USD per one million tokens."""

    prompt_per_million: float
    completion_per_million: float


PriceTable = Mapping[str, ModelPrice | tuple[float, float]]

# List prices in USD per 1M tokens as published by OpenAI when this table was written.
# Prices change: override them through the settings page (pass `prices=`) rather than
# trusting these for billing. A model missing here is reported in tokens only.
DEFAULT_PRICES: dict[str, ModelPrice] = {
    "gpt-4": ModelPrice(30.00, 60.00),
    "gpt-4-32k": ModelPrice(60.00, 120.00),
    "gpt-4-turbo": ModelPrice(10.00, 30.00),
    "gpt-4o": ModelPrice(2.50, 10.00),
    "gpt-4o-mini": ModelPrice(0.15, 0.60),
    "gpt-4.1": ModelPrice(2.00, 8.00),
    "gpt-4.1-mini": ModelPrice(0.40, 1.60),
    "gpt-3.5-turbo": ModelPrice(0.50, 1.50),
    "gpt-3.5-turbo-16k": ModelPrice(3.00, 4.00),
}

# Dated snapshots ("gpt-4-0613", "gpt-4o-2024-08-06") are priced like their base model.
_SNAPSHOT_SUFFIX = re.compile(r"-(\d{4}|\d{4}-\d{2}-\d{2})$")

CHARS_PER_TOKEN = 4  # rough average for English text with OpenAI tokenizers
TOKENS_PER_MESSAGE = 4  # chat formatting overhead per message, roughly
DEFAULT_COMPLETION_TOKENS_PER_CALL = 300  # a short answer or explanation


# What a call is reserved at before it is sent, so that a crash mid-call can only over-count usage.
# A byte-level BPE token covers at least one UTF-8 byte, so a message's bytes bound its tokens; the
# chat format adds a few tokens per message and for the reply's start.
MESSAGE_OVERHEAD_BOUND = 8
REPLY_START_BOUND = 8
# A call without max_tokens is reserved at the reply cap of L-Eval's judge (llm_eval.py, 2048 tokens).
RESERVED_COMPLETION_TOKENS = 2048


class CostEstimate(TypedDict):
    calls: int
    cached: int
    prompt_tokens_est: int
    completion_tokens_est: int
    cost_usd_est: float | None
    method: str


def price_for(model: str, prices: PriceTable | None = None) -> ModelPrice | None:
    """Return the price of `model` (or of its base model for a dated snapshot), or None."""
    table = DEFAULT_PRICES if prices is None else prices
    for name in (model, _SNAPSHOT_SUFFIX.sub("", model)):
        if name in table:
            return ModelPrice(*table[name])
    return None


def cost_usd(
    model: str, prompt_tokens: int, completion_tokens: int, prices: PriceTable | None = None
) -> float | None:
    """Return the USD cost of the tokens, or None for a model without a price."""
    price = price_for(model, prices)
    if price is None:
        return None
    return (prompt_tokens * price.prompt_per_million + completion_tokens * price.completion_per_million) / 1e6


def approx_tokens(messages: list[dict[str, str]]) -> int:
    """Return an approximate prompt token count: characters / 4 plus per-message overhead."""
    return sum(math.ceil(len(m["content"]) / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE for m in messages)


def reserved_tokens(messages: list[dict[str, str]], max_tokens: int | None = None) -> tuple[int, int]:
    """Return (prompt, completion) tokens to reserve for a call: more than it can use (see above)."""
    prompt = sum(len(m["content"].encode("utf-8")) + MESSAGE_OVERHEAD_BOUND for m in messages) + REPLY_START_BOUND
    return prompt, max_tokens if max_tokens is not None else RESERVED_COMPLETION_TOKENS


def estimate_calls(
    prompts: Iterable[list[dict[str, str]]],
    model: str,
    *,
    cached: int = 0,
    prices: PriceTable | None = None,
    completion_tokens_per_call: int = DEFAULT_COMPLETION_TOKENS_PER_CALL,
) -> CostEstimate:
    """Estimate tokens and cost of sending these prompts (dry run); `cached` calls cost nothing.

    Tokens are approximate: 4 characters per token and a fixed completion length.
    """
    calls = prompt_tokens = 0
    for messages in prompts:
        calls += 1
        prompt_tokens += approx_tokens(messages)
    completion_tokens = calls * completion_tokens_per_call
    return CostEstimate(
        calls=calls,
        cached=cached,
        prompt_tokens_est=prompt_tokens,
        completion_tokens_est=completion_tokens,
        cost_usd_est=cost_usd(model, prompt_tokens, completion_tokens, prices),
        method=(
            f"approximate: {CHARS_PER_TOKEN} characters per token, "
            f"{completion_tokens_per_call} completion tokens per call"
        ),
    )
