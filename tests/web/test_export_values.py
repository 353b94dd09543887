"""The score downloads write each value the same way in CSV and JSON lines: whole seconds, true/false."""
from __future__ import annotations

import csv
import io
import json

from sqlalchemy import select

from app.extensions import db
from app.models import Score, User
from tests.services.test_exports import scored


def _plant(app) -> None:
    """A fractional time (an imported file may carry one) and an inactive annotator (a false flag)."""
    with app.app_context():
        score = db.session.scalars(select(Score).order_by(Score.id)).first()
        score.seconds_spent = 2.0
        db.session.scalars(select(User).where(User.username == "ann2")).one().active = False
        db.session.commit()


def test_csv_and_jsonl_downloads_write_whole_seconds_and_lowercase_booleans(app, client, auth):
    scored(app, rounds=False)
    _plant(app)
    auth.login("admin")
    jsonl = client.get("/results/export/scores.jsonl").get_data(as_text=True)
    records = [json.loads(line) for line in jsonl.splitlines()]
    raw = client.get("/results/export/scores.csv").get_data(as_text=True)
    rows = list(csv.DictReader(io.StringIO(raw)))
    assert len(rows) == len(records) > 10
    # JSON: an integer, never 2.0; the seconds of every row are whole numbers.
    assert all(type(record["seconds_spent"]) is int for record in records)
    assert '"seconds_spent": 2,' in jsonl and '"seconds_spent": 2.0' not in jsonl
    assert {record["annotator_active"] for record in records} == {True, False}
    for record, row in zip(records, rows):
        assert row["seconds_spent"] == str(record["seconds_spent"])
        for flag in ("stale", "annotator_active"):
            assert row[flag] == json.dumps(record[flag])  # "true"/"false", as the JSON lines spell it
    assert "True" not in {row["annotator_active"] for row in rows} | {row["stale"] for row in rows}
