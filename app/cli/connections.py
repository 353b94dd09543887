"""Connections: how many one client address may hold open, and how long an idle or trickling one may stay.

Waitress stops accepting once `connection_limit` (100) connections are open, and closes an idle one
after `channel_timeout` (120 s), counting every byte received as activity. One client holding 100
sockets that send nothing, or a header byte now and then, kept every other client out for as long
as it liked: anyone who could reach a lab server's port could stop it for every annotator. So here:

- the limit is high (LEVAL_CONNECTION_LIMIT per server process; the open-file limit is raised for it
  at start) and the main loop uses poll(), which has no 1,024-descriptor ceiling as select() has;
- one client address holds at most LEVAL_CONNECTIONS_PER_ADDRESS of them; a connection beyond that is
  closed as soon as it is accepted (trusted proxies are exempt: every client comes through them);
- a connection must deliver a request's headers within LEVAL_CONNECTION_IDLE_SECONDS of opening or of
  its last answer, however it trickles them; the body must then keep up MIN_BODY_BYTES_PER_SECOND on
  average after that grace; and an answer the client stops reading gets the same time per stall.
  The server checks every CHECK_SECONDS.

In front of a public network, a reverse proxy still belongs there (docs/lab.md): this keeps one
client from taking the server, not many.
"""
from __future__ import annotations

import logging
import resource
import time
from dataclasses import dataclass

from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser

from app.web.proxies import Networks, parse_trusted_proxies, peer_is_proxy

# Apache's mod_reqtimeout default (body=20,MinRate=500): a body may arrive this slowly, and no slower.
MIN_BODY_BYTES_PER_SECOND = 500
CHECK_SECONDS = 1  # how often overdue connections are looked for (waitress's cleanup_interval)
ACCEPT_BATCH = 64  # connections accepted per wake-up of the main loop
# Descriptors kept for everything but client connections: the database, uploads, logs, a connection's
# spill files for large bodies (waitress may give one connection up to three descriptors).
RESERVED_DESCRIPTORS = 256
REFUSAL_LOG_SECONDS = 60.0

logger = logging.getLogger("waitress")


@dataclass(frozen=True)
class ConnectionRules:
    """The server's connection settings (LEVAL_CONNECTION_*; defaults in app/config.py)."""

    limit: int
    per_address: int  # 0: no cap
    idle_seconds: float
    proxies: int | Networks  # LEVAL_TRUSTED_PROXIES: their connections are not capped

    @classmethod
    def from_config(cls, config) -> ConnectionRules:
        return cls(limit=int(config["LEVAL_CONNECTION_LIMIT"]), per_address=int(config["LEVAL_CONNECTIONS_PER_ADDRESS"]),
                   idle_seconds=float(config["LEVAL_CONNECTION_IDLE_SECONDS"]),
                   proxies=parse_trusted_proxies(config.get("LEVAL_TRUSTED_PROXIES")))

    def capped(self, address: str) -> bool:
        return self.per_address > 0 and not peer_is_proxy(self.proxies, address)


def raise_open_file_limit() -> int:
    """Raise this process's soft limit of open files to its hard limit; return the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):  # a platform that refuses (macOS caps at OPEN_MAX): keep what there is
            pass
    return soft


def usable_limit(rules: ConnectionRules, open_files: int) -> int:
    """The connection limit that the open-file limit allows; a warning when it is lower than configured."""
    fits = max(open_files - RESERVED_DESCRIPTORS, open_files // 2)
    if rules.limit > fits:
        logger.warning("LEVAL_CONNECTION_LIMIT is %d, but this process may open only %d files: at most %d "
                       "connections (raise `ulimit -Hn`)", rules.limit, open_files, fits)
        return fits
    return rules.limit


class TimedRequestParser(HTTPRequestParser):
    """A request being received that notes when its headers were complete (its body's clock starts then)."""

    headers_done_at = 0.0

    def received(self, data):
        consumed = super().received(data)
        if self.headers_finished and not self.headers_done_at:
            self.headers_done_at = time.time()
        return consumed


class GuardedChannel(HTTPChannel):
    """A connection that is closed at once beyond its address's cap, and when overdue (see overdue)."""

    parser_class = TimedRequestParser

    def __init__(self, server, sock, addr, adj, map=None):
        super().__init__(server, sock, addr, adj, map=map)
        # When it last had nothing to wait for: opened, answered, or sent part of an answer. Bytes received
        # do not count: a client that trickles a header is waiting on itself.
        self.quiet_since = self.creation_time
        rules: ConnectionRules | None = getattr(server, "connection_rules", None)
        if rules is not None and rules.capped(self.addr[0]) and self._address_count() > rules.per_address:
            self.will_close = True  # the loop closes it before reading anything
            _note_refusal(self.addr[0], rules.per_address)

    def _address_count(self) -> int:
        address = self.addr[0]
        return sum(1 for channel in list(self.server.active_channels.values()) if channel.addr[0] == address)

    def service(self):
        super().service()
        self.quiet_since = time.time()

    def _flush_some(self, do_close=True):
        sent = super()._flush_some(do_close=do_close)
        if sent:
            self.quiet_since = time.time()
        return sent

    def overdue(self, now: float, idle_seconds: float) -> bool:
        """Whether the connection has had its time: waiting for (or receiving) headers, a body, or a reader."""
        if self.requests:
            return False  # the app is answering; its request thread owns the connection meanwhile
        if self.total_outbufs_len:
            return now - self.last_activity > idle_seconds  # an answer nobody reads, stalled that long
        request = self.request
        if request is None or not request.headers_finished:
            return now - self.quiet_since > idle_seconds
        late = now - request.headers_done_at - idle_seconds
        return late > request.body_bytes_received / MIN_BODY_BYTES_PER_SECOND


def accept_waiting(listener, accept_one) -> None:
    """The listener's handle_accept: take up to ACCEPT_BATCH waiting connections per wake-up, not waitress's one.

    Each wake-up of the main loop passes over every open connection; a burst of 1,000 connections from one
    client took 1,000 wake-ups to accept (and close), and a new client's connection queued behind them all.
    """
    for _ in range(ACCEPT_BATCH):
        count = len(listener._map)
        if count >= listener.adj.connection_limit:
            return
        accept_one()
        if len(listener._map) == count:
            return  # nothing was waiting, or the accept failed (waitress logged it)


def close_overdue(listener, now: float) -> None:
    """The listener's maintenance (waitress calls it every cleanup_interval): close every overdue connection."""
    idle_seconds = listener.connection_rules.idle_seconds
    for channel in list(listener.active_channels.values()):
        if isinstance(channel, GuardedChannel) and channel.overdue(now, idle_seconds):
            channel.will_close = True


_last_refusal_log = [0.0]


def _note_refusal(address: str, cap: int) -> None:
    """Log refused connections at most once a minute: a client that keeps trying must not flood the log."""
    now = time.monotonic()
    if now - _last_refusal_log[0] >= REFUSAL_LOG_SECONDS:
        _last_refusal_log[0] = now
        logger.warning("%s holds %d connections (LEVAL_CONNECTIONS_PER_ADDRESS): closing its new ones; "
                       "logged at most once a minute", address, cap)
