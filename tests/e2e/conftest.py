"""Browser fixtures: a real server process and Playwright driving Debian's Chromium."""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

CHROMIUM = Path(os.environ.get("LEVAL_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
ADMIN_RE = re.compile(r"Created admin account '([^']+)' with password: (\S+)")
# Browser tests wait on what a person would see, never for a fixed time; these are only how long they keep
# waiting before they call it a failure. A loaded machine (CI on two shared cores) is slow, not wrong, and
# a wait ends as soon as its condition holds, so a long deadline costs a passing run nothing. One owner:
# every page and context a test opens, Playwright's expect() and the polls below use them.
PATIENCE_MS = 30_000
JOB_PATIENCE_MS = 120_000  # a background job (metrics, a judge or rater run, an import) to finish


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LiveServer:
    url: str
    instance: Path
    process: subprocess.Popen
    admin_user: str = ""
    admin_password: str = ""
    output: list[str] = field(default_factory=list)

    def cli(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
        """Run `python run.py …` against the same instance folder."""
        return subprocess.run(
            [sys.executable, "run.py", *args], cwd=REPO_ROOT, env=server_env(self.instance),
            input=input, capture_output=True, text=True, timeout=120,
        )


def server_env(instance: Path) -> dict:
    env = dict(os.environ)
    env.update({"LEVAL_INSTANCE": str(instance), "PYTHONUNBUFFERED": "1"})
    env.setdefault("LEVAL_WORKERS", "1")
    return env


def start_server(instance: Path, extra_env: dict | None = None, args: tuple[str, ...] = ()) -> LiveServer:
    """Start `python run.py serve [args]` on a free port and wait for /healthz."""
    port = free_port()
    env = server_env(instance)
    env.update(extra_env or {})
    process = subprocess.Popen(
        [sys.executable, "run.py", "serve", "--port", str(port), *args], cwd=REPO_ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    server = LiveServer(url=f"http://127.0.0.1:{port}", instance=instance, process=process)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if line:
            server.output.append(line)
            match = ADMIN_RE.search(line)
            if match:
                server.admin_user, server.admin_password = match.groups()
            if "is running at" in line:
                break
        elif process.poll() is not None:
            raise RuntimeError(f"server exited with code {process.returncode}:\n" + "".join(server.output))
    _wait_healthy(server.url + "/healthz", deadline)
    # Keep reading the console: a full pipe would block the server the next time it logs.
    threading.Thread(target=_drain, args=(server,), daemon=True).start()
    return server


def _drain(server: LiveServer) -> None:
    for line in server.process.stdout:
        server.output.append(line)


def _wait_healthy(url: str, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer in time")


def stop_server(server: LiveServer) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()


@dataclass(frozen=True)
class FirstRun:
    instance: Path
    admin_user: str
    admin_password: str
    database: str | None  # the PostgreSQL database it wrote (a template for copies), None on SQLite


@pytest.fixture(scope="session")
def first_run(tmp_path_factory, postgres_server):
    """One real first run of `run.py serve` (migrations, the demo, the printed admin), kept to be copied."""
    instance = tmp_path_factory.mktemp("first-run") / "instance"
    database, extra = None, {}
    if postgres_server is not None:
        database = postgres_server.new_name("firstrun")
        extra["LEVAL_DATABASE_URL"] = postgres_server.create(database)
    server = start_server(instance, extra)
    stop_server(server)
    assert server.admin_user and server.admin_password, "".join(server.output)
    yield FirstRun(instance, server.admin_user, server.admin_password, database)
    if database is not None:
        postgres_server.drop(database)


@pytest.fixture
def first_run_server(tmp_path):
    """A server started on an empty instance: a real first run."""
    server = start_server(tmp_path / "instance")
    yield server
    stop_server(server)


@pytest.fixture
def live_server(tmp_path, first_run, postgres_server, monkeypatch):
    """A server on a copy of the first run's instance and database: the state a first run leaves, without one."""
    instance = tmp_path / "instance"
    shutil.copytree(first_run.instance, instance)
    copy = None
    if first_run.database is not None:
        copy, url = postgres_server.fresh(first_run.database)
        monkeypatch.setenv("LEVAL_DATABASE_URL", url)  # the server, its CLI and the test's own reads
    server = start_server(instance)
    server.admin_user, server.admin_password = first_run.admin_user, first_run.admin_password
    yield server
    stop_server(server)
    if copy is not None:
        postgres_server.discard(copy)


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        message = f"Chromium not found at {CHROMIUM}: install Debian's 'chromium' package"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=PATIENCE_MS)  # Playwright's default is 5 s, less than a loaded machine needs
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    yield page
    context.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failing browser test leaves a full-page screenshot of every open page in tests/e2e/artifacts/.

    Taken when the test body's report is made: the `page` fixture's context is still open then, and
    contexts a test opened itself are kept open until teardown (see keep_contexts_open).
    """
    outcome = yield
    report = outcome.get_result()
    browser = item.funcargs.get("browser") if hasattr(item, "funcargs") else None
    if report.when != "call" or not report.failed or browser is None:
        return
    for path in save_failure_screenshots(browser, item.nodeid):
        report.sections.append(("screenshot", f"saved {path}"))


def save_failure_screenshots(browser, nodeid: str) -> list[Path]:
    """Save a full-page screenshot of each open page; a page that cannot be taken is skipped."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid.split("::", 1)[-1])[:120]
    saved = []
    pages = [p for context in browser.contexts for p in context.pages if not p.is_closed()]
    for index, open_page in enumerate(pages):
        path = ARTIFACTS / f"FAILED-{stem}{'' if index == 0 else f'-{index + 1}'}.png"
        try:
            open_page.screenshot(path=str(path), full_page=True, timeout=10_000)
        except Exception:  # noqa: BLE001  a crashed page must not hide the test's own failure
            continue
        saved.append(path)
    return saved


@pytest.fixture(autouse=True)
def keep_contexts_open(request):
    """Every context a test opens waits PATIENCE_MS; its `close()` is held back until teardown, so a failure
    can still be seen.

    Tests close their own contexts in `finally:`, which runs before the failure is reported; without
    this the screenshot would find no page.
    """
    if "browser" not in request.fixturenames:
        yield
        return
    browser = request.getfixturevalue("browser")
    opened = []
    original = browser.new_context

    def new_context(*args, **kwargs):
        context = original(*args, **kwargs)
        context.set_default_timeout(PATIENCE_MS)
        context.close = lambda *a, **k: None  # closed below, after the report
        opened.append(context)
        return context

    browser.new_context = new_context
    yield
    del browser.new_context  # back to the class's method
    for context in opened:
        type(context).close(context)


def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path


def sign_in(page, base_url: str, username: str, password: str) -> None:
    """Sign in through the form and wait for the page it answers with (where sign-in leads, or the form again
    with its error) to have loaded, its scripts run."""
    page.goto(base_url + "/login")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    with page.expect_navigation():
        page.get_by_role("button", name="Sign in").click()


def wait_until(page, condition, what: str, timeout_ms: float = PATIENCE_MS) -> None:
    """Poll a Python condition on what the test has seen (events, the page's answers) until it holds.
    The short pause between checks lets Playwright deliver the page's events; it is not a wait for the page."""
    deadline = time.monotonic() + timeout_ms / 1000
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"still not true after {timeout_ms / 1000:g} s: {what}")
        page.wait_for_timeout(50)


def wait_until_true(page, expression: str, timeout_ms: float = PATIENCE_MS) -> None:
    """Poll a JavaScript expression until it is true. Playwright's wait_for_function compiles its polling
    predicate inside the page, which the app's CSP (no 'unsafe-eval') refuses once a first check fails;
    page.evaluate goes through the browser's protocol and is not subject to the page's CSP."""
    wait_until(page, lambda: page.evaluate(f"() => Boolean({expression})"), expression, timeout_ms)


def painted(page) -> None:
    """Wait until the page has drawn two more frames: what the last input changed (a scroll, a layout) is on
    screen. Playwright's key and mouse calls return once the page has handled the event."""
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")


def count_navigations(page) -> None:
    """From now on, count the navigations this page starts (a followed link, a form, a script's location)."""
    page.evaluate("""() => { window.levalTestNavigations = 0;
        navigation.addEventListener('navigate', () => { window.levalTestNavigations += 1; }); }""")


def navigations(page) -> int | None:
    """How many navigations the page started since count_navigations; None once another page is shown.
    A key that follows a link starts the navigation while the key is handled, before Playwright's press returns."""
    from playwright.sync_api import Error

    try:
        return page.evaluate("() => window.levalTestNavigations")
    except Error as error:  # the page went away while it was asked
        if "context was destroyed" not in str(error):
            raise
        return None
