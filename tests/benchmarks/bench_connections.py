"""Idle connections: /healthz of one client while another holds 1,000 idle sockets and trickles 50 more.

Run: python tests/benchmarks/bench_connections.py [--idle 1000] [--trickling 50] [--requests 200]

Issue 41, item 1: one client opening waitress's 100 connections and sending nothing kept every other
client's /healthz unanswered for as long as it held them. Against a real `python run.py serve`
(a fresh instance, no demo, no job workers), on loopback:

- baseline: REQUESTS /healthz from 127.0.0.1, each on a new connection (a new client every time),
  paced 20 ms apart, with no other socket open;
- loaded: another client, 127.0.0.2, opens IDLE sockets that send nothing and TRICKLING sockets that
  send the start of a request and then one header byte every 0.5 s; then the same REQUESTS /healthz.
  Targets: the slowest answer and the p99 <= 1 s, none unanswered within 1 s;
- closing: how long the server kept each socket it had accepted (the first LEVAL_CONNECTIONS_PER_ADDRESS,
  default 200, are held; the rest are closed when accepted). The server runs with
  LEVAL_CONNECTION_IDLE_SECONDS=CLOSE_AFTER so that the closing is seen within the run; target: every
  one closed within that and 2 s more (the check runs every second, on a loop that wakes every second);
- for comparison, the same idle sockets against a second server with waitress's former limits
  (LEVAL_CONNECTION_LIMIT=100, no cap per address, 120 s): how many of a few /healthz were answered
  within 1 s.

The latencies are wall times of this process's client on the same 2 shared cores as the server.
`run(quick=True)`: 300 idle and 10 trickling sockets, 30 requests, closing after 3 s (`--quick`).
"""
from __future__ import annotations

import argparse
import os
import resource
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from common import REPO_ROOT, free_port, percentile, print_table, row, stop_process

IDLE, TRICKLING, REQUESTS = 1000, 50, 200
CLOSE_AFTER = 10.0  # LEVAL_CONNECTION_IDLE_SECONDS of the measured server: long enough to measure beside
QUICK = {"idle": 300, "trickling": 10, "requests": 30, "close_after": 3.0, "compared": 3}
COMPARED_REQUESTS = 10
TARGET_MS = 1000.0
ATTACKER = "127.0.0.2"  # Linux routes all of 127.0.0.0/8 to the loopback
REQUEST_TIMEOUT = 5.0
PACE_SECONDS = 0.02
TRICKLE_EVERY = 0.5
START_TIMEOUT = 90.0
FORMER_LIMITS = {"LEVAL_CONNECTION_LIMIT": "100", "LEVAL_CONNECTIONS_PER_ADDRESS": "0",
                 "LEVAL_CONNECTION_IDLE_SECONDS": "120"}


