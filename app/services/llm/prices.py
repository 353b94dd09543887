"""The price table (USD per 1M tokens, edited on Judge → Settings) and the rule every LLM feature follows:
no price for the model, no USD budget (a cap could not be enforced, so the run is refused)."""
from __future__ import annotations

import json
import math
from typing import Any

from app.core.json_input import JsonRefused, read_json
from app.core.llm.pricing import DEFAULT_PRICES, ModelPrice, price_for
from app.services import stored_settings
from app.services.llm.endpoints import SettingsError

# Kept where it was first stored, with the judge's settings.
PRICES_PREFIX, PRICES_NAME = "judge.", "prices"


class PriceMissing(SettingsError):
    """A USD budget for a model the price table has no price for."""


def load_prices() -> dict[str, ModelPrice]:
    """The saved price table, or the shipped defaults."""
    saved = stored_settings.read(PRICES_PREFIX, (PRICES_NAME,)).get(PRICES_NAME)
    return parse_prices(saved) if saved else dict(DEFAULT_PRICES)


def stage_prices(text: str) -> None:
    """Validate an edited price table and put it in the session (the caller commits); SettingsError if bad."""
    stored_settings.stage(PRICES_PREFIX, {PRICES_NAME: prices_as_json(parse_prices(text))})


def require_price(model: str, budget_usd: float | None, prices: dict[str, ModelPrice] | None = None) -> None:
    """Refuse a USD budget for a model without a price; without a budget anything goes (reported in tokens)."""
    if budget_usd is None:
        return
    if budget_usd <= 0:
        raise SettingsError("budget: more than 0 USD, or empty for no cap")
    if price_for(model, load_prices() if prices is None else prices) is None:
        raise PriceMissing(f"no price for {model!r}: add it to the price table (Judge → Settings) to set a USD budget")


def parse_prices(text: str) -> dict[str, ModelPrice]:
    """Parse a price table {"model": [prompt_usd_per_1M, completion_usd_per_1M]}."""
    try:
        data = read_json(text)
    except JsonRefused as exc:
        raise SettingsError(f"price table is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise SettingsError('price table must be a JSON object: {"model": [prompt, completion]}')
    prices: dict[str, ModelPrice] = {}
    for model, pair in data.items():
        if not (isinstance(pair, list) and len(pair) == 2 and all(_is_price(v) for v in pair)):
            raise SettingsError(f"price of {model!r} must be [prompt, completion] USD per 1M tokens, both >= 0")
        prices[str(model)] = ModelPrice(float(pair[0]), float(pair[1]))
    return prices


def _is_price(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def prices_as_json(prices: dict[str, ModelPrice]) -> str:
    """Return the price table as the editable JSON text."""
    return json.dumps({m: [p.prompt_per_million, p.completion_per_million] for m, p in prices.items()}, indent=2)
