"""L-Eval task files and the human-eval reference file on the upload page: the same preview as predictions
(file, line and field errors; nothing written), imported all or nothing by the importer `import-leval` uses."""
from __future__ import annotations

import json
import re

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import Document, Question, Reference, User
from app.services.demo import DEMO_PATH
from app.services.uploads import load_batch
from tests.support.opencompass import folder_bytes, tiny_rows, write_dataset
from tests.support.predictions import (
    batch_id,
    confirm,
    demo_file,
    jsonl,
    make_zip,
    post_upload,
    staged_files,
)

TASKS = DEMO_PATH / "LEval-data"
TASK_FILES = {f"LEval-data/{p.relative_to(TASKS).as_posix()}": p.read_bytes() for p in sorted(TASKS.rglob("*.jsonl"))}
REFERENCE = DEMO_PATH / "human_eval" / "demo.ref.jsonl"


@pytest.fixture
def researcher(app, client, auth):
    auth.login("researcher")
    return client


def corpus(app) -> tuple[int, int, int]:
    with app.app_context():
        return tuple(db.session.scalar(select(func.count()).select_from(model)) for model in (Document, Question, Reference))


def page_of(client, batch: str) -> str:
    response = client.get(f"/predictions/uploads/{batch}")
    assert response.status_code == 200
    return response.get_data(as_text=True)


def flashes(client, response) -> str:
    return client.get(response.headers["Location"]).get_data(as_text=True)


def instructions(raw: bytes) -> int:
    return sum(len(json.loads(line)["instructions"]) for line in raw.decode().splitlines() if line.strip())


def test_task_files_are_previewed_then_imported_as_import_leval_imports_them(app, researcher, auth, runner):
    batch = batch_id(post_upload(researcher, auth, [("LEval-data.zip", make_zip(TASK_FILES))]))
    page = page_of(researcher, batch)
    questions = sum(instructions(raw) for raw in TASK_FILES.values())
    assert "Confirm: import 2 files" in page and "L-Eval task file (documents, questions and references)" in page
    outcomes = re.findall(r'data-field="outcome"><span class="badge ok">(adds \d+ questions \(\d+ new documents\))<', page)
    assert len(outcomes) == 2 and sum(int(o.split()[1]) for o in outcomes) == questions
    assert "run.py" not in page and "import-leval" not in page
    assert corpus(app) == (0, 0, 0), "the preview writes nothing"

    response = confirm(researcher, auth, batch)
    assert "Imported 2 files: 2 task or reference files" in flashes(researcher, response)
    stored = corpus(app)
    assert stored[1] == questions and stored[0] > 0
    # The command line's importer finds every document and question already there: one set of rules.
    result = runner.invoke(args=["import-leval", str(TASKS), "--json"])
    report = json.loads(result.output[result.output.index("{"):])
    assert [(f["counts"]["created"], f["counts"]["updated"]) for f in report["files"]] == [(0, 0), (0, 0)]
    assert corpus(app) == stored

    # The predictions that answer those questions now match them.
    batch = batch_id(post_upload(researcher, auth, [
        ("quality.pred.jsonl", demo_file("exam_eval/terse-13b/quality.pred.jsonl", "terse-13b"))], system="terse-13b"))
    assert '<span class="badge ok">adds 8 new</span>' in page_of(researcher, batch)


def test_the_reference_file_then_its_predictions(app, researcher, auth):
    batch = batch_id(post_upload(researcher, auth, [("demo.ref.jsonl", REFERENCE.read_bytes())]))
    page = page_of(researcher, batch)
    assert "L-Eval human-evaluation reference file" in page
    confirm(researcher, auth, batch)
    with app.app_context():
        kinds = set(db.session.scalars(select(Reference.kind).distinct()))
    assert kinds == {"human", "gpt4-32k", "claude-100k"}
    again = page_of(researcher, batch_id(post_upload(researcher, auth, [("demo.ref.jsonl", REFERENCE.read_bytes())])))
    assert f"adds nothing: its {instructions(REFERENCE.read_bytes())} questions are already stored" in again
    batch = batch_id(post_upload(researcher, auth, [
        ("terse-13b.pred.jsonl", demo_file("human_eval/terse-13b.pred.jsonl", "terse-13b"))]))
    assert '<span class="badge ok">adds 10 new</span>' in page_of(researcher, batch)


def test_a_bad_task_file_names_each_line_and_field_and_stores_nothing(app, researcher, auth):
    good = {"instructions": ["What is kept?"], "outputs": ["The ledger."], "input": "A ledger is kept.",
            "source": "quality", "evaluation": "exam"}
    rows = jsonl([good, good | {"outputs": ["one", "two"]}, {k: v for k, v in good.items() if k != "input"},
                  good | {"instructions": []}]) + b'{"instructions": \n'
    batch = batch_id(post_upload(researcher, auth, [("quality.jsonl", rows)]))
    page = page_of(researcher, batch)
    errors = re.findall(r"<li><strong>line (\d+)</strong>(?: field <code>(\w+)</code>)?", page)
    assert errors == [("2", "outputs"), ("3", "input"), ("4", "instructions"), ("5", "")]
    assert "No file can be imported" in page
    confirm(researcher, auth, batch)
    assert corpus(app) == (0, 0, 0)


def test_a_confirm_that_fails_on_one_file_stores_no_document_of_the_others(app, researcher, auth):
    batch = batch_id(post_upload(researcher, auth, [("LEval-data.zip", make_zip(TASK_FILES))]))
    staged = {path.stem: path for path in staged_files(app)}
    with app.app_context():
        user_id = db.session.scalar(select(User.id).where(User.username == "researcher"))
        last = load_batch(batch, user_id).files[-1]
    staged[last.sha256].write_bytes(b'{"tampered": true}\n')  # the second file changes after the preview
    response = confirm(researcher, auth, batch)
    assert "Nothing was imported" in flashes(researcher, response)
    assert corpus(app) == (0, 0, 0), "the first file's documents went back with the second's failure"


def test_opencompass_predictions_without_their_task_point_to_this_page_not_a_command(app, researcher, auth, tmp_path):
    out = tmp_path / "oc"
    write_dataset(out, "m", "LEval_quality", tiny_rows())
    page = page_of(researcher, batch_id(post_upload(researcher, auth, [("oc.zip", make_zip(folder_bytes(out)))])))
    assert "no question of L-Eval&#39;s quality is stored: import its task file first (quality.jsonl, on the " \
           "upload page" in page
    assert "run.py" not in page
