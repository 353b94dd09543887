"""First run in a browser: the demo is served and the printed admin password signs in."""
from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import screenshot, sign_in
from tests.support.live import instance_database_url

pytestmark = pytest.mark.e2e


def test_first_run_serves_demo_and_admin_can_sign_in(first_run_server, page):
    live_server = first_run_server
    assert live_server.admin_user == "admin" and len(live_server.admin_password) >= 12
    result = live_server.cli("summary", "--json")
    assert result.returncode == 0, f"summary failed:\n{result.stderr}"
    summary = json.loads(result.stdout)
    assert summary["documents"] >= 2 and summary["systems"] >= 3

    page.goto(live_server.url + "/")
    assert page.url.startswith(live_server.url + "/login")
    sign_in(page, live_server.url, live_server.admin_user, "wrong-password")
    assert page.get_by_text("Wrong username or password").is_visible()

    sign_in(page, live_server.url, live_server.admin_user, live_server.admin_password)
    assert page.get_by_role("heading", name="Overview").is_visible()
    screenshot(page, "overview")
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/login")
    assert page.get_by_role("button", name="Sign in").is_visible()


def stored_bytes(instance) -> bytes:
    """Everything the database holds: the SQLite files, or every row of every table on a server."""
    files = list(instance.glob("leval.db*"))
    if files:
        return b"".join(p.read_bytes() for p in files)
    from sqlalchemy import MetaData, create_engine, select

    engine = create_engine(instance_database_url(instance))
    tables = MetaData()
    tables.reflect(engine)
    with engine.connect() as connection:
        rows = [repr(tuple(row)) for table in tables.sorted_tables for row in connection.execute(select(table))]
    engine.dispose()
    return "\n".join(rows).encode()


def test_password_is_not_stored_in_plain_text(live_server):
    database = stored_bytes(live_server.instance)
    assert b"admin" in database, "the database was read"
    assert live_server.admin_password.encode() not in database
    second = live_server.cli("summary", "--json")
    assert "password" not in second.stdout
