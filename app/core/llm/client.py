"""The `openai` client for any OpenAI-compatible server, and keeping its key secret."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:  # the package is heavy to import; only calls need it
    import openai

DEFAULT_MAX_RETRIES = 5
DEFAULT_TIMEOUT_S = 120.0
# Local servers (vLLM, Ollama, llama.cpp) ignore the key, but the client insists on one.
LOCAL_SERVER_PLACEHOLDER_KEY = "not-needed"


def make_client(
    base_url: str | None = None,
    api_key: str | None = None,
    *,
    max_retries: int = DEFAULT_MAX_RETRIES,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> "openai.OpenAI":
    """Build an OpenAI client; missing arguments come from OPENAI_BASE_URL and OPENAI_API_KEY.

    The client's own retries honour Retry-After on 429 and 5xx responses.
    """
    import openai

    base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
    api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
    if api_key is None:
        if base_url is None:
            raise ValueError("no API key: set OPENAI_API_KEY or configure a key in the settings")
        api_key = LOCAL_SERVER_PLACEHOLDER_KEY
    # Never follow a redirect: the client would resend the request (a prompt, perhaps a whole document) to
    # wherever the Location header points, another host included; a redirect is an error row instead.
    return openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=max_retries, timeout=timeout,
                         http_client=openai.DefaultHttpxClient(timeout=timeout, follow_redirects=False))


def mask_api_key(api_key: str | None) -> str:
    """Return a display form of a key that never shows it in full."""
    if not api_key:
        return ""
    if len(api_key) < 12:
        return "****"
    return f"{api_key[:3]}…{api_key[-4:]}"


def redact(text: str, secret: str | None) -> str:
    """Remove the API key from text that may end up in a result, a log or an export."""
    if secret and len(secret) >= 4:
        return text.replace(secret, "[redacted]")
    return text


def base_url_host(base_url: str) -> str:
    """Return host[:port] of a base URL, never its credentials, path or query.

    The one rule for what a base URL is (every LLM feature's endpoints check it here): http or https,
    a host, and a port that is a number; ValueError says which is wrong.
    """
    parts = urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"base URL must start with http:// or https://, not {base_url!r}")
    if not parts.hostname:
        raise ValueError(f"base URL names no host: {base_url!r}")
    try:
        parts.port
    except ValueError:
        raise ValueError("base URL: the port is not a number from 0 to 65535") from None
    host = parts.hostname
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    return f"{host}:{parts.port}" if parts.port else host
