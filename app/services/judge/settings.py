"""Judge settings kept in the Setting table: endpoint, API key, limits, defaults and prices.

Environment variables OPENAI_BASE_URL and OPENAI_API_KEY are the defaults; a value saved
in the settings page wins. The key is stored so the worker can use it, but it is never
rendered back, logged, put in job params or exported: pages show `masked_key` only.

The base URL and the key are the "judge" endpoint's, whose rules (who may change them, where a
key may go) have one owner: `services/llm/endpoints.py`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.judge import ModelPrice
from app.core.judge.runner import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT_S,
)
from app.extensions import db
from app.services import stored_settings
from app.services.input_rules import text_problem
from app.services.llm import endpoints
from app.services.llm import prices as price_table
from app.services.llm.endpoints import (
    EndpointChangeNotAllowed,
    SettingsError,
    endpoint_origin,
)
from app.services.llm.prices import parse_prices, prices_as_json

if TYPE_CHECKING:
    import openai

PREFIX = "judge."
# The judge's own settings; its base URL and key are the "judge" endpoint's, its prices the price table's.
KEYS = ("model", "baseline", "max_retries", "timeout_s")
DEFAULT_JUDGE_MODEL = "gpt-4"
# L-Eval reports win rates against this system unless told otherwise.
LEVAL_BASELINE = "turbo-16k-0613"
MAX_CONCURRENCY = 64


@dataclass(frozen=True)
class JudgeSettings:
    endpoint: endpoints.Endpoint  # the "judge" endpoint: base URL and key, by the endpoints' rules
    model: str
    baseline: str
    max_retries: int
    timeout_s: float
    prices: dict[str, ModelPrice]

    # The endpoint's facts, as the judge's pages and callers read them.
    base_url = property(lambda self: self.endpoint.base_url)
    api_key = property(lambda self: self.endpoint.api_key)
    masked_key = property(lambda self: self.endpoint.masked_key)
    base_url_source = property(lambda self: self.endpoint.base_url_source)
    api_key_source = property(lambda self: self.endpoint.api_key_source)
    key_withheld_for = property(lambda self: self.endpoint.key_withheld_for)

    def client(self) -> "openai.OpenAI":
        """Build the OpenAI client for these settings (retries honour Retry-After)."""
        return self.endpoint.client(max_retries=self.max_retries, timeout=self.timeout_s)

    def __repr__(self) -> str:  # keep the key out of tracebacks and debug logs
        return f"JudgeSettings(base_url={self.base_url!r}, api_key={self.masked_key!r}, model={self.model!r})"


def stored_values() -> dict[str, str]:
    """Return the values saved in the settings page (no environment defaults)."""
    return stored_settings.read(PREFIX, KEYS)


def load_settings() -> JudgeSettings:
    """Return the effective settings: saved values over environment over defaults."""
    stored = stored_values()
    return JudgeSettings(
        endpoint=endpoints.load(endpoints.JUDGE_ENDPOINT),
        model=stored.get("model") or DEFAULT_JUDGE_MODEL,
        baseline=stored.get("baseline") or "",
        max_retries=int(stored.get("max_retries") or DEFAULT_MAX_RETRIES),
        timeout_s=float(stored.get("timeout_s") or DEFAULT_TIMEOUT_S),
        prices=price_table.load_prices(),
    )


MAX_SETTING_CHARS = 2000  # a model name; far more is a mistake


def save_settings(
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    clear_api_key: bool = False,
    model: str | None = None,
    baseline: str | None = None,
    max_retries: int | None = None,
    timeout_s: float | None = None,
    prices_json: str | None = None,
    may_change_endpoint: bool = True,
) -> bool:
    """Validate and store the given settings; None leaves a value unchanged. Return True if the key was removed.

    An empty `api_key` keeps the stored key (the form never shows it) unless the base URL changes:
    then the stored key is removed, so that it never goes to the new address. `clear_api_key`
    removes it. Without `may_change_endpoint` (not an admin), changing the base URL or the key
    raises EndpointChangeNotAllowed and nothing is saved.
    """
    for label, text in (("model", model), ("baseline", baseline)):
        problem = text_problem(text, limit=MAX_SETTING_CHARS) if text else None
        if problem:
            raise SettingsError(f"{label} {problem}")
    values: dict[str, str] = {}
    key_removed = endpoints.stage(endpoints.JUDGE_ENDPOINT, base_url=base_url, api_key=api_key,
                                  clear_api_key=clear_api_key, may_change=may_change_endpoint)
    if model is not None:
        values["model"] = model.strip()
    if baseline is not None:
        values["baseline"] = baseline.strip()
    if max_retries is not None:
        if not 0 <= max_retries <= 20:
            raise SettingsError("max retries must be between 0 and 20")
        values["max_retries"] = str(max_retries)
    if timeout_s is not None:
        if not 0 < timeout_s <= 3600:
            raise SettingsError("timeout must be between 0 and 3600 seconds")
        values["timeout_s"] = repr(float(timeout_s))
    if prices_json is not None:
        price_table.stage_prices(prices_json)
    stored_settings.stage(PREFIX, values)
    db.session.commit()
    return key_removed


def require_endpoint(settings: "JudgeSettings") -> None:
    """A judge or rater run is queued only with an endpoint to call (an API key or a base URL); raises SettingsError."""
    if not (settings.base_url or settings.api_key):
        raise SettingsError("no judge endpoint: set an API key or a base URL in the judge settings")


def check_concurrency(concurrency: int) -> int:
    """Return a valid concurrency or raise SettingsError."""
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise SettingsError(f"concurrency must be between 1 and {MAX_CONCURRENCY}")
    return concurrency


__all__ = [
    "DEFAULT_CONCURRENCY", "DEFAULT_JUDGE_MODEL", "EndpointChangeNotAllowed", "JudgeSettings", "LEVAL_BASELINE", "SettingsError",
    "check_concurrency", "endpoint_origin", "require_endpoint", "load_settings", "parse_prices", "prices_as_json", "save_settings",
]
