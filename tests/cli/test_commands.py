"""Command line: summary, create-user, import-leval (exit codes, download), load-demo, run.py."""
from __future__ import annotations

import functools
import json
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.conftest import REPO_ROOT
from tests.services.test_importers import REF, pred_rows, write_jsonl


def summary_json(runner) -> dict:
    result = runner.invoke(args=["summary", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_summary_json_keys(runner):
    data = summary_json(runner)
    assert list(data) == ["documents", "questions", "references", "systems", "predictions", "users", "scores", "jobs"]
    assert data["users"] == 3


def test_create_user_from_stdin(runner):
    result = runner.invoke(args=["create-user", "newbie", "--role", "annotator", "--password-stdin"], input="a-long-password\n")
    assert result.exit_code == 0, result.output
    assert "Created annotator 'newbie'" in result.output
    again = runner.invoke(args=["create-user", "newbie", "--role", "annotator", "--password-stdin"], input="a-long-password\n")
    assert again.exit_code != 0 and "already exists" in again.output


def test_create_user_rejects_short_password(runner):
    result = runner.invoke(args=["create-user", "shorty", "--role", "researcher", "--password-stdin"], input="abc\n")
    assert result.exit_code != 0 and "at least 8" in result.output


def test_import_exit_codes(runner, tmp_path):
    folder = tmp_path / "set"
    folder.mkdir()
    write_jsonl(folder / "tiny-model.pred.jsonl", pred_rows())
    result = runner.invoke(args=["import-leval", str(folder)])
    assert result.exit_code == 1 and "matched no question" in result.output
    result = runner.invoke(args=["import-leval", str(folder), "--allow-unmatched"])
    assert result.exit_code == 0
    write_jsonl(folder / "tiny.ref.jsonl", [REF])
    result = runner.invoke(args=["import-leval", str(folder)])
    assert result.exit_code == 0, result.output
    assert "Summary:" in result.output
    assert summary_json(runner)["predictions"] == 2


def test_import_reports_bad_file(runner, tmp_path):
    bad = tmp_path / "broken.pred.jsonl"
    bad.write_text('{"query": "q", "gt": "g", "m_pred": "p"}\n{"query": \n')
    result = runner.invoke(args=["import-leval", str(bad)])
    assert result.exit_code == 1
    assert "broken.pred.jsonl, line 2" in result.output


def test_load_demo_meets_the_brief(runner):
    result = runner.invoke(args=["load-demo"])
    assert result.exit_code == 0, result.output
    data = summary_json(runner)
    assert data["documents"] >= 2 and data["questions"] >= 8 and data["systems"] >= 3
    again = runner.invoke(args=["load-demo"])
    assert again.exit_code == 0 and summary_json(runner) == data


def test_demo_documents_are_long(app, runner):
    from sqlalchemy import select

    from app.extensions import db
    from app.models import Document, Question
    from app.models.corpus import HUMAN_EVAL

    runner.invoke(args=["load-demo"])
    with app.app_context():
        docs = db.session.scalars(select(Document).where(Document.collection == HUMAN_EVAL)).all()
        assert len(docs) >= 2 and all(d.word_count >= 3000 for d in docs)
        for question in db.session.scalars(select(Question).join(Document).where(Document.collection == HUMAN_EVAL)):
            assert len(question.references) == 3


@pytest.fixture
def leval_http_server(shared_leval):
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(shared_leval))
    handler.log_message = lambda *args: None
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_download_from_local_server(app, runner, leval_http_server):
    app.config["LEVAL_DOWNLOAD_BASE"] = leval_http_server
    result = runner.invoke(args=["import-leval", "--download"])
    assert result.exit_code == 0, result.output
    data = summary_json(runner)
    assert (data["documents"], data["questions"], data["predictions"]) == (12, 85, 595)


def test_download_failure_is_clear(app, runner, leval_http_server):
    app.config["LEVAL_DOWNLOAD_BASE"] = leval_http_server + "/no-such-folder"
    result = runner.invoke(args=["import-leval", "--download"])
    assert result.exit_code != 0 and "HTTP 404" in result.output
    assert summary_json(runner)["documents"] == 0


def test_run_py_is_the_flask_cli(tmp_path):
    env = {"LEVAL_INSTANCE": str(tmp_path / "inst"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "run.py", "routes"], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "/healthz" in out.stdout and "/login" in out.stdout
    out = subprocess.run(
        [sys.executable, "run.py", "summary", "--json"], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["documents"] == 0  # only `serve` loads the demo


def test_the_import_summary_says_what_to_do_about_unmatched_rows_and_conflicts(runner, tmp_path):
    """Issue 40, item 10: "1136 unmatched, 122 conflicts" ended the summary with no word on what to do."""
    folder = tmp_path / "set"
    folder.mkdir()
    write_jsonl(folder / "tiny-model.pred.jsonl", pred_rows())
    first = runner.invoke(args=["import-leval", str(folder), "--allow-unmatched"])
    assert "Unmatched: 2 prediction rows match no imported question" in first.output
    assert "Import the task or reference file they answer first" in first.output and "Conflicts:" not in first.output
    write_jsonl(folder / "tiny.ref.jsonl", [REF])
    assert runner.invoke(args=["import-leval", str(folder)]).exit_code == 0
    changed = [{**row, "tiny-model_pred": row["tiny-model_pred"] + " (another run)"} for row in pred_rows()]
    write_jsonl(folder / "tiny-model.pred.jsonl", changed)
    again = runner.invoke(args=["import-leval", str(folder)])
    assert again.exit_code == 0, again.output
    assert "Conflicts: 2 rows give another answer than the one stored" in again.output
    assert "run this import again with --replace" in again.output and "Unmatched:" not in again.output
    replaced = runner.invoke(args=["import-leval", str(folder), "--replace"])
    assert "Conflicts:" not in replaced.output and "Unmatched:" not in replaced.output
