"""The server moves what start-up made out of the garbage collector's view before it serves (issue 38): a full
collection inside a request then walks only what requests made, not every module and template again."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO_ROOT

PROBE = """
import gc, json, sys
from app import create_app
from app.cli.wsgi import build_server, settle_heap
app = create_app({"INSTANCE_PATH": sys.argv[1]})
with app.app_context():
    app.test_client().get("/healthz")  # a request's imports too, as a server has before its first page
server = build_server(app, threads=1, host="127.0.0.1", port=0)
tracked = len(gc.get_objects())
settle_heap()
print(json.dumps({"tracked": tracked, "frozen": gc.get_freeze_count(), "after": len(gc.get_objects())}))
server.close()
"""


def test_start_up_objects_leave_the_collector_s_view_before_the_server_serves(tmp_path):
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "instance")], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    assert counts["tracked"] > 50_000  # what start-up made: modules, templates, the app
    assert counts["frozen"] >= 0.9 * counts["tracked"]
    assert counts["after"] < 0.02 * counts["tracked"], counts  # left for each full collection to walk
