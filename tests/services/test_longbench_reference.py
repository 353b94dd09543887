"""LongBench's own eval.py and result.py, run unchanged, against the oracle and the app's `longbench-result`.

Runs when a checkout of THUDM/LongBench (LONGBENCH_SOURCE: the folder holding `LongBench/eval.py` and `result.py`)
and an interpreter with the packages LongBench's requirements.txt installs for scoring (LONGBENCH_PYTHON: rouge,
jieba, numpy and fuzzywuzzy, without python-Levenshtein) are given; skipped otherwise. The oracle
(tests/support/longbench_reference.py) stands in for the scripts in every other test.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import System
from app.services.metrics.compute import score_system
from tests.support import longbench_reference as ref
from tests.support.longbench_data import write_model, write_v2

MODELS = (("alpha", 0.8, 0), ("beta", 0.4, 1))


def _longbench() -> tuple[Path, str]:
    source, python = os.environ.get("LONGBENCH_SOURCE"), os.environ.get("LONGBENCH_PYTHON")
    if not source or not python or not (Path(source) / "LongBench" / "eval.py").is_file():
        pytest.skip("set LONGBENCH_SOURCE (a THUDM/LongBench checkout) and LONGBENCH_PYTHON (with rouge, jieba, "
                    "numpy and fuzzywuzzy)")
    levenshtein = subprocess.run([python, "-c", "import Levenshtein"], capture_output=True)
    assert levenshtein.returncode != 0, "LONGBENCH_PYTHON has python-Levenshtein: fuzz.ratio would not be difflib's"
    return Path(source), python


def _run(python: str, script: str, *args: str, cwd: Path) -> None:
    done = subprocess.run([python, script, *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


def test_eval_py_and_result_py_unchanged_equal_the_oracle_and_longbench_result(app, runner, tmp_path):
    source, python = _longbench()
    root = tmp_path / "LongBench"
    for model, skill, seed in MODELS:
        write_model(root, model, skill=skill, seed=seed)
        write_model(root, model, e=True, skill=skill, seed=seed)
        write_v2(root, model, skill=skill, seed=seed)
    write_v2(root, "alpha", cot=True, skill=0.7, seed=3)
    imported = runner.invoke(args=["import-longbench", str(root)])
    assert imported.exit_code == 0, imported.output
    with app.app_context():
        for (system_id,) in db.session.execute(select(System.id)):
            score_system(system_id)
        db.session.commit()
    # The scripts as they are, run where they expect their folders (pred/, pred_e/, results/ beside them).
    for name in ("LongBench/eval.py", "LongBench/metrics.py", "result.py"):
        shutil.copy(source / name, root / Path(name).name)
    compared = 0
    for model, _, _ in MODELS:
        for e in (False, True):
            folder = root / ("pred_e" if e else "pred") / model
            _run(python, "eval.py", "--model", model, *(["--e"] if e else []), cwd=root)
            written = ref.canonical_result_json((folder / "result.json").read_text(encoding="utf-8"))
            assert written == ref.result_json_text(ref.evaluate_model(folder, e=e)), (model, e)
            out = tmp_path / f"{model}-{e}.json"
            done = runner.invoke(args=["longbench-result", model, *(["--e"] if e else []), "--out", str(out)])
            assert done.exit_code == 0, done.output
            assert out.read_text(encoding="utf-8") == written, (model, e)
            compared += 1
    _run(python, "result.py", cwd=root)
    written = ref.canonical_result_txt((root / "result.txt").read_text(encoding="utf-8"))
    assert written == ref.v2_result_txt(root / "results")
    out = tmp_path / "result.txt"
    done = runner.invoke(args=["longbench-result", "--v2", "alpha", "alpha_cot", "beta", "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert out.read_text(encoding="utf-8") == written
    assert compared == 4 and written.count("\n") == 3
