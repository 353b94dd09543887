"""`run.py export` writes each value the same way in CSV and JSON lines: whole seconds, true/false."""
from __future__ import annotations

import csv
import json

from sqlalchemy import select

from app.extensions import db
from app.models import Score
from tests.services.test_exports import read_jsonl, run, scored


def test_the_export_command_writes_whole_seconds_and_lowercase_booleans(app, runner, tmp_path):
    scored(app, rounds=False)
    with app.app_context():
        db.session.scalars(select(Score).order_by(Score.id)).first().seconds_spent = 37.6
        db.session.commit()
    for fmt in ("jsonl", "csv"):
        result = run(runner, "export", "--format", fmt, "--out", str(tmp_path / f"scores.{fmt}"))
        assert result.exit_code == 0, result.output
    records = read_jsonl(tmp_path / "scores.jsonl")
    with (tmp_path / "scores.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(records) > 10
    assert all(type(record["seconds_spent"]) is int for record in records)
    assert 38 in {record["seconds_spent"] for record in records}  # 37.6 s is written as 38
    assert {row["stale"] for row in rows} | {row["annotator_active"] for row in rows} <= {"true", "false"}
    for record, row in zip(records, rows):
        assert row["seconds_spent"] == str(record["seconds_spent"])
        assert (row["stale"], row["annotator_active"]) == (json.dumps(record["stale"]),
                                                           json.dumps(record["annotator_active"]))
