"""The server's connection rules (app/cli/connections.py), on a real waitress server and real sockets.

Issue 41, item 1: one client opening more connections than waitress's limit and sending nothing kept every
other client's request unanswered for as long as it held them. Here the rules are set small so that the
tests are quick; the idle and trickling clients connect from 127.0.0.2, the other client from 127.0.0.1
(Linux routes all of 127.0.0.0/8 to the loopback). These tests check what happens, not how fast:
tests/benchmarks/bench_connections.py measures /healthz under 1,000 idle sockets.
"""
from __future__ import annotations

import http.client
import resource
import socket
import threading
import time
from contextlib import ExitStack, contextmanager
from ipaddress import ip_network

import pytest
from waitress import wasyncore

from app.cli.connections import ConnectionRules, raise_open_file_limit, usable_limit
from app.cli.wsgi import build_server
from app.config import build_config

OTHER_CLIENT = "127.0.0.2"
WAIT_SECONDS = 10.0  # the most any step may take before the test fails (the rules act within 1-2 s)


def reply(environ, start_response):
    """A WSGI app that reads the whole body and says how long it was."""
    body = str(len(environ["wsgi.input"].read())).encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


@contextmanager
def serving(rules: ConnectionRules | None):
    """A real server on a free port under `rules` (None: waitress's own limits), its loop in a thread, as serve runs it."""
    built = build_server(reply, threads=2, host="127.0.0.1", port=0, rules=rules)
    stopping = threading.Event()

    def run_loop():
        while not stopping.is_set():
            wasyncore.loop(timeout=0.05, map=built._map, count=1, use_poll=built.adj.asyncore_use_poll)

    loop = threading.Thread(target=run_loop, daemon=True)
    loop.start()
    try:
        yield built
    finally:
        stopping.set()
        loop.join(5)
        built.task_dispatcher.shutdown()
        wasyncore.close_all(built._map)


def rules(**changes) -> ConnectionRules:
    return ConnectionRules(**{"limit": 30, "per_address": 10, "idle_seconds": 30.0, "proxies": 0, **changes})


def connect(port: int, source: str = OTHER_CLIENT) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.settimeout(WAIT_SECONDS)
    sock.connect(("127.0.0.1", int(port)))
    return sock


def send(sock: socket.socket, data: bytes) -> None:
    """Send, unless the server has closed the connection (that is looked for separately)."""
    try:
        sock.send(data)
    except OSError:
        pass


def closed_by_server(sock: socket.socket, within: float = WAIT_SECONDS) -> bool:
    """Whether the server closes the connection within `within` seconds (whatever it sent before is skipped)."""
    sock.settimeout(within)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        pass
    return True


def healthz_answered(port: int, timeout: float = WAIT_SECONDS) -> bool:
    """A new client on 127.0.0.1: is its request answered (200) within `timeout`?"""
    connection = http.client.HTTPConnection("127.0.0.1", int(port), timeout=timeout)
    try:
        connection.request("GET", "/healthz")
        return connection.getresponse().status == 200
    except (TimeoutError, OSError):
        return False
    finally:
        connection.close()


def test_more_idle_connections_than_the_limit_do_not_keep_another_client_out():
    with serving(rules(limit=30, per_address=10)) as server, ExitStack() as held:
        idle = [held.enter_context(connect(server.effective_port)) for _ in range(45)]
        assert healthz_answered(server.effective_port)
        # The address's first ten stay open (waiting for a request); the other 35 were closed when accepted.
        closed = [sock for sock in idle[10:] if closed_by_server(sock)]
        assert len(closed) == 35
        assert not any(closed_by_server(sock, within=0.2) for sock in idle[:10])


def test_without_a_cap_per_address_idle_connections_at_the_limit_keep_another_client_out():
    """What the cap prevents (waitress's own behaviour): at the limit the server stops accepting."""
    with serving(rules(limit=12, per_address=0)) as server, ExitStack() as held:
        for _ in range(12):
            held.enter_context(connect(server.effective_port))
        assert not healthz_answered(server.effective_port, timeout=1.5)


