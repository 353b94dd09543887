"""Account commands."""
from __future__ import annotations

import sys

import click
from flask.cli import with_appcontext

from app.cli.database import upgrade_database
from app.models.users import ROLES
from app.services.accounts import (
    AccountError,
    create_user,
    find_user,
    list_users,
    reset_password,
)


@click.command("create-user")
@with_appcontext
@click.argument("name")
@click.option("--role", type=click.Choice(ROLES), required=True)
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input.")
def create_user_command(name: str, role: str, password_stdin: bool) -> None:
    """Create an account."""
    upgrade_database()
    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    elif sys.stdin.isatty():
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    else:
        raise click.UsageError("no terminal to ask for a password: use --password-stdin")
    try:
        user = create_user(name, password, role)
    except AccountError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"Created {user.role} '{user.username}'.")


@click.command("reset-password")
@with_appcontext
@click.argument("name")
@click.option("--activate", is_flag=True, help="Also reactivate the account if it was deactivated.")
def reset_password_command(name: str, activate: bool) -> None:
    """Give an account a new one-time password and end its sessions and API tokens."""
    upgrade_database()
    user = find_user(name)
    if user is None:
        raise click.ClickException(f"no account named '{name}' (see: python run.py users)")
    if activate:
        user.active = True
    # The account service owns the rule: a reset ends every session of the account and revokes its API tokens.
    password = reset_password(user)
    click.echo(f"New password for {user.role} '{user.username}': {password}")
    click.echo("It is shown only this once; every session of this account has ended and its API tokens are revoked.")
    click.echo("After signing in, change it on the account page: the name at the top right → Change your password.")
    if not user.active:
        click.echo("The account is deactivated: add --activate to let it sign in.", err=True)


@click.command("users")
@with_appcontext
def users_command() -> None:
    """List accounts with their role, state and last sign-in."""
    upgrade_database()
    users = list_users()
    if not users:
        click.echo("No accounts yet: `python run.py serve` creates the first admin.")
        return
    width = max(len("name"), *(len(u.username) for u in users))
    click.echo(f"{'name':<{width}}  {'role':<10}  {'state':<11}  last sign-in")
    for user in users:
        state = "active" if user.active else "deactivated"
        last = user.last_login_at.strftime("%Y-%m-%d %H:%M UTC") if user.last_login_at else "never"
        click.echo(f"{user.username:<{width}}  {user.role:<10}  {state:<11}  {last}")


COMMANDS = [create_user_command, reset_password_command, users_command]
