"""`python run.py token create|list|revoke`."""
from __future__ import annotations

from sqlalchemy import select

from app.extensions import db
from app.models import ApiToken
from app.services.api_tokens import authenticate_token, hash_secret


def test_create_prints_the_token_once_list_shows_it_and_revoke_ends_it(app, runner):
    made = runner.invoke(args=["token", "create", "researcher", "--scope", "write", "--expires-days", "7",
                               "--name", "cluster"])
    assert made.exit_code == 0, made.output
    secret = made.stdout.strip().splitlines()[0]
    assert secret.startswith("lvs_") and "shown only this once" in made.stderr
    with app.app_context():
        token = db.session.scalars(select(ApiToken)).one()
        assert token.token_hash == hash_secret(secret) and token.scope == "write" and token.expires_at is not None
    listed = runner.invoke(args=["token", "list", "researcher"])
    assert listed.exit_code == 0 and f"#{token.id}" in listed.output and "cluster" in listed.output
    assert secret not in listed.output and "last used never" in listed.output
    revoked = runner.invoke(args=["token", "revoke", str(token.id)])
    assert revoked.exit_code == 0 and "revoked" in revoked.output
    with app.app_context():
        assert authenticate_token(secret) is None
    assert "revoked" in runner.invoke(args=["token", "list"]).output


def test_unknown_account_scope_or_token_are_clear_errors(runner):
    assert "no account named 'ghost'" in runner.invoke(args=["token", "create", "ghost", "--scope", "read"]).output
    assert runner.invoke(args=["token", "create", "researcher", "--scope", "all"]).exit_code == 2
    assert runner.invoke(args=["token", "create", "researcher", "--scope", "read", "--expires-days", "0"]).exit_code == 2
    assert "no token #99" in runner.invoke(args=["token", "revoke", "99"]).output
