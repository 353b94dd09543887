"""docs/api.md's walkthrough runs as written: its curl block and its Python block, against a live server."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from sqlalchemy import select
from werkzeug.serving import make_server

from app.extensions import db
from app.models import Study

from tests.support.api import make_token
from tests.support.predictions import demo_file

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"
BLOCK = re.compile(r"^```(sh|python)\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def blocks() -> dict[str, str]:
    found = {kind: code for kind, code in BLOCK.findall(DOC.read_text(encoding="utf-8"))}
    assert set(found) == {"sh", "python"}, "the walkthrough's two blocks"
    return found


@pytest.fixture
def live(demo, workers, tmp_path):
    server = make_server("127.0.0.1", 0, demo, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    predictions = tmp_path / "my-model.pred.jsonl"
    predictions.write_bytes(demo_file("human_eval/terse-13b.pred.jsonl", "my-model"))
    env = {**os.environ, "LEVAL_URL": f"http://127.0.0.1:{server.server_port}",
           "LEVAL_TOKEN": make_token(demo, "researcher", "write"), "PREDICTIONS": str(predictions)}
    yield demo, env, tmp_path
    server.shutdown()
    thread.join(timeout=5)


def test_the_documented_walkthrough_runs(live):
    app, env, folder = live
    code = blocks()
    python = subprocess.run([sys.executable, "-c", code["python"]], env=env, cwd=folder, capture_output=True,
                            text=True, timeout=120, check=False)
    assert python.returncode == 0, python.stdout + python.stderr
    assert "open" in python.stdout and "found by name: True" in python.stdout
    rows = [json.loads(line) for line in (folder / "my-model-check.jsonl").read_text().splitlines()]
    assert rows == []  # a new study has no scores yet; the export answers, empty
    if not (shutil.which("curl") and shutil.which("jq") and shutil.which("bash")):
        pytest.skip("curl, jq or bash missing: the Python block ran")
    shell = subprocess.run(["bash", "-euo", "pipefail", "-c", code["sh"]], env=env, cwd=folder, capture_output=True,
                           text=True, timeout=120, check=False)
    assert shell.returncode == 0, shell.stdout + shell.stderr
    assert '"open"' in shell.stdout and "my-model" in shell.stdout
    with app.app_context():  # the id the name lookup printed is the study the block made
        made = db.session.scalars(select(Study.id).where(Study.name == "my-model-check-sh")).one()
    assert shell.stdout.split('"open"', 1)[1].split()[0] == str(made)
    assert (folder / "my-model-check.csv").read_text().startswith("annotator,system,")
