"""Schemathesis against the live API: every operation of the OpenAPI document, with a write token and a read token.

A real HTTP server (werkzeug, threaded) serves the demo; schemathesis's own command line reads the
document from it and sends generated requests, a few per operation (bounded so the whole file stays
well under a minute). It checks that nothing answers 5xx and that every status, content type and body
conforms to the document.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from werkzeug.serving import make_server

from tests.support.api import make_token

MAX_EXAMPLES = 5
OPERATIONS = 15  # every operation of the document is tested
CHECKS = ("not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,"
          "response_headers_conformance,negative_data_rejection,unsupported_method,ignored_auth")

# Two wrong methods per operation are enough to check the 405 answer (the default tries eight, doubling the run).
CONFIG = """
[phases.coverage]
unexpected-methods = ["delete", "put"]
"""


@pytest.fixture
def live_api(demo):
    """The demo served over HTTP on a free port; bad tokens are not throttled here (schemathesis sends many)."""
    demo.extensions["login_limiter"].address_limit = 100_000
    server = make_server("127.0.0.1", 0, demo, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield demo, f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(timeout=5)


# One schemathesis worker: with two threads, CPython 3.11's AST constructor now and then raises a spurious
# "SystemError: AST constructor recursion depth mismatch" inside Hypothesis (python/cpython#106905, a
# recursion counter not restored on an error path, seen in threaded programs); it failed one CI run with
# every request conforming.
def schemathesis(base_url: str, token: str, folder: Path, phases: str) -> subprocess.Popen:
    st = shutil.which("st", path=str(Path(sys.executable).parent)) or "st"
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "schemathesis.toml"
    config.write_text(CONFIG)
    return subprocess.Popen(
        [st, "--config-file", str(config), "run", f"{base_url}/api/v1/openapi.json", "--header", f"Authorization: Bearer {token}",
         "--checks", CHECKS, "--max-examples", str(MAX_EXAMPLES), "--seed", "30", "--workers", "1",
         "--phases", phases, "--request-timeout", "20", "--no-shrink", "--suppress-health-check", "all",
         "--report", "junit", "--report-dir", str(folder)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=folder)


def test_every_operation_conforms_and_never_fails_with_a_write_and_a_read_token(live_api, tmp_path):
    """The write token runs both phases (coverage: each parameter's edge values and wrong methods; fuzzing: random
    requests); the read token the fuzzing phase (its writes must be refused in the documented shape)."""
    app, base_url = live_api
    failed = []
    for scope, phases in (("write", "coverage,fuzzing"), ("read", "fuzzing")):
        process = schemathesis(base_url, make_token(app, "researcher", scope), tmp_path / scope, phases)
        output, _ = process.communicate(timeout=300)
        (tmp_path / f"schemathesis-{scope}.txt").write_text(output)
        selected = re.search(r"Operations:\s+(\d+) selected / (\d+) total", output)
        if process.returncode != 0 or not selected or selected.group(1) != selected.group(2) \
                or int(selected.group(1)) < OPERATIONS:
            failed.append(f"--- {scope} token (exit {process.returncode}):\n{output[-5000:]}")
    assert not failed, "\n".join(failed)
