"""The production server (app/cli/wsgi.py): waitress whose main loop does not spin while a request thread sends."""
from __future__ import annotations

import gc
import socket
import threading
import time
from contextlib import contextmanager

import pytest
from waitress import wasyncore

from app.cli.wsgi import SenderAwareChannel, build_server

BODY = b"x" * (4 * 1024 * 1024)  # more than loopback's socket buffers take while nobody reads
HOLD_WAKEUPS = 50  # main-loop wake-ups counted while the request thread holds its output lock
LOOP_ROUND_SECONDS = 0.05  # the loop's own timeout: 10 wake-ups in the 0.5 s a test holds the lock


class SlowSender:
    """A WSGI app whose request thread sends a large body, then stays in the request until told to finish.

    hold_lock: it keeps the connection's output lock meanwhile, as a thread in the middle of sending.
    """

    def __init__(self, hold_lock: bool):
        self.hold_lock = hold_lock
        self.buffered, self.release = threading.Event(), threading.Event()
        self.unsent = 0

    def __call__(self, environ, start_response):
        channel = environ["waitress.client_disconnected"].__self__
        write = start_response("200 OK", [("Content-Type", "application/octet-stream"),
                                          ("Content-Length", str(len(BODY)))])
        if self.hold_lock:
            channel.outbuf_lock.acquire()  # re-entrant: write() below takes it again
        try:
            write(BODY)  # the client is not reading: part of it stays in the buffer
            self.unsent = channel.total_outbufs_len
            self.buffered.set()
            self.release.wait(10)
        finally:
            if self.hold_lock:
                channel.outbuf_lock.release()
        return []


@contextmanager
def _serve(app, wakeups: list[int]):
    """(server, loop thread): waitress's loop run in short rounds until the test ends, its wake-ups counted.

    The test stops the loop itself and then closes every socket: nothing is closed under a
    running loop.
    """
    real_poll = wasyncore.poll

    def counted_poll(*args, **kwargs):
        wakeups[0] += 1
        return real_poll(*args, **kwargs)

    gc.collect()  # finalise earlier tests' garbage now, not while this server's descriptors are open
    wasyncore.poll = counted_poll
    built = build_server(app, threads=2, host="127.0.0.1", port=0)
    stopping = threading.Event()

    def run_loop():
        while not stopping.is_set():
            wasyncore.loop(timeout=LOOP_ROUND_SECONDS, map=built._map, count=1)

    loop = threading.Thread(target=run_loop, daemon=True)
    loop.start()
    try:
        yield built, loop
    finally:
        if isinstance(app, SlowSender):
            app.release.set()  # its request thread waits for this; the loop's end must not
        stopping.set()
        loop.join(5)
        built.task_dispatcher.shutdown()
        wasyncore.close_all(built._map)
        wasyncore.poll = real_poll
    assert not loop.is_alive()


@pytest.fixture
def server():
    """A real server on a free port whose app holds the output lock, its loop in a thread, its wake-ups counted."""
    app = SlowSender(hold_lock=True)
    wakeups = [0]
    with _serve(app, wakeups) as (built, _):
        yield built, app, wakeups


def _request(port: int) -> socket.socket:
    client = socket.create_connection(("127.0.0.1", port), timeout=10)
    client.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
    return client


def _read_response(client: socket.socket) -> bytes:
    received = bytearray()
    while True:
        chunk = client.recv(1 << 20)
        if not chunk:
            break
        received += chunk
        head, _, body = received.partition(b"\r\n\r\n")
        if body and len(body) >= len(BODY):
            break
    return bytes(received)


def test_connections_are_sender_aware(server):
    built, _, _ = server
    assert built.channel_class is SenderAwareChannel


def test_the_loop_waits_instead_of_spinning_while_the_request_thread_holds_its_output(server):
    built, app, wakeups = server
    client = _request(built.effective_port)
    try:
        assert app.buffered.wait(10)
        reader = threading.Thread(target=lambda: received.append(_read_response(client)))
        received: list[bytes] = []
        reader.start()  # the socket turns writable while the request thread still holds the lock
        before = wakeups[0]
        time.sleep(0.5)  # a spinning loop wakes thousands of times meanwhile, a waiting one a handful
        during = wakeups[0] - before
        app.release.set()
        reader.join(10)
    finally:
        client.close()
    assert during < HOLD_WAKEUPS, f"the main loop woke {during} times in 0.5 s while the sender held its lock"
    head, _, body = received[0].partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and body == BODY  # and the rest was sent once it let go


def test_a_request_thread_leaving_output_unsent_wakes_the_loop_once_it_has_let_go_of_the_lock():
    # Waitress wakes the loop while the thread still holds the lock; a loop that looks then sees a
    # sender and sleeps. A second wake-up once the lock is free hands it the rest.
    app = SlowSender(hold_lock=False)
    with _serve(app, [0]) as (built, loop):
        wakeups: list[tuple[bool, int]] = []  # (lock held by the waking thread, bytes unsent)
        wake_loop = built.pull_trigger

        def recorded_wake_up():
            channel = next((c for c in list(built._map.values()) if isinstance(c, SenderAwareChannel)), None)
            if channel is not None and threading.current_thread() is not loop:
                wakeups.append((channel.outbuf_lock._is_owned(), channel.total_outbufs_len))
            wake_loop()

        built.pull_trigger = recorded_wake_up
        client = _request(built.effective_port)
        try:
            assert app.buffered.wait(10)
            assert app.unsent > 0  # the request thread could not send it all itself
            client.settimeout(10)
            response = _read_response(client)
        finally:
            app.release.set()
            client.close()
    assert any(held for held, _ in wakeups)  # waitress's own, under the lock
    assert any(not held and unsent for held, unsent in wakeups)
    assert response.partition(b"\r\n\r\n")[2] == BODY


class SmallReply:
    """A WSGI app answering every request with a short body, as the JSON endpoints do."""

    body = b'{"saved": true}'

    def __call__(self, environ, start_response):
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(self.body)))])
        return [self.body]


def test_a_short_response_leaves_in_one_send_with_its_header(monkeypatch):
    sends: list[bytes] = []
    real_send = SenderAwareChannel.send

    def recorded_send(channel, data, *args, **kwargs):
        sends.append(bytes(data))
        return real_send(channel, data, *args, **kwargs)

    monkeypatch.setattr(SenderAwareChannel, "send", recorded_send)
    app = SmallReply()
    with _serve(app, [0]) as (built, _):
        client = _request(built.effective_port)
        try:
            client.settimeout(10)
            received = b""
            while not received.endswith(app.body):
                received += client.recv(65536)
        finally:
            client.close()
    assert received.startswith(b"HTTP/1.1 200") and received.endswith(b"\r\n\r\n" + app.body)
    assert sends == [received], f"{len(sends)} sends for one short response"
