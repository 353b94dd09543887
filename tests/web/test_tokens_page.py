"""The API tokens page: make a token (shown once), see it listed with its last use, revoke it."""
from __future__ import annotations

import re

from sqlalchemy import select

from app.extensions import db
from app.models import ApiToken
from tests.support.api import bearer, make_token

SECRET_RE = re.compile(r'id="token-secret">(lvs_[A-Za-z0-9_\-]+)<')


def test_a_token_is_shown_once_listed_and_revoked(client, auth):
    auth.login("researcher")
    assert 'href="/account/tokens"' in client.get("/account/").get_data(as_text=True)  # the account page links to it
    made = client.post("/account/tokens", data={"csrf_token": auth.token(), "scope": "read", "name": "notebook",
                                                "expires_days": "30"})
    assert made.status_code == 200
    secret = SECRET_RE.search(made.get_data(as_text=True)).group(1)
    assert client.get("/api/v1/systems", headers=bearer(secret)).status_code == 200
    listing = client.get("/account/tokens").get_data(as_text=True)
    assert secret not in listing and secret[:12] in listing and "notebook" in listing
    token_id = re.search(r"/account/tokens/(\d+)/revoke", listing).group(1)
    assert client.post(f"/account/tokens/{token_id}/revoke", data={"csrf_token": auth.token()}).status_code == 302
    assert client.get("/api/v1/systems", headers=bearer(secret)).status_code == 401
    assert "revoked" in client.get("/account/tokens").get_data(as_text=True)


def test_bad_input_and_another_accounts_token_are_refused(app, client, auth):
    auth.login("researcher")
    refused = client.post("/account/tokens", data={"csrf_token": auth.token(), "scope": "root"})
    assert refused.status_code == 400 and "No token was made" in refused.get_data(as_text=True)
    for days in ("¹", "²3", "٣"):  # digits to isdigit(), but not ASCII: '¹' answered 500
        refused = client.post("/account/tokens", data={"csrf_token": auth.token(), "scope": "read", "expires_days": days})
        assert refused.status_code == 400 and "whole number of days" in refused.get_data(as_text=True)
    others = make_token(app, "admin", "write")
    with app.app_context():
        admin_token_id = db.session.scalars(select(ApiToken.id)).one()
    assert client.post(f"/account/tokens/{admin_token_id}/revoke", data={"csrf_token": auth.token()}).status_code == 404
    assert client.get("/api/v1/systems", headers=bearer(others)).status_code == 200
