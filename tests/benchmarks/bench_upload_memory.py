"""Benchmark the server's memory on the worst uploads within the caps: peak RSS against the same server idle.

Run: python tests/benchmarks/bench_upload_memory.py [--quick]

Starts the real server (`python run.py serve --no-demo --workers 0`, waitress) in a subprocess on a
fresh instance, signs in as a researcher, and uploads, one at a time, each followed to its preview
page as a browser does:

- a zip of ~480 MB of newlines (under LEVAL_MAX_UNZIPPED_MB = 500; about 0.5 MB compressed);
- a zip holding one JSON line of ~480 MB (refused on its line: longer than the 20 MB line limit);
- a zip of 1,000 members (LEVAL_MAX_ZIP_MEMBERS), each ~480 KB of prediction rows of its own system;
- a plain .jsonl of one ~49 MB line (under the 50 MB upload limit).

The figure is the server process's peak resident memory (VmHWM, reset through /proc/<pid>/clear_refs
before each upload; sampled every 10 ms where that is not allowed). The baseline, measured in the same
run, is the same server idle after sign-in. Target: <= 300 MB peak for every case. --quick uses small
sizes (a smoke run of seconds; its figures are not docs/performance.md's).
"""
from __future__ import annotations

import argparse
import http.cookiejar
import io
import os
import re
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

from common import REPO_ROOT, free_port, print_table, row

MB = 1024 * 1024
TARGET_MB = 300
PASSWORD = "bench-researcher-pass"
CSRF_RE = re.compile(r'name="csrf_token"[^>]*value="([^"]+)"')
SERVE_TIMEOUT_S = 60.0
FULL = {"newlines_mb": 480, "line_mb": 480, "members": 1000, "member_kb": 480, "plain_mb": 49}
QUICK = {"newlines_mb": 16, "line_mb": 24, "members": 40, "member_kb": 100, "plain_mb": 4}


# -- the uploads ---------------------------------------------------------------------------------------------


