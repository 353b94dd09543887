"""Shapes of the caller's own API tokens."""
from __future__ import annotations

from pydantic import BaseModel, Field

from app.web.api.schemas.common import Page, Time, TokenScope, TokenState, examples


class TokenOut(BaseModel):
    """One of the caller's tokens (never its secret: only its first characters)."""

    model_config = examples({"id": 4, "name": "cluster", "prefix": "lvs_3kq9X2aB", "scope": "write",
                             "state": "active", "current": True, "created_at": "2026-12-01T09:00:00Z",
                             "expires_at": None, "last_used_at": "2026-12-01T09:30:00Z", "revoked_at": None})
    id: int
    name: str
    prefix: str = Field(description="The secret's first characters, to tell tokens apart")
    scope: TokenScope
    state: TokenState
    current: bool = Field(description="The token of this request")
    created_at: Time
    expires_at: Time | None
    last_used_at: Time | None
    revoked_at: Time | None


TokenPage = Page[TokenOut]