def test_idle_and_trickling_connections_are_closed_after_the_configured_time_and_busy_ones_are_not():
    with serving(rules(idle_seconds=1.0)) as server, ExitStack() as held:
        port = server.effective_port
        idle = held.enter_context(connect(port))
        answered_then_idle = held.enter_context(connect(port))
        answered_then_idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert answered_then_idle.recv(4096).startswith(b"HTTP/1.1 200")
        trickling, busy = held.enter_context(connect(port)), held.enter_context(connect(port))
        trickling.sendall(b"GET /healthz HTTP/1.1\r\n")
        started, outcome = time.monotonic(), {}
        while time.monotonic() - started < 6.0 and len(outcome) < 3:
            send(trickling, b"X")  # a header byte every 0.2 s: the connection is never quiet
            busy.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")  # a request every 0.2 s, each answered
            assert busy.recv(4096).startswith(b"HTTP/1.1 200")
            for name, sock in (("idle", idle), ("answered", answered_then_idle), ("trickling", trickling)):
                if name not in outcome and closed_by_server(sock, within=0.05):
                    outcome[name] = time.monotonic() - started
            time.sleep(0.2)
        assert set(outcome) == {"idle", "answered", "trickling"}, outcome
        assert not closed_by_server(busy, within=0.05), "a connection in use stays open"


def test_a_body_slower_than_the_minimum_rate_is_closed_and_one_at_the_rate_is_answered(monkeypatch):
    monkeypatch.setattr("app.cli.connections.MIN_BODY_BYTES_PER_SECOND", 1000)
    with serving(rules(idle_seconds=1.0)) as server, ExitStack() as held:
        port = server.effective_port
        slow, steady = held.enter_context(connect(port)), held.enter_context(connect(port))
        for sock in (slow, steady):
            sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 20000\r\n\r\n")
        sent, started = 0, time.monotonic()
        slow_closed = None
        while sent < 20000:  # 5,000 bytes a second for four seconds (five times the rate), against 5 a second
            steady.sendall(b"y" * 1000)
            sent += 1000
            send(slow, b"z")
            if slow_closed is None and closed_by_server(slow, within=0.01):
                slow_closed = time.monotonic() - started
            time.sleep(0.2)
        steady.settimeout(WAIT_SECONDS)
        assert steady.recv(4096).endswith(b"\r\n\r\n20000"), "the steady body is answered"
        assert slow_closed is not None or closed_by_server(slow), "the trickled body is closed"


def test_a_trusted_proxy_may_hold_more_connections_than_an_address():
    proxy = rules(per_address=3, proxies=(ip_network(OTHER_CLIENT + "/32"),))
    with serving(proxy) as server, ExitStack() as held:
        through_proxy = [held.enter_context(connect(server.effective_port)) for _ in range(8)]
        direct = [held.enter_context(connect(server.effective_port, "127.0.0.3")) for _ in range(5)]
        assert healthz_answered(server.effective_port)
        assert not any(closed_by_server(sock, within=0.2) for sock in through_proxy)
        assert [closed_by_server(sock, within=2) for sock in direct] == [False] * 3 + [True] * 2


def test_the_server_polls_and_keeps_the_configured_rules(tmp_path, monkeypatch):
    monkeypatch.setenv("LEVAL_CONNECTIONS_PER_ADDRESS", "7")
    monkeypatch.setenv("LEVAL_CONNECTION_IDLE_SECONDS", "4.5")
    monkeypatch.setenv("LEVAL_TRUSTED_PROXIES", "10.0.0.0/8")
    configured = ConnectionRules.from_config(build_config(tmp_path))
    assert (configured.limit, configured.per_address, configured.idle_seconds) == (2000, 7, 4.5)
    assert configured.capped("127.0.0.1") and not configured.capped("10.1.2.3")
    with serving(configured) as server:
        assert server.adj.asyncore_use_poll and server.adj.connection_limit == 2000
        assert server.connection_rules is configured


def test_the_open_file_limit_is_raised_to_the_hard_limit_and_bounds_the_connection_limit(monkeypatch):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft > 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft - 1, hard))
        assert raise_open_file_limit() == hard == resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    assert usable_limit(rules(limit=2000), 1024) == 768
    assert usable_limit(rules(limit=2000), 100_000) == 2000


@pytest.fixture(autouse=True)
def _loopback_aliases():
    """127.0.0.2 and .3 must be usable as source addresses (they are on Linux)."""
    for address in (OTHER_CLIENT, "127.0.0.3"):
        try:
            with socket.socket() as probe:
                probe.bind((address, 0))
        except OSError:
            pytest.skip(f"{address} is not a loopback address here")