def _serve(instance: Path, settings: dict) -> tuple[subprocess.Popen, int]:
    """`python run.py serve` on a free port with these settings, once /healthz answers."""
    port = free_port()
    env = {**os.environ, "LEVAL_INSTANCE": str(instance), "LEVAL_WORKERS": "0", "PYTHONUNBUFFERED": "1", **settings}
    server = subprocess.Popen([sys.executable, "run.py", "serve", "--port", str(port), "--no-demo"], cwd=REPO_ROOT,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
                if response.status == 200:
                    return server, port
        except OSError:
            if server.poll() is not None:
                raise RuntimeError(f"serve exited with {server.returncode}:\n{server.stderr.read()[-2000:]}")
            if time.monotonic() > deadline:
                stop_process(server)
                raise RuntimeError(f"serve did not answer /healthz within {START_TIMEOUT:.0f} s")
            time.sleep(0.05)


def healthz_ms(port: int, timeout: float) -> float | None:
    """A new client's /healthz: connect, ask, read the whole answer; its milliseconds, or None if not answered."""
    started = time.perf_counter()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            received = b""
            while chunk := sock.recv(65536):
                received += chunk
                if time.perf_counter() - started > timeout:
                    return None
    except OSError:
        return None
    return (time.perf_counter() - started) * 1000 if received.startswith(b"HTTP/1.1 200") else None


def healthz_series(port: int, count: int, timeout: float) -> list[float | None]:
    answers = []
    for _ in range(count):
        answers.append(healthz_ms(port, timeout))
        time.sleep(PACE_SECONDS)
    return answers


class Holder:
    """The other client: sockets from ATTACKER, idle or trickling, and when the server closed each."""

    def __init__(self, port: int):
        self.port = port
        self.opened: dict[int, float] = {}  # fd -> when connected
        self.closed: dict[int, float] = {}  # fd -> seconds the server kept it
        self.trickling: set[int] = set()
        self.sockets: dict[int, socket.socket] = {}
        self.failed_connects = 0
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._watch, daemon=True),
                        threading.Thread(target=self._trickle, daemon=True)]

    def open(self, idle: int, trickling: int) -> None:
        """Connect the trickling sockets, then the idle ones (the server holds the first of an address's)."""
        for index in range(trickling + idle):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((ATTACKER, 0))
            sock.settimeout(REQUEST_TIMEOUT)
            try:
                sock.connect(("127.0.0.1", self.port))
            except OSError:
                self.failed_connects += 1
                sock.close()
                continue
            sock.setblocking(False)
            if index < trickling:
                sock.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            with self.lock:
                self.sockets[sock.fileno()] = sock
                self.opened[sock.fileno()] = time.monotonic()
                if index < trickling:
                    self.trickling.add(sock.fileno())
        for thread in self.threads:
            thread.start()

    def _watch(self) -> None:
        """Note every socket the server closes (readable with nothing to read, or an error)."""
        poller = select.poll()
        for fd in list(self.sockets):
            poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        while not self.stopping.is_set():
            for fd, _ in poller.poll(200):
                try:
                    data = self.sockets[fd].recv(4096)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    poller.unregister(fd)
                    with self.lock:
                        self.closed[fd] = time.monotonic() - self.opened[fd]

    def _trickle(self) -> None:
        while not self.stopping.wait(TRICKLE_EVERY):
            with self.lock:
                live = [self.sockets[fd] for fd in self.trickling if fd not in self.closed]
            for sock in live:
                try:
                    sock.send(b"X")
                except OSError:
                    pass

    def held(self, trickling: bool) -> list[float]:
        """Seconds the server kept each socket of the kind that it did not close at once (within 1 s)."""
        with self.lock:
            return [kept for fd, kept in self.closed.items() if (fd in self.trickling) == trickling and kept > 1.0]

    def closed_at_once(self) -> int:
        with self.lock:
            return sum(1 for kept in self.closed.values() if kept <= 1.0)

    def wait_all_closed(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.closed) == len(self.sockets):
                    return True
            time.sleep(0.1)
        return False

    def close(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            if thread.is_alive():
                thread.join(5)
        for sock in self.sockets.values():
            sock.close()


def _stats(answers: list[float | None]) -> tuple[float, float, float, int]:
    """(p50, p99, slowest) of the answered, in ms, and how many were not answered within TARGET_MS."""
    answered = [a for a in answers if a is not None]
    late = sum(1 for a in answers if a is None or a > TARGET_MS)
    if not answered:
        return float("nan"), float("nan"), float("nan"), late
    return statistics.median(answered), percentile(answered, 99), max(answered), late


def _raise_own_file_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _loopback_alias_or_exit() -> None:
    try:
        with socket.socket() as probe:
            probe.bind((ATTACKER, 0))
    except OSError:
        print(f"SKIPPED: {ATTACKER} is not a loopback address here (it is on Linux)")
        raise SystemExit(0)


def run(quick: bool = False, idle: int | None = None, trickling: int | None = None,
        requests: int | None = None) -> list[dict]:
    """Measure /healthz alone, then beside the idle and trickling sockets; then the closing and the former limits."""
    _loopback_alias_or_exit()
    _raise_own_file_limit()
    idle = idle or (QUICK["idle"] if quick else IDLE)
    trickling = trickling if trickling is not None else (QUICK["trickling"] if quick else TRICKLING)
    requests = requests or (QUICK["requests"] if quick else REQUESTS)
    close_after = QUICK["close_after"] if quick else CLOSE_AFTER
    compared = QUICK["compared"] if quick else COMPARED_REQUESTS
    with tempfile.TemporaryDirectory() as folder:
        server, port = _serve(Path(folder) / "instance", {"LEVAL_CONNECTION_IDLE_SECONDS": str(close_after)})
        holder = Holder(port)
        try:
            healthz_series(port, 5, REQUEST_TIMEOUT)  # warm-up
            baseline = healthz_series(port, requests, REQUEST_TIMEOUT)
            holder.open(idle, trickling)
            loaded = healthz_series(port, requests, REQUEST_TIMEOUT)
            all_closed = holder.wait_all_closed(close_after + 10)
            held_idle, held_trickling = holder.held(trickling=False), holder.held(trickling=True)
            at_once, failed_connects = holder.closed_at_once(), holder.failed_connects
        finally:
            holder.close()
            stop_process(server)
        former, port = _serve(Path(folder) / "instance", FORMER_LIMITS)
        holder = Holder(port)
        try:
            holder.open(idle, 0)
            former_answers = healthz_series(port, compared, TARGET_MS / 1000)
        finally:
            holder.close()
            stop_process(former)
    base_p50, base_p99, base_max, base_late = _stats(baseline)
    p50, p99, slowest, late = _stats(loaded)
    answered_before = sum(1 for a in former_answers if a is not None)
    beside = f"beside {idle:,} idle + {trickling} trickling sockets of another client"
    alone = f"/healthz alone, same server and run, {requests} requests"
    close_target = f"<= {close_after + 2:g} s"
    rows = [
        row(f"/healthz p50, new client each, {beside}", p50, "ms", "-", base_p50, alone + ", p50"),
        row(f"/healthz p99, {beside}", p99, "ms", f"<= {TARGET_MS:g} ms", base_p99, alone + ", p99"),
        row(f"/healthz slowest of {requests}, {beside}", slowest, "ms", f"<= {TARGET_MS:g} ms", base_max,
            alone + ", slowest"),
        row(f"/healthz not answered within 1 s, of {requests}, {beside}", late, "", "0", None),
        row(f"idle sockets held by the server, then closed after (slowest of {len(held_idle)})",
            max(held_idle, default=float("nan")), "s", close_target, close_after,
            "LEVAL_CONNECTION_IDLE_SECONDS of this run"),
        row(f"trickling sockets held, then closed after (slowest of {len(held_trickling)})",
            max(held_trickling, default=float("nan")), "s", close_target, close_after,
            "LEVAL_CONNECTION_IDLE_SECONDS of this run"),
        row(f"sockets closed at accept (over the address's cap), of {idle + trickling}", at_once, "", "-", None),
        row(f"former limits (100, no cap, 120 s): /healthz answered within 1 s, of {compared}, beside {idle:,} idle",
            answered_before, "", "-", compared, f"{compared} asked"),
    ]
    print(f"  baseline: p50 {base_p50:.2f} ms, p99 {base_p99:.2f} ms, slowest {base_max:.2f} ms, {base_late} late")
    print(f"  loaded:   p50 {p50:.2f} ms, p99 {p99:.2f} ms, slowest {slowest:.2f} ms, {late} late "
          f"(slowest {slowest / base_max:.2f}x the baseline's)")
    print(f"  held {len(held_idle)} idle and {len(held_trickling)} trickling sockets, closed {at_once} at once, "
          f"{failed_connects} connects failed; all closed within the wait: {all_closed}")
    print(f"  former limits: {answered_before} of {compared} /healthz answered within 1 s")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=int, default=IDLE, help="idle sockets of the other client")
    parser.add_argument("--trickling", type=int, default=TRICKLING, help="sockets sending a header byte every 0.5 s")
    parser.add_argument("--requests", type=int, default=REQUESTS, help="/healthz requests per phase")
    parser.add_argument("--quick", action="store_true", help="300 idle, 10 trickling, 30 requests, closing after 3 s")
    args = parser.parse_args()
    if args.quick:
        print_table(run(quick=True))
    else:
        print_table(run(idle=args.idle, trickling=args.trickling, requests=args.requests))


if __name__ == "__main__":
    main()
