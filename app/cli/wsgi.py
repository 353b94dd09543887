"""The production server: waitress, with its main loop kept from spinning while a request thread sends.

Waitress's main loop asks every connection, on every wake-up, whether it has output to send. A
connection says yes as soon as its request thread has put the response in the output buffer,
even while that thread still holds the buffer's lock because it is sending the response itself.
The loop cannot take the lock, sends nothing, and select() reports the socket writable at once:
the loop spins, scanning every keep-alive connection each time and taking the GIL from the
thread it waits for. Under 50 saving annotators that was 40–160 wake-ups and about half the
server's CPU per save.

Here a connection whose request thread holds the lock does not ask to write. The thread sends
what it can while it holds the lock; whatever it leaves behind, it wakes the loop for once it has
let go (`write_soon`), and the end of every request wakes the loop anyway (waitress's `service`).

A response's header also leaves with the start of its body, in one send() instead of two: on
loopback each send costs the sender the receiver's whole network path and wake-up.

Connections are held to app/cli/connections.py's rules (a cap per client address, closing idle and
trickling ones); build_server is the one place that turns the server's settings into waitress's.
"""
from __future__ import annotations

import gc
import logging
import socket
from functools import partial

from flask import Flask
from waitress.channel import HTTPChannel
from waitress.server import BaseWSGIServer, create_server
from waitress.task import WSGITask

from app.cli.connections import (
    CHECK_SECONDS,
    ConnectionRules,
    GuardedChannel,
    accept_waiting,
    close_overdue,
    raise_open_file_limit,
    usable_limit,
)

IDENT = "leval-studio"
JOIN_BODY_BYTES = 64 * 1024  # larger bodies are sent after their header rather than copied behind it
BACKLOG = 1024  # connections the kernel queues before the server accepts them (also --processes' socket)


class _HeldWrites:
    """Stands in for a task's channel while it writes: collects what it would send, passes all else on."""

    def __init__(self, channel: HTTPChannel):
        self.channel, self.parts = channel, []

    def write_soon(self, data) -> int:
        self.parts.append(data)
        return len(data)

    def __getattr__(self, name):
        return getattr(self.channel, name)


class OneSendTask(WSGITask):
    """A request whose response header is sent together with the first part of its body."""

    def write(self, data):
        if self.wrote_header or not isinstance(data, bytes) or not data or len(data) > JOIN_BODY_BYTES:
            return super().write(data)
        channel, held = self.channel, _HeldWrites(self.channel)
        self.channel = held  # waitress's write sends the header and then the body through it
        try:
            super().write(data)
        finally:
            self.channel = channel
        channel.write_soon(b"".join(held.parts))


class SenderAwareChannel(GuardedChannel):
    """A connection that does not ask the main loop to write while its request thread is sending (and that
    keeps the connection rules: GuardedChannel)."""

    task_class = OneSendTask

    def writable(self):
        if self.requests and self.total_outbufs_len and not (self.will_close or self.close_when_flushed):
            if not self.outbuf_lock.acquire(False):
                return False  # the request thread is sending; it wakes the loop for any remainder
            self.outbuf_lock.release()
        return super().writable()

    def write_soon(self, data):
        written = super().write_soon(data)
        if self.total_outbufs_len and self.connected:
            # What the request thread could not send (a full socket buffer) is the loop's now; the
            # wake-up waitress gave it came while the lock was still held.
            self.server.pull_trigger()
        return written


def build_server(app: Flask, *, threads: int, host: str | None = None, port: int | None = None,
                 sockets: list[socket.socket] | None = None, rules: ConnectionRules | None = None):
    """A waitress server on host:port or on already-listening sockets, with SenderAwareChannel connections.

    With `rules` (serve_wsgi passes the app's), connections follow them; without, waitress's own limits apply.
    """
    where = {"sockets": sockets} if sockets else {"host": host, "port": port}
    settings = {"backlog": BACKLOG, "asyncore_use_poll": True}
    if rules is not None:
        settings.update(connection_limit=usable_limit(rules, raise_open_file_limit()), cleanup_interval=CHECK_SECONDS)
    channels: dict = {}
    server = create_server(app, map=channels, threads=threads, ident=IDENT, **settings, **where)
    for listener in list(channels.values()):
        if isinstance(listener, BaseWSGIServer):
            listener.channel_class = SenderAwareChannel
            if rules is not None:
                listener.connection_rules = rules
                listener.maintenance = partial(close_overdue, listener)  # in place of waitress's idle rule
                listener.handle_accept = partial(accept_waiting, listener, listener.handle_accept)
    return server


def serve_wsgi(app: Flask, **where) -> None:
    """Serve until interrupted (`where` as for build_server); waitress's warnings reach stderr, as with its own serve()."""
    logging.basicConfig()
    server = build_server(app, rules=ConnectionRules.from_config(app.config), **where)
    settle_heap()
    server.run()


def settle_heap() -> None:
    """Move what start-up made (modules, templates, the app: about 150,000 objects) out of the garbage collector's
    view. Every full collection otherwise walks them again, and one fell inside a request at random: 0.13 s of
    a lab-scale export's CPU after a save (issue 38). They live as long as the server, so nothing is lost; the
    collection just before leaves no garbage behind to be kept with them."""
    gc.collect()
    gc.freeze()
