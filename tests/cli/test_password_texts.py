"""The console's password texts send people where they can change a password (first-hour finding 7).

Before, the first start said "change it under Admin → Users", where no one can change their own
password, and a reset there signed the admin out. Now the first start and `reset-password` name the
account page, by the words the page and the README use.
"""
from __future__ import annotations

import re

from app import create_app
from app.cli.serve import bootstrap
from tests.conftest import REPO_ROOT, AuthActions

WHERE = re.compile(r"name at the top right → (Change your password)")


def test_the_first_start_tells_the_admin_where_to_change_the_printed_password(tmp_path, capsys):
    app = create_app({"INSTANCE_PATH": tmp_path / "instance", "TESTING": True})
    with app.app_context():
        bootstrap(load_demo=False)
    printed = capsys.readouterr().out
    assert re.search(r"Created admin account 'admin' with password: \S+", printed), printed
    assert "Admin → Users" not in printed
    assert WHERE.search(printed), printed


def test_reset_password_tells_where_to_change_it_after_signing_in(runner):
    result = runner.invoke(args=["reset-password", "researcher"])
    assert result.exit_code == 0, result.output
    assert WHERE.search(" ".join(result.output.split())), result.output


def test_the_console_the_account_page_and_the_readme_name_the_same_place(runner, app):
    printed = " ".join(runner.invoke(args=["reset-password", "admin"]).output.split())
    place = WHERE.search(printed).group(1)
    password = re.search(r"New password for admin 'admin': (\S+)", printed).group(1)
    client = app.test_client()
    assert AuthActions(client).login("admin", password).status_code == 302
    page = client.get("/account/").get_data(as_text=True)
    assert f'<h2 id="password-heading">{place}</h2>' in page
    readme = " ".join((REPO_ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"your name at the top right → **{place}" in readme
