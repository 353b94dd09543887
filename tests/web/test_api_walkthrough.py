"""docs/api.md's loop runs as written against a live server: the curl block, and the Python block through a client
that openapi-python-client generates at test time from the served document, with the page's own commands.

Without openapi-python-client (or curl, jq and bash for the shell blocks) the test is skipped with a reason, and
fails under CI=true, where requirements-dev.txt installs it.
"""
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
from app.models import AnnotationRound, Score, Study
from tests.support.api import make_token
from tests.support.predictions import demo_file, demo_rows

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"
BLOCK = re.compile(r"^```(sh|python)\n(.*?)^```$", re.DOTALL | re.MULTILINE)
HUMAN = "human_eval/terse-13b.pred.jsonl"


def blocks() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {"sh": [], "python": []}
    for kind, code in BLOCK.findall(DOC.read_text(encoding="utf-8")):
        found[kind].append(code)
    assert len(found["sh"]) == 2 and len(found["python"]) == 1, "the curl loop, the client's generation, the Python loop"
    return found


def missing(*tools: str) -> list[str]:
    here = str(Path(sys.executable).parent)
    return [tool for tool in tools if not (shutil.which(tool, path=here) or shutil.which(tool))]


def skip_or_fail(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI installs it: requirements-dev.txt, Debian's curl and jq)")
    pytest.skip(reason)


def scores_file(path: Path) -> Path:
    """Human scores of my-model's answers, in the scores export's format (as another instance would export them)."""
    rows = [{"annotator": "annotator", "system": "my-model", "query": row["query"], "gt": row["gt"],
             "score": 1 + i % 5, "comment": "评分 ok"} for i, row in enumerate(demo_rows(HUMAN))]
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def live(demo, workers, tmp_path):
    server = make_server("127.0.0.1", 0, demo, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    predictions = tmp_path / "my-model.pred.jsonl"
    predictions.write_bytes(demo_file(HUMAN, "my-model"))
    here = str(Path(sys.executable).parent)
    env = {**os.environ, "LEVAL_URL": f"http://127.0.0.1:{server.server_port}", "PATH": f"{here}:{os.environ['PATH']}",
           "LEVAL_TOKEN": make_token(demo, "researcher", "write"), "PREDICTIONS": str(predictions),
           "SCORES": str(scores_file(tmp_path / "scores.jsonl"))}
    yield demo, env, tmp_path
    server.shutdown()
    thread.join(timeout=5)


def run(command: list[str], env: dict, folder: Path) -> subprocess.CompletedProcess:
    done = subprocess.run(command, env=env, cwd=folder, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def imported(app, name: str) -> tuple[int, list[int]]:
    with app.app_context():
        study = db.session.scalars(select(Study).where(Study.name == name)).one()
        return study.id, sorted(db.session.scalars(select(Score.value).join(
            AnnotationRound, AnnotationRound.id == Score.round_id).where(AnnotationRound.study_id == study.id)))


def test_the_loop_runs_with_a_generated_client(live):
    app, env, folder = live
    if missing("openapi-python-client", "curl"):
        skip_or_fail(f"{', '.join(missing('openapi-python-client', 'curl'))} not installed: the generated client "
                     "cannot be made")
    code = blocks()
    run(["bash", "-euo", "pipefail", "-c", code["sh"][1]], env, folder)
    assert (folder / "leval_client" / "api" / "studies" / "create_study.py").is_file()
    python = run([sys.executable, "-c", code["python"][0]], env, folder)
    assert "found by name: True" in python.stdout and "scores: 10 new, 0 conflicts" in python.stdout
    shown = re.search(r"^open (\d+) answers to score$", python.stdout, re.MULTILINE)
    assert shown and f"answers in the results: {shown.group(1)}" in python.stdout
    study, values = imported(app, "my-model-check")
    assert values == sorted(1 + i % 5 for i in range(10))


def test_the_loop_runs_with_curl(live):
    app, env, folder = live
    if missing("curl", "jq", "bash"):
        skip_or_fail(f"{', '.join(missing('curl', 'jq', 'bash'))} not installed")
    shell = run(["bash", "-euo", "pipefail", "-c", blocks()["sh"][0]], env, folder)
    assert '"open"' in shell.stdout and "my-model" in shell.stdout
    study, values = imported(app, "my-model-check-sh")
    assert shell.stdout.split('"open"', 1)[1].split()[0] == str(study)  # the id the name lookup printed
    assert len(values) == 10 and '"created": 10' in shell.stdout
    assert (folder / "my-model-check.csv").read_text().startswith("annotator,system,")