def newline_zip(megabytes: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("model/quality.pred.jsonl", "w", force_zip64=True) as member:
            for _ in range(megabytes):
                member.write(b"\n" * MB)
    return buffer.getvalue()


def one_line_zip(megabytes: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("model/quality.pred.jsonl", "w", force_zip64=True) as member:
            member.write(b'{"query": "q", "gt": "A", "model_pred": "')
            for _ in range(megabytes):
                member.write(b"x" * MB)
            member.write(b'", "evaluation": "exam"}\n')
    return buffer.getvalue()


def many_members_zip(members: int, member_kb: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for index in range(members):
            system = f"sys{index:04d}"
            line = (f'{{"query": "question {index}", "gt": "A", "{system}_pred": "' + "answer " * 140
                    + '", "evaluation": "exam"}\n').encode()
            archive.writestr(f"{system}/quality.pred.jsonl", line * max(1, member_kb * 1024 // len(line)))
    return buffer.getvalue()


def one_line_jsonl(megabytes: int) -> bytes:
    return b'{"query": "q", "gt": "A", "plain_pred": "' + b"y" * (megabytes * MB) + b'", "evaluation": "exam"}\n'


# -- the server ----------------------------------------------------------------------------------------------


class Server:
    """`run.py serve` on a fresh instance, with a signed-in researcher session."""

    def __init__(self, instance: Path):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.env = dict(os.environ, LEVAL_INSTANCE=str(instance), PYTHONUNBUFFERED="1", LEVAL_WORKERS="0",
                        LEVAL_DEMO="0")
        subprocess.run([sys.executable, "run.py", "create-user", "researcher", "--role", "researcher",
                        "--password-stdin"], cwd=REPO_ROOT, env=self.env, input=PASSWORD, text=True, check=True,
                       capture_output=True)
        self.process = subprocess.Popen(
            [sys.executable, "run.py", "serve", "--no-demo", "--workers", "0", "--port", str(self.port)],
            cwd=REPO_ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        self._wait_for_healthz()
        self._sign_in()

    def _wait_for_healthz(self) -> None:
        started = time.perf_counter()
        while True:
            try:
                with self.opener.open(f"{self.base}/healthz", timeout=5) as response:
                    if response.status == 200:
                        return
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError(f"serve exited:\n{self.process.stderr.read()[-2000:]}") from None
                if time.perf_counter() - started > SERVE_TIMEOUT_S:
                    raise RuntimeError("serve did not answer /healthz") from None
                time.sleep(0.05)

    def token(self, path: str) -> str:
        with self.opener.open(self.base + path, timeout=30) as response:
            return CSRF_RE.search(response.read().decode()).group(1)

    def _sign_in(self) -> None:
        data = urllib.parse.urlencode({"username": "researcher", "password": PASSWORD,
                                       "csrf_token": self.token("/login")}).encode()
        with self.opener.open(self.base + "/login", data=data, timeout=30) as response:
            if "/login" in response.url:
                raise RuntimeError("sign-in failed")

    def upload(self, name: str, payload: bytes) -> str:
        """POST one file to the upload form and follow to the preview page; return its text."""
        boundary = secrets.token_hex(16)
        token = self.token("/predictions")
        head = (f'--{boundary}\r\nContent-Disposition: form-data; name="csrf_token"\r\n\r\n{token}\r\n'
                f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{name}"\r\n'
                f"Content-Type: application/octet-stream\r\n\r\n").encode()
        body = head + payload + f"\r\n--{boundary}--\r\n".encode()
        request = urllib.request.Request(self.base + "/predictions/upload", data=body, method="POST", headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}"})
        with self.opener.open(request, timeout=1800) as response:
            return response.read().decode()

    def rss_mb(self) -> float:
        return _status_kb(self.process.pid, "VmRSS") / 1024

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {key} for process {pid}")


class PeakRss:
    """The process's peak RSS over a block: VmHWM after resetting it, or sampling when that is not allowed."""

    def __init__(self, pid: int):
        self.pid, self.peak_kb, self._stop = pid, 0, threading.Event()
        try:
            Path(f"/proc/{pid}/clear_refs").write_text("5")  # 5: reset the peak resident set size
            self.resettable = True
        except OSError:
            self.resettable = False

    def __enter__(self) -> PeakRss:
        if not self.resettable:
            self._thread = threading.Thread(target=self._sample, daemon=True)
            self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak_kb = max(self.peak_kb, _status_kb(self.pid, "VmRSS"))
            time.sleep(0.01)

    def __exit__(self, *exc) -> None:
        if self.resettable:
            self.peak_kb = _status_kb(self.pid, "VmHWM")
        else:
            self._stop.set()
            self._thread.join()


# -- the run -------------------------------------------------------------------------------------------------


def run(quick: bool = False) -> list[dict]:
    sizes = QUICK if quick else FULL
    cases = [
        (f"zip of {sizes['newlines_mb']} MB of newlines", "newlines.zip", lambda: newline_zip(sizes["newlines_mb"]),
         "the file has no JSON lines"),
        (f"zip of one {sizes['line_mb']} MB JSON line", "one-line.zip", lambda: one_line_zip(sizes["line_mb"]),
         "longer than the limit of 20 MB"),
        (f"zip of {sizes['members']} members of {sizes['member_kb']} KB", "members.zip",
         lambda: many_members_zip(sizes["members"], sizes["member_kb"]), "no row matches"),
        (f"plain .jsonl of one {sizes['plain_mb']} MB line", "plain.pred.jsonl",
         lambda: one_line_jsonl(sizes["plain_mb"]), "no row matches" if sizes["plain_mb"] < 20 else "longer than"),
    ]
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        server = Server(Path(folder) / "instance")
        try:
            time.sleep(0.5)
            idle = server.rss_mb()
            how = "VmHWM" if PeakRss(server.process.pid).resettable else "sampled every 10 ms"
            print(f"  server idle after sign-in: {idle:.0f} MB RSS (peak read as {how})")
            for label, name, build, expected in cases:
                payload = build()
                with PeakRss(server.process.pid) as peak:
                    started = time.perf_counter()
                    page = server.upload(name, payload)
                    seconds = time.perf_counter() - started
                if expected not in page:
                    raise RuntimeError(f"{label}: the preview does not say {expected!r}")
                peak_mb = peak.peak_kb / 1024
                print(f"  {label} ({len(payload) / MB:.1f} MB sent): peak {peak_mb:.0f} MB RSS, {seconds:.1f} s; "
                      f"target <= {TARGET_MB} MB: {'met' if peak_mb <= TARGET_MB else 'NOT met'}")
                rows.append(row(f"peak server RSS: {label}", peak_mb, "MB", f"<= {TARGET_MB} MB", idle,
                                "the same server idle after sign-in"))
                rows.append(row(f"upload and preview time: {label}", seconds, "s", "-", None))
        finally:
            server.stop()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run of seconds")
    args = parser.parse_args()
    print_table(run(quick=args.quick))


if __name__ == "__main__":
    main()
