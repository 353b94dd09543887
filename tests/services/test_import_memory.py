"""A folder import holds one file at a time (issue 38): its peak memory does not grow with the folder,
and each file is still imported whole or not at all.

Memory is measured with tracemalloc (allocations, not time) around import_path on folders of the same
files, one four times the other.
"""
from __future__ import annotations

import json
import shutil
import tracemalloc

from sqlalchemy import func, select

from app.extensions import db
from app.models import Prediction, System
from app.services.importers import import_path
from tests.support.study_data import write_study_set

SYSTEMS = [f"model-{i:02d}" for i in range(24)]


def _folder(tmp_path, name: str, systems: list[str]):
    folder = write_study_set(tmp_path / name, documents=4, questions_each=40, systems=systems)
    for system in systems:  # long answers, as models write them: the files weigh what real ones do
        path = folder / f"{system}.pred.jsonl"
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        for row in rows:
            row[f"{system}_pred"] += " " + " ".join(f"word{i}" for i in range(400))
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return folder


def _peak_of_import(app, folder) -> int:
    with app.app_context():
        tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            base, _ = tracemalloc.get_traced_memory()
            report = import_path(folder)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert not report.failed, report.failed
        return peak - base


def test_a_folder_import_s_peak_memory_does_not_grow_with_the_number_of_files(app, tmp_path):
    small = _folder(tmp_path, "small", SYSTEMS[:6])
    large = _folder(tmp_path, "large", SYSTEMS[6:])
    shutil.copy(small / "study.ref.jsonl", large / "study.ref.jsonl")  # the same documents: known by then
    small_peak = _peak_of_import(app, small)
    large_peak = _peak_of_import(app, large)
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(Prediction)) == 24 * 160
    assert large_peak < 1.3 * small_peak, (small_peak, large_peak)


def test_a_bad_line_still_leaves_its_whole_file_out_and_the_others_in(app, tmp_path):
    folder = _folder(tmp_path, "data", SYSTEMS[:3])
    bad = folder / f"{SYSTEMS[1]}.pred.jsonl"
    lines = bad.read_text().splitlines()
    lines[100] = lines[100][:-1]  # a broken JSON line deep in the file
    bad.write_text("\n".join(lines) + "\n")
    with app.app_context():
        report = import_path(folder)
        assert [(f.file, f.error["line"]) for f in report.failed] == [(bad.name, 101)]
        stored = dict(db.session.execute(select(System.name, func.count(Prediction.id))
                                         .join(Prediction, Prediction.system_id == System.id).group_by(System.name)).all())
        assert stored == {SYSTEMS[0]: 160, SYSTEMS[2]: 160}
