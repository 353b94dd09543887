"""LLM endpoints and their API keys: the one owner of who may set them and where a key may go.

An endpoint is a named base URL with an optional key, configured by an admin. The judge and the
rater use the endpoint named "judge" (edited on the judge's settings page); a generation run
names one of the configured endpoints. Researchers only choose among them.

The rules, for every feature that calls an LLM:
- only admins change a base URL or a key (`EndpointChangeNotAllowed` otherwise, nothing saved);
- a key belongs to the origin (scheme, host, port) it was entered for, and is sent nowhere else:
  the environment's OPENAI_API_KEY to OPENAI_BASE_URL's origin (OpenAI's when unset);
- changing a base URL drops the saved key unless a key is entered with it;
- reading an endpoint changes nothing (a dry run stores nothing).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from app.core.llm.client import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT_S,
    LOCAL_SERVER_PLACEHOLDER_KEY,
    base_url_host,
    make_client,
    mask_api_key,
)
from app.extensions import db
from app.services import stored_settings
from app.services.input_rules import text_problem

if TYPE_CHECKING:
    import openai

# The judge's and the rater's endpoint; its settings keep the prefix they had before endpoints had names.
JUDGE_ENDPOINT = "judge"
_NAMED_PREFIX = "endpoint."
_FIELDS = ("base_url", "api_key", "api_key_origin")
# Where the openai client sends requests when no base URL is set.
OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
MAX_SETTING_CHARS = 2000  # a URL or a key; far more is a mistake
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")


class SettingsError(ValueError):
    """A settings value that cannot be saved; the message says which and why."""


class EndpointChangeNotAllowed(SettingsError):
    """Someone other than an admin tried to change a base URL or an API key."""


class UnknownEndpoint(SettingsError):
    """A name that no admin configured as an endpoint."""


def endpoint_origin(base_url: str) -> str:
    """The scheme, host and port requests to a base URL go to (OpenAI's when it is empty)."""
    parts = urlsplit(base_url.strip() or OPENAI_DEFAULT_BASE_URL)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:  # a port that is not a number: nothing a key could be bound to
        port = None
    return f"{scheme}://{(parts.hostname or '').lower()}:{port or {'http': 80, 'https': 443}.get(scheme, '')}"


def _prefix(name: str) -> str:
    return "judge." if name == JUDGE_ENDPOINT else f"{_NAMED_PREFIX}{name}."


@dataclass(frozen=True)
class Endpoint:
    """An endpoint as a call would use it: the key is already withheld when it belongs elsewhere."""

    name: str
    base_url: str
    api_key: str
    base_url_source: str  # "settings", "environment" or "" (OpenAI's default endpoint)
    api_key_source: str
    key_withheld_for: str = ""  # a key exists but belongs to this other origin: it is not used

    @property
    def masked_key(self) -> str:
        """The key's display form, never the key itself."""
        return mask_api_key(self.api_key)

    @property
    def effective_base_url(self) -> str:
        """Where requests go: the base URL, or OpenAI's when none is set."""
        return self.base_url or OPENAI_DEFAULT_BASE_URL

    @property
    def label(self) -> str:
        return f"{self.name} ({self.effective_base_url})"

    def client(self, *, max_retries: int = DEFAULT_MAX_RETRIES, timeout: float = DEFAULT_TIMEOUT_S) -> "openai.OpenAI":
        """The one way a feature gets a client: to this base URL, with this endpoint's key or none."""
        if not self.api_key and not self.base_url:
            raise ValueError("no API key: set OPENAI_API_KEY or configure a key in the settings")
        # Never None: the client would read OPENAI_API_KEY itself and send it wherever base_url points.
        return make_client(self.effective_base_url, self.api_key or LOCAL_SERVER_PLACEHOLDER_KEY,
                           max_retries=max_retries, timeout=timeout)

    def __repr__(self) -> str:  # keep the key out of tracebacks and debug logs
        return f"Endpoint(name={self.name!r}, base_url={self.base_url!r}, api_key={self.masked_key!r})"


def _stored(name: str) -> dict[str, str]:
    return stored_settings.read(_prefix(name), _FIELDS)


def stored_base_url(name: str) -> str:
    """The base URL an admin saved for this endpoint ("" when it follows the environment)."""
    return _stored(name).get("base_url", "")


def environment_key_for(base_url: str) -> str:
    """OPENAI_API_KEY when base_url is the origin it belongs to (OPENAI_BASE_URL's), else ""."""
    key = os.environ.get("OPENAI_API_KEY", "")
    if key and endpoint_origin(base_url) == endpoint_origin(os.environ.get("OPENAI_BASE_URL", "")):
        return key
    return ""


def load(name: str = JUDGE_ENDPOINT) -> Endpoint:
    """The endpoint as configured: saved values over the environment over OpenAI's default."""
    stored = _stored(name)
    if name != JUDGE_ENDPOINT and not stored.get("base_url"):
        raise UnknownEndpoint(f"endpoint: no endpoint named {name!r}; an admin configures endpoints")
    base_url, base_source = _with_env(stored.get("base_url", ""), "OPENAI_BASE_URL")
    api_key, key_source = _with_env(stored.get("api_key", ""), "OPENAI_API_KEY")
    if key_source == "settings":  # a key saved before keys were bound: to the endpoint it was saved with
        key_origin = stored.get("api_key_origin") or endpoint_origin(base_url)
    else:
        key_origin = endpoint_origin(os.environ.get("OPENAI_BASE_URL", ""))
    withheld = key_origin if api_key and key_origin != endpoint_origin(base_url) else ""
    return Endpoint(name=name, base_url=base_url, api_key="" if withheld else api_key,
                    base_url_source=base_source, api_key_source="" if withheld else key_source,
                    key_withheld_for=withheld)


def _with_env(saved: str, variable: str) -> tuple[str, str]:
    if saved:
        return saved, "settings"
    from_env = os.environ.get(variable, "")
    return from_env, ("environment" if from_env else "")


def names() -> list[str]:
    """Every configured endpoint's name, the judge's first."""
    return [JUDGE_ENDPOINT, *stored_settings.names_under(_NAMED_PREFIX, ".base_url")]


def configured() -> list[Endpoint]:
    return [load(name) for name in names()]


def check_name(name: str) -> str:
    name = (name or "").strip()
    if not _NAME.match(name):
        raise SettingsError("endpoint name: 1 to 32 lower-case letters, digits, - or _, starting with a letter or digit")
    return name


def stage(name: str, *, base_url: str | None = None, api_key: str | None = None, clear_api_key: bool = False,
          may_change: bool) -> bool:
    """Put an endpoint's changes in the session (the caller commits); return True if the key was dropped.

    None leaves the base URL unchanged; an empty `api_key` keeps the saved key unless the base URL
    changes. Without `may_change` (not an admin) any change raises EndpointChangeNotAllowed.
    """
    for label, text in (("base URL", base_url), ("API key", api_key)):
        problem = text_problem(text, limit=MAX_SETTING_CHARS) if text else None
        if problem:
            raise SettingsError(f"{label} {problem}")
    stored = _stored(name)
    values: dict[str, str] = {}
    url_changed = False
    if base_url is not None:
        base_url = base_url.strip()
        check_base_url(base_url, required=name != JUDGE_ENDPOINT)
        url_changed = base_url != stored.get("base_url", "")
        values["base_url"] = base_url
    api_key = (api_key or "").strip()
    if (url_changed or api_key or clear_api_key) and not may_change:
        raise EndpointChangeNotAllowed("Only an admin may change the base URL or the API key.")
    key_dropped = False
    if clear_api_key:
        values["api_key"] = values["api_key_origin"] = ""
    elif api_key:
        effective_url = base_url if base_url is not None else stored.get("base_url", "")
        values["api_key"] = api_key
        values["api_key_origin"] = endpoint_origin(effective_url or os.environ.get("OPENAI_BASE_URL", ""))
    elif url_changed and stored.get("api_key"):
        values["api_key"] = values["api_key_origin"] = ""
        key_dropped = True
    stored_settings.stage(_prefix(name), values)
    return key_dropped


def check_base_url(base_url: str, *, required: bool = False) -> None:
    if not base_url:
        if required:
            raise SettingsError("base URL: required for a named endpoint")
        return
    try:
        base_url_host(base_url)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None


def save(name: str, *, base_url: str | None = None, api_key: str | None = None, clear_api_key: bool = False,
         may_change: bool) -> bool:
    """Validate and store one endpoint; return True if its key was dropped because its URL changed."""
    key_dropped = stage(name, base_url=base_url, api_key=api_key, clear_api_key=clear_api_key, may_change=may_change)
    db.session.commit()
    return key_dropped


def remove(name: str, *, may_change: bool) -> None:
    """Remove a named endpoint with its key (the judge's endpoint is cleared instead)."""
    if not may_change:
        raise EndpointChangeNotAllowed("Only an admin may change the base URL or the API key.")
    stored_settings.stage(_prefix(name), {field: "" for field in _FIELDS})
    db.session.commit()


def client_for(name: str, *, expected_base_url: str | None = None, max_retries: int = DEFAULT_MAX_RETRIES,
               timeout: float = DEFAULT_TIMEOUT_S) -> "openai.OpenAI":
    """A client for a configured endpoint; refuse when its base URL is no longer the one a run was planned for."""
    endpoint = load(name)
    if expected_base_url is not None and endpoint.effective_base_url.rstrip("/") != expected_base_url.rstrip("/"):
        raise UnknownEndpoint(f"endpoint {name!r} now points elsewhere than when the run was queued; start a new run")
    return endpoint.client(max_retries=max_retries, timeout=timeout)


def adhoc(base_url: str) -> Endpoint:
    """A base URL typed on the server's own command line: only the environment's key, and only to its origin."""
    check_base_url(base_url.strip(), required=True)
    key = environment_key_for(base_url)
    return Endpoint(name="", base_url=base_url.strip(), api_key=key, base_url_source="command line",
                    api_key_source="environment" if key else "")
