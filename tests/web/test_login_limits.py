"""The sign-in limiter: atomic check-and-count, bounded storage, shared by every server process."""
from __future__ import annotations

import subprocess
import sys
import threading

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import LoginAttempt, User
from app.services.login_limits import LoginLimiter, address_key, user_key
from tests.conftest import PASSWORDS, REPO_ROOT, csrf_token


def login_from(client, address: str, username: str, password: str):
    token = csrf_token(client)
    return client.post("/login", data={"username": username, "password": password, "csrf_token": token},
                       environ_base={"REMOTE_ADDR": address})


def stored_keys(app) -> int:
    with app.app_context():
        return db.session.scalar(select(func.count()).select_from(LoginAttempt))


def test_parallel_wrong_passwords_never_get_more_checks_than_the_limit(app, monkeypatch):
    """40 guesses at once against a limit of 10: at most 10 reach the password check."""
    checks = []
    lock = threading.Lock()
    original = User.check_password

    def counted(self, password):
        with lock:
            checks.append(password)
        return original(self, password)

    monkeypatch.setattr(User, "check_password", counted)
    clients = [app.test_client() for _ in range(40)]
    tokens = [csrf_token(c) for c in clients]
    start = threading.Barrier(40)
    statuses = []

    def guess(i):
        start.wait()
        response = clients[i].post("/login", data={"username": "researcher", "password": f"wrong-{i}",
                                                   "csrf_token": tokens[i]},
                                   environ_base={"REMOTE_ADDR": f"10.9.{i}.1"})
        with lock:
            statuses.append(response.status_code)

    threads = [threading.Thread(target=guess, args=(i,)) for i in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(statuses) == 40 and set(statuses) <= {401, 429}
    assert len(checks) <= 10, f"{len(checks)} password checks against a limit of 10"
    assert statuses.count(401) == len(checks) and statuses.count(429) == 40 - len(checks)


def test_a_blocked_address_stores_nothing_for_the_names_it_tries(app):
    """Storage stays bounded: once an address is blocked, new usernames add no rows."""
    app.extensions["login_limiter"].address_limit = 10
    for i in range(10):
        assert login_from(app.test_client(), "10.7.0.1", f"someone{i}", "wrong-guess").status_code == 401
    before = stored_keys(app)
    assert before == 11  # the address and ten names
    for i in range(200):
        assert login_from(app.test_client(), "10.7.0.1", f"another{i}", "wrong-guess").status_code == 429
    assert stored_keys(app) == before


def test_expired_keys_are_deleted_and_the_limit_lifts_after_the_window(app, monkeypatch):
    clock = [1_000_000.0]
    monkeypatch.setattr("app.services.login_limits.time.time", lambda: clock[0])
    limiter = LoginLimiter(limit=10, window_seconds=60, address_limit=10)
    ip, name = address_key("10.0.0.1"), user_key("x")
    with app.app_context():
        for _ in range(10):
            assert limiter.acquire(ip, name) == 0
        assert limiter.acquire(name) == 60 and limiter.acquire(ip) == 60
        assert limiter.count(name) == 10  # a refused attempt is not counted
        clock[0] += 45
        assert limiter.acquire(ip) == 15
        clock[0] += 15.01
        assert limiter.acquire(ip, name) == 0 and limiter.count(name) == 1
        clock[0] += 61
        for i in range(5):
            assert limiter.acquire(user_key(f"new{i}")) == 0
        assert db.session.scalar(select(func.count()).select_from(LoginAttempt)) == 5, "expired keys are deleted"


def test_a_right_password_gives_the_attempt_back(app):
    for _ in range(9):
        assert login_from(app.test_client(), "10.6.0.1", "admin", "wrong-guess").status_code == 401
    assert login_from(app.test_client(), "10.6.0.1", "admin", PASSWORDS["admin"]).status_code == 302
    limiter = app.extensions["login_limiter"]
    with app.app_context():
        assert limiter.count(user_key("admin")) == 0 and limiter.count(address_key("10.6.0.1")) == 9


def test_keys_store_no_user_text(app):
    assert login_from(app.test_client(), "10.5.0.1", "Sécret-name", "wrong-guess").status_code == 401
    assert login_from(app.test_client(), "10.5.0.1", "visible-name", "wrong-guess").status_code == 401
    with app.app_context():
        keys = db.session.scalars(select(LoginAttempt.key)).all()
    assert keys and all("visible" not in key and "10.5" not in key and len(key) <= 80 for key in keys)


OTHER_PROCESS = """
import sys
from app import create_app
from tests.conftest import csrf_token
app = create_app({"INSTANCE_PATH": sys.argv[1], "TESTING": True})
for i in range(int(sys.argv[2])):
    client = app.test_client()
    response = client.post("/login", data={"username": "researcher", "password": "wrong-guess",
                                           "csrf_token": csrf_token(client)},
                           environ_base={"REMOTE_ADDR": f"10.4.{i}.9"})
    print(response.status_code)
"""


def test_the_limit_is_shared_by_server_processes(app):
    """Failures counted by another process on the same database block this one."""
    instance = app.instance_path
    done = subprocess.run([sys.executable, "-c", OTHER_PROCESS, instance, "6"], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["401"] * 6
    for i in range(4):
        assert login_from(app.test_client(), f"10.3.{i}.1", "researcher", "wrong-guess").status_code == 401
    blocked = login_from(app.test_client(), "10.3.9.1", "researcher", PASSWORDS["researcher"])
    assert blocked.status_code == 429 and int(blocked.headers["Retry-After"]) > 0
    again = subprocess.run([sys.executable, "-c", OTHER_PROCESS, instance, "1"], cwd=REPO_ROOT,
                           capture_output=True, text=True, timeout=120)
    assert again.stdout.split() == ["429"]


@pytest.mark.parametrize("limit", [0, 1])
def test_small_limits(app, limit):
    limiter = LoginLimiter(limit=limit, window_seconds=60, address_limit=limit)
    with app.app_context():
        assert (limiter.acquire(user_key("y")) == 0) == (limit == 1)
        assert limiter.acquire(user_key("y")) > 0


def test_one_user_s_wrong_passwords_do_not_lock_out_the_rest_of_the_lab(app):
    """Ten mistyped passwords lock that username only; a colleague at the same address still signs in."""
    for _ in range(10):
        assert login_from(app.test_client(), "10.2.0.1", "annotator", "wrong-guess").status_code == 401
    assert login_from(app.test_client(), "10.2.0.1", "annotator", PASSWORDS["annotator"]).status_code == 429
    assert login_from(app.test_client(), "10.2.0.1", "researcher", PASSWORDS["researcher"]).status_code == 302


def test_the_address_gets_a_hundred_attempts_a_minute_by_default(app):
    for i in range(100):
        assert login_from(app.test_client(), "10.2.1.1", f"user{i % 40}", "wrong-guess").status_code == 401
    blocked = login_from(app.test_client(), "10.2.1.1", "admin", PASSWORDS["admin"])
    assert blocked.status_code == 429 and int(blocked.headers["Retry-After"]) > 0
    assert login_from(app.test_client(), "10.2.1.2", "admin", PASSWORDS["admin"]).status_code == 302


@pytest.fixture
def app_with(tmp_path, migrated_copy):
    """app_with(**config): an app on a fresh database with these settings (its connections closed after)."""
    from app import create_app

    made = []

    def make(**config):
        made.append(create_app({**migrated_copy(tmp_path / f"configured{len(made)}"), "TESTING": True, **config}))
        return made[-1]

    yield make
    for app in made:
        with app.app_context():
            db.session.remove()
            db.engine.dispose()


def test_both_limits_are_configurable(app_with):
    app = app_with(LEVAL_LOGIN_FAILURES_PER_MINUTE=3,
                    LEVAL_LOGIN_ATTEMPTS_PER_ADDRESS_PER_MINUTE=5)
    for _ in range(3):
        assert login_from(app.test_client(), "10.2.2.1", "annotator", "wrong-guess").status_code == 401
    assert login_from(app.test_client(), "10.2.2.1", "annotator", "wrong-guess").status_code == 429  # the user
    for i in range(2):
        assert login_from(app.test_client(), "10.2.2.1", f"other{i}", "wrong-guess").status_code == 401
    assert login_from(app.test_client(), "10.2.2.1", "researcher", PASSWORDS["researcher"]).status_code == 429


def _from_proxy(client, connection: str, forwarded: str, username: str, password: str):
    token = csrf_token(client)
    return client.post("/login", data={"username": username, "password": password, "csrf_token": token},
                       environ_base={"REMOTE_ADDR": connection}, headers={"X-Forwarded-For": forwarded})


def test_forwarded_addresses_count_only_behind_a_trusted_proxy(app_with):
    app = app_with(LEVAL_TRUSTED_PROXIES="10.0.0.5, 192.168.9.0/24",
                    LEVAL_LOGIN_ATTEMPTS_PER_ADDRESS_PER_MINUTE=3)
    limiter = app.extensions["login_limiter"]
    # Behind the proxy, each client has its own count: the proxy's address is not everyone's.
    for i in range(3):
        assert _from_proxy(app.test_client(), "10.0.0.5", "203.0.113.7", f"a{i}", "wrong").status_code == 401
    assert _from_proxy(app.test_client(), "10.0.0.5", "203.0.113.7", "a9", "wrong").status_code == 429
    assert _from_proxy(app.test_client(), "10.0.0.5", "203.0.113.8", "researcher",
                       PASSWORDS["researcher"]).status_code == 302
    # A chain of listed proxies is walked to the first address that is not one.
    assert _from_proxy(app.test_client(), "10.0.0.5", "198.51.100.1, 192.168.9.4", "b", "wrong").status_code == 401
    with app.app_context():
        assert limiter.count(address_key("198.51.100.1")) == 1 and limiter.count(address_key("192.168.9.4")) == 0
        assert limiter.count(address_key("10.0.0.5")) == 0
    # From anywhere else the header is anyone's to forge: the connection's address counts.
    for i in range(3):
        assert _from_proxy(app.test_client(), "10.3.3.3", f"198.18.0.{i}", f"c{i}", "wrong").status_code == 401
    assert _from_proxy(app.test_client(), "10.3.3.3", "198.18.0.99", "c9", "wrong").status_code == 429


def test_a_number_of_proxies_takes_that_hop_of_the_header(app_with):
    app = app_with(LEVAL_TRUSTED_PROXIES="1")
    assert _from_proxy(app.test_client(), "10.0.0.9", "spoofed, 203.0.113.20", "d", "wrong").status_code == 401
    with app.app_context():
        limiter = app.extensions["login_limiter"]
        assert limiter.count(address_key("203.0.113.20")) == 1 and limiter.count(address_key("10.0.0.9")) == 0


def test_a_bad_proxy_setting_stops_the_app_with_its_name(app_with):
    from app.web.proxies import ProxySettingError

    with pytest.raises(ProxySettingError, match="LEVAL_TRUSTED_PROXIES: 'proxy.lab' is neither"):
        app_with(LEVAL_TRUSTED_PROXIES="10.0.0.5, proxy.lab")
    with pytest.raises(ProxySettingError, match="LEVAL_TRUSTED_PROXIES: '¹' is neither"):  # isdigit(), not int()
        app_with(LEVAL_TRUSTED_PROXIES="¹")
