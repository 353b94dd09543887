"""API token commands: `python run.py token create|list|revoke`."""
from __future__ import annotations

import click
from flask.cli import with_appcontext

from app.cli.database import DB_ID, upgrade_database
from app.models.tokens import TOKEN_SCOPES
from app.services.accounts import find_user
from app.services.api_tokens import (
    TokenError,
    create_token,
    list_tokens,
    revoke_token,
    token_state,
)


@click.group("token")
def token_group() -> None:
    """Personal access tokens for the JSON API (docs/api.md)."""


@token_group.command("create")
@with_appcontext
@click.argument("username")
@click.option("--scope", type=click.Choice(TOKEN_SCOPES), required=True,
              help="read: only GET; write: also uploads, runs and studies (as the account's role allows).")
@click.option("--expires-days", type=click.IntRange(min=1), default=None, help="Expire after N days (default: never).")
@click.option("--name", "label", default="", help="A label to tell the token apart in lists.")
def create_command(username: str, scope: str, expires_days: int | None, label: str) -> None:
    """Make a token for an account and print it (only this once)."""
    upgrade_database()
    user = find_user(username)
    if user is None:
        raise click.ClickException(f"no account named '{username}' (see: python run.py users)")
    try:
        made = create_token(user, scope=scope, name=label, expires_days=expires_days)
    except TokenError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(made.secret)
    click.echo(f"Token #{made.token.id} ({scope}) for {user.role} '{user.username}'. It is shown only this once; "
               "send it as `Authorization: Bearer <token>`.", err=True)


@token_group.command("list")
@with_appcontext
@click.argument("username", required=False)
def list_command(username: str | None) -> None:
    """List tokens (of one account, or all), with their state and last use."""
    upgrade_database()
    user = None
    if username:
        user = find_user(username)
        if user is None:
            raise click.ClickException(f"no account named '{username}' (see: python run.py users)")
    tokens = list_tokens(user)
    if not tokens:
        click.echo("No tokens.")
    for token in tokens:
        used = token.last_used_at.strftime("%Y-%m-%d %H:%M") if token.last_used_at else "never"
        expires = token.expires_at.strftime("%Y-%m-%d") if token.expires_at else "never"
        click.echo(f"#{token.id}\t{token.user.username}\t{token.scope}\t{token_state(token)}\t{token.prefix}…\t"
                   f"last used {used}\texpires {expires}\t{token.name}")


@token_group.command("revoke")
@with_appcontext
@click.argument("token_id", type=DB_ID)
def revoke_command(token_id: int) -> None:
    """Revoke one token by its number (see: python run.py token list)."""
    upgrade_database()
    try:
        token = revoke_token(token_id)
    except TokenError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"Token #{token.id} of '{token.user.username}' is revoked.")


COMMANDS = [token_group]
