"""The folder importers (`import-leval`, `import-lveval`, `import-opencompass`) read only regular files inside the
folder they are given: a named pipe named like a data file made them wait forever, and a link to a file outside
the folder made them read it. Each such entry is refused with a line naming it and saying what it is."""
from __future__ import annotations

import json
import time

from sqlalchemy import func, select

from app.extensions import db
from app.models import Prediction, System
from app.services.importers import import_path
from tests.services.test_importers import REF, pred_rows, write_jsonl
from tests.support.lveval_data import write_model
from tests.support.opencompass import tiny_rows, write_dataset, write_tiny_task
from tests.support.special_files import link_outside, named_pipe, needs_fifos

pytestmark = needs_fifos
PIPE = "is a named pipe (FIFO): only regular files inside the folder are read"
LINK = "is a symbolic link: only regular files inside the folder are read"


def systems(app) -> dict[str, int]:
    with app.app_context():
        return dict(db.session.execute(select(System.name, func.count(Prediction.id)).join(Prediction)
                                       .group_by(System.name)).all())


def invoke(runner, *args):
    started = time.monotonic()
    result = runner.invoke(args=list(args))
    assert time.monotonic() - started < 8, "the import waited on a named pipe"
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def test_import_opencompass_refuses_a_pipe_and_an_outside_link_by_name_and_imports_nothing(app, runner, tmp_path):
    write_tiny_task(tmp_path / "tasks")
    with app.app_context():
        assert not import_path(tmp_path / "tasks").failed
    out = tmp_path / "outputs"
    write_dataset(out, "好模型", "LEval_quality", tiny_rows())
    elsewhere = tmp_path / "elsewhere"
    write_dataset(elsewhere, "other", "LEval_quality", tiny_rows())  # a valid file, outside the folder
    link_outside(out / "predictions" / "linked" / "LEval_quality.json", tmp_path / "secret" / "LEval_quality.json",
                 (elsewhere / "predictions" / "other" / "LEval_quality.json").read_bytes())
    (out / "predictions" / "piped").mkdir()
    with named_pipe(out / "predictions" / "piped" / "LEval_quality.json"):
        result = invoke(runner, "import-opencompass", str(out))
        assert result.exit_code == 1
        assert f"FAILED  outputs/predictions/piped/LEval_quality.json: {PIPE}" in result.output
        assert f"FAILED  outputs/predictions/linked/LEval_quality.json: {LINK}" in result.output
        assert "valid   outputs/predictions/好模型/LEval_quality.json" in result.output
        assert systems(app) == {}  # all or nothing: the valid model waits for the folder to be fixed
        skipped = invoke(runner, "import-opencompass", str(out), "--skip-invalid")
    assert skipped.exit_code == 1 and systems(app) == {"好模型": 3}


def test_import_leval_refuses_them_and_imports_the_regular_files(app, runner, tmp_path):
    folder = tmp_path / "set"
    folder.mkdir()
    write_jsonl(folder / "tiny.ref.jsonl", [REF])
    write_jsonl(folder / "tiny-model.pred.jsonl", pred_rows())
    link_outside(folder / "outside.pred.jsonl", tmp_path / "secret" / "other.pred.jsonl",
                 "\n".join(json.dumps(row) for row in pred_rows("outsider_pred")).encode())
    with named_pipe(folder / "waiting.pred.jsonl"):
        result = invoke(runner, "import-leval", str(folder))
    assert result.exit_code == 1
    assert f"FAILED  outside.pred.jsonl: {LINK}" in result.output
    assert f"FAILED  waiting.pred.jsonl: {PIPE}" in result.output
    assert systems(app) == {"tiny-model": 2}


def test_import_lveval_refuses_the_model_folder_that_holds_one(app, runner, tmp_path):
    good = write_model(tmp_path / "models", "良", rows=3, datasets=["cmrc_mixup"], levels=["16k"])
    piped = write_model(tmp_path / "models", "piped", rows=3, datasets=["cmrc_mixup"], levels=["16k"])
    linked = write_model(tmp_path / "models", "linked", rows=3, datasets=["cmrc_mixup"], levels=["16k"])
    link_outside(linked / "lic_mixup_16k.jsonl", tmp_path / "secret" / "lic_mixup_16k.jsonl", b"{}\n")
    with named_pipe(piped / "dureader_mixup_16k.jsonl"):
        result = invoke(runner, "import-lveval", str(tmp_path / "models"))
    assert result.exit_code == 1
    assert "FAILED  piped: nothing imported" in result.output and f"piped/dureader_mixup_16k.jsonl: {PIPE}" in result.output
    assert "FAILED  linked: nothing imported" in result.output and f"linked/lic_mixup_16k.jsonl: {LINK}" in result.output
    assert f"ok      {good.name}: 1 files, 3 rows" in result.output
    assert systems(app) == {"良": 3}
