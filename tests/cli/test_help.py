"""The command line a newcomer meets: `--help` lists every command once, errors point to it, and
the recovery commands `users` and `reset-password` for an admin who lost access."""
from __future__ import annotations

import re
import subprocess
import sys

from app.extensions import db
from app.services.accounts import find_user
from tests.conftest import PASSWORDS, REPO_ROOT


def run_py(tmp_path, *args: str) -> subprocess.CompletedProcess:
    env = {"LEVAL_INSTANCE": str(tmp_path / "inst"), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "run.py", *args], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=60)


def command_names() -> list[str]:
    """Every command of the real CLI, asked from the group itself."""
    sys.path.insert(0, str(REPO_ROOT))
    import click
    from run import cli

    with click.Context(cli) as ctx:
        return cli.list_commands(ctx)


def test_help_lists_every_command_on_one_line_each(tmp_path):
    names = command_names()
    assert {"serve", "users", "reset-password", "create-user", "import-leval", "study"} <= set(names)
    for flag in ("--help", "-h"):
        out = run_py(tmp_path, flag)
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith("Usage: python run.py [OPTIONS] COMMAND")
        assert "serve [OPTIONS]" not in out.stdout  # not serve's own help
        assert "--app" not in out.stdout and "--env-file" not in out.stdout
        listed = out.stdout.split("Commands:\n", 1)[1].split("\n\n", 1)[0].splitlines()
        assert [line.split()[0] for line in listed] == names
        for line in listed:  # a name and its one-line summary, nothing cut off
            assert re.match(r"^  \S+ +\S", line) and not line.endswith("..."), line
    assert run_py(tmp_path, "help").stdout == run_py(tmp_path, "--help").stdout


def test_an_unknown_command_points_to_the_list(tmp_path):
    out = run_py(tmp_path, "frobnicate")
    assert out.returncode == 2
    assert "No such command 'frobnicate'" in out.stderr
    hint = re.search(r"Try '(python run\.py [^']*)' for help", out.stderr)
    assert hint, out.stderr
    following = run_py(tmp_path, *hint.group(1).split()[2:])
    assert following.returncode == 0 and "Commands:" in following.stdout and "reset-password" in following.stdout


def test_users_lists_roles_and_state(runner, app):
    with app.app_context():
        find_user("annotator").active = False
        db.session.commit()
    result = runner.invoke(args=["users"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["name", "role", "state", "last", "sign-in"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:]}
    assert rows == {"admin": ["admin", "active", "never"], "annotator": ["annotator", "deactivated", "never"],
                    "researcher": ["researcher", "active", "never"]}


def test_reset_password_prints_a_new_password_and_ends_sessions(runner, app, client, auth):
    assert auth.login("admin").status_code == 302
    assert client.get("/admin/users").status_code == 200
    result = runner.invoke(args=["reset-password", "admin"])
    assert result.exit_code == 0, result.output
    password = re.search(r"New password for admin 'admin': (\S+)", result.output).group(1)
    assert password != PASSWORDS["admin"] and len(password) >= 12
    # The browser that was signed in is signed out; the old password no longer works, the new one does.
    assert client.get("/admin/users").status_code in (302, 401)
    refused = auth.login("admin")
    assert refused.status_code != 302 and "Wrong username or password" in refused.get_data(as_text=True)
    assert auth.login("admin", password).status_code == 302
    assert client.get("/admin/users").status_code == 200


def test_reset_password_refuses_an_unknown_name_and_can_reactivate(runner, app):
    result = runner.invoke(args=["reset-password", "nobody"])
    assert result.exit_code == 1 and "no account named 'nobody'" in result.output
    with app.app_context():
        find_user("annotator").active = False
        db.session.commit()
    result = runner.invoke(args=["reset-password", "annotator"])
    assert result.exit_code == 0 and "--activate" in result.output
    result = runner.invoke(args=["reset-password", "annotator", "--activate"])
    assert result.exit_code == 0, result.output
    with app.app_context():
        assert find_user("annotator").active
