"""Configuration: defaults, environment overrides and the instance folder."""
from __future__ import annotations

import os
import secrets
from datetime import timedelta
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_INSTANCE = REPO_ROOT / "instance"


def instance_path_from_env() -> Path:
    """Return the instance folder: LEVAL_INSTANCE or ./instance."""
    return Path(os.environ.get("LEVAL_INSTANCE") or DEFAULT_INSTANCE).resolve()


def load_or_create_secret_key(instance: Path) -> str:
    """Read the secret key from the instance folder, generating it once."""
    key_file = instance / "secret_key"
    if key_file.exists():
        return key_file.read_text().strip()
    instance.mkdir(parents=True, exist_ok=True)
    key = secrets.token_hex(32)
    # O_EXCL so two processes starting together cannot write different keys.
    try:
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return key_file.read_text().strip()
    with os.fdopen(fd, "w") as fh:
        fh.write(key)
    return key


def build_config(instance: Path, overrides: dict | None = None) -> dict:
    """Assemble the configuration dict for one app instance."""
    overrides = dict(overrides or {})
    database_url = (
        overrides.pop("SQLALCHEMY_DATABASE_URI", None)
        or os.environ.get("LEVAL_DATABASE_URL")
        or f"sqlite:///{instance / 'leval.db'}"
    )
    config = {
        "SQLALCHEMY_DATABASE_URI": database_url,
        # No ping per checkout: one more statement on every request (on a server, a round trip) for a
        # connection that is next to never gone. One the server dropped fails one request with a
        # retryable 503, and SQLAlchemy renews the whole pool.
        "SQLALCHEMY_ENGINE_OPTIONS": {"pool_pre_ping": False},
        "UPLOAD_FOLDER": str(instance / "uploads"),
        "QUEUE_PATH": str(instance / "queue.db"),
        "MAX_CONTENT_LENGTH": int(os.environ.get("LEVAL_MAX_UPLOAD_MB", "50")) * 1024 * 1024,
        # A zip may expand far beyond its upload size; cap what we are willing to unpack.
        "LEVAL_MAX_UNZIPPED_MB": int(os.environ.get("LEVAL_MAX_UNZIPPED_MB", "500")),
        "LEVAL_MAX_ZIP_MEMBERS": int(os.environ.get("LEVAL_MAX_ZIP_MEMBERS", "1000")),
        # Most systems one upload may create: a zip of 1,000 one-row files must not make 1,000 systems and jobs.
        "LEVAL_MAX_NEW_SYSTEMS": int(os.environ.get("LEVAL_MAX_NEW_SYSTEMS", "50")),
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Lax",
        "REMEMBER_COOKIE_HTTPONLY": True,
        "REMEMBER_COOKIE_SAMESITE": "Lax",
        # How long a sign-in lasts at most, counted from the sign-in ("Keep me signed in" keeps the cookie
        # that long; without it the cookie ends with the browser). See app/web/sessions.py.
        "PERMANENT_SESSION_LIFETIME": timedelta(days=float(os.environ.get("LEVAL_KEEP_SIGNED_IN_DAYS", "14"))),
        # The expiry is fixed at sign-in: sending the cookie again with every response would change nothing.
        "SESSION_REFRESH_EACH_REQUEST": False,
        "WTF_CSRF_TIME_LIMIT": None,
        "LEVAL_WORKERS": int(os.environ.get("LEVAL_WORKERS", "2")),
        "LEVAL_QUEUE_URL": os.environ.get("LEVAL_QUEUE_URL", ""),
        "LEVAL_JOB_STALE_SECONDS": int(os.environ.get("LEVAL_JOB_STALE_SECONDS", "30")),
        "LEVAL_HEARTBEAT_SECONDS": float(os.environ.get("LEVAL_HEARTBEAT_SECONDS", "5")),
        "LEVAL_RECOVERY_SECONDS": int(os.environ.get("LEVAL_RECOVERY_SECONDS", "60")),
        "LEVAL_LOGIN_FAILURES_PER_MINUTE": int(os.environ.get("LEVAL_LOGIN_FAILURES_PER_MINUTE", "10")),
        "LEVAL_LOGIN_ATTEMPTS_PER_ADDRESS_PER_MINUTE": int(
            os.environ.get("LEVAL_LOGIN_ATTEMPTS_PER_ADDRESS_PER_MINUTE", "100")),
        # Proxies whose X-Forwarded-For is believed: a number of hops, or addresses/networks (see app/web/proxies.py).
        "LEVAL_TRUSTED_PROXIES": os.environ.get("LEVAL_TRUSTED_PROXIES", ""),
        # The server's connections (app/cli/connections.py): per server process, per client address, and how long
        # a connection may wait for its request's headers, trickle a body or leave an answer unread.
        "LEVAL_CONNECTION_LIMIT": int(os.environ.get("LEVAL_CONNECTION_LIMIT", "2000")),
        "LEVAL_CONNECTIONS_PER_ADDRESS": int(os.environ.get("LEVAL_CONNECTIONS_PER_ADDRESS", "200")),
        "LEVAL_CONNECTION_IDLE_SECONDS": float(os.environ.get("LEVAL_CONNECTION_IDLE_SECONDS", "30")),
        "LEVAL_HEALTH_PROBE_SECONDS": float(os.environ.get("LEVAL_HEALTH_PROBE_SECONDS", "2")),
        "LEVAL_HEALTH_INTEGRITY_SECONDS": float(os.environ.get("LEVAL_HEALTH_INTEGRITY_SECONDS", "60")),
        "LEVAL_DOWNLOAD_BASE": os.environ.get(
            "LEVAL_DOWNLOAD_BASE",
            "https://raw.githubusercontent.com/OpenLMLab/LEval/main",
        ),
    }
    config.update(overrides)
    if "SECRET_KEY" not in config:
        config["SECRET_KEY"] = load_or_create_secret_key(instance)
    return config
