"""A results page's first load after the server starts imports no module it does not need.

scipy.stats alone took 1–2.5 s to import, most of the first load of Results → Human scores. The
pages are requested in a fresh process (as after a restart), which then lists what it imported.
"""
from __future__ import annotations

import json
import subprocess
import sys

from app.services import demo
from app.services.studies.lookup import require_study
from tests.conftest import PASSWORDS, REPO_ROOT
from tests.support.scoring_data import generate_metric_results, generate_scores

PAGES = ("", "/correlation", "/agreement", "/disagreements", "/table2", "/length-instruction", "/exports")
# Heavy libraries no results page uses (the analyses need numpy and krippendorff only).
UNUSED = ("scipy", "openai", "tiktoken", "jieba", "rapidfuzz", "nltk", "rouge_score")

FIRST_LOAD = """
import json, sys
from pathlib import Path
from app import create_app
from tests.support.live import CSRF_RE
instance, study, password, pages, unused = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), json.loads(sys.argv[5])
client = create_app({"INSTANCE_PATH": Path(instance), "TESTING": True}).test_client()
token = CSRF_RE.search(client.get("/login").get_data(as_text=True)).group(1)
client.post("/login", data={"username": "researcher", "password": password, "csrf_token": token})
statuses = [client.get(f"/results{page}?study={study}").status_code for page in pages]
print(json.dumps({"statuses": statuses, "loaded": [m for m in unused if m in sys.modules]}))
"""


def test_results_pages_load_no_scipy_on_their_first_request(app, tmp_path):
    with app.app_context():
        demo.load_demo()
        study_id = require_study().id
        generate_scores(["ann1", "ann2"], seed=5, study_id=study_id)
        generate_metric_results(seed=6, study_id=study_id)
    out = subprocess.run(
        [sys.executable, "-c", FIRST_LOAD, str(tmp_path / "instance"), str(study_id), PASSWORDS["researcher"],
         json.dumps(PAGES), json.dumps(UNUSED)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=180, check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["statuses"] == [200] * len(PAGES)
    assert result["loaded"] == []
