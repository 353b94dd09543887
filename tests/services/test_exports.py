"""Exports (jsonl, csv, L-Eval's layout, results JSON), re-import, conflicts and the round trip."""
from __future__ import annotations

import csv
import io
import json
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app import create_app
from app.core.version import __version__
from app.extensions import db
from app.models import AnnotationRound, PredictionFile, Score, ScoreRevision, System, User
from app.services import demo
from app.services.studies.lookup import require_study
from app.services.studies.setup import StudySpec, create_study
from app.services.exports import SCORE_FIELDS, SCORE_SEPARATOR, leval_lines, score_rows
from app.services.importers import import_path
from tests.support.scoring_data import generate_metric_results, generate_scores

MINIMAL_FIELDS = ("annotator", "system", "document_id", "question_id", "query", "answer_label", "score",
                  "comment", "scored_at", "seconds_spent")


@contextmanager
def fresh_app(tmp_path: Path, copy, name: str):
    """A second app on its own freshly migrated database (copy: the migrated_copy fixture), like a colleague's copy."""
    other = create_app({**copy(tmp_path / name), "TESTING": True})
    try:
        yield other
    finally:
        with other.app_context():
            db.session.remove()
            db.engine.dispose()



def S() -> int:
    """The study the test's data is in (the only one)."""
    return require_study().id


def scored(app, *, rounds: bool = True, data_path: Path | None = None):
    """Load data, then score it: two finished annotators, one in a second round, awkward comments."""
    with app.app_context():
        report = import_path(data_path) if data_path else demo.load_demo()
        assert not report.failed
        if data_path:
            create_study(StudySpec(name="L-Eval human evaluation", status="open"))
        generate_scores(["ann1", "ann2"], seed=1)
        generate_scores(["ann3"], seed=2, coverage=0.7)
        if rounds:
            first = db.session.scalars(select(AnnotationRound).join(User, User.id == AnnotationRound.annotator_id)
                                          .where(User.username == "ann1")).one()
            first.status = "archived"
            db.session.commit()
            generate_scores(["ann1"], seed=3, coverage=0.5, round_number=2)
        score = db.session.scalars(select(Score).order_by(Score.id)).first()
        score.comment = '=SUM(A1) "quoted", comma\nnew line, naïve ü'
        db.session.commit()


def run(runner, *args):
    result = runner.invoke(args=list(args))
    return result


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def ordered(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))


def test_jsonl_rows_carry_full_provenance(app, runner, tmp_path):
    scored(app)
    out = tmp_path / "scores.jsonl"
    result = run(runner, "export", "--format", "jsonl", "--rounds", "all", "--out", str(out))
    assert result.exit_code == 0, result.output
    rows = read_jsonl(out)
    with app.app_context():
        assert len(rows) == db.session.scalar(select(func.count(Score.id)))
        files = dict(db.session.execute(select(System.name, PredictionFile.sha256).join(PredictionFile)
                                        .where(PredictionFile.filename.like("human_eval/%"))).all())
    assert tuple(rows[0]) == SCORE_FIELDS and set(MINIMAL_FIELDS) <= set(rows[0])
    for row in rows:
        assert row["prediction_file_sha256"] == files[row["system"]]
        assert row["app_version"] == __version__ and row["round"] in (1, 2) and 1 <= row["score"] <= 5
        assert row["scored_at"].endswith("+00:00") and row["answer_label"] in "ABCD"
    assert {r["round"] for r in rows if r["annotator"] == "ann1"} == {1, 2}
    current = tmp_path / "current.jsonl"
    assert run(runner, "export", "--format", "jsonl", "--rounds", "current", "--out", str(current)).exit_code == 0
    assert {r["round"] for r in read_jsonl(current) if r["annotator"] == "ann1"} == {2}


def test_csv_has_the_same_rows_and_defuses_formulas(app, runner, tmp_path):
    scored(app, rounds=False)
    assert run(runner, "export", "--format", "jsonl", "--out", str(tmp_path / "s.jsonl")).exit_code == 0
    assert run(runner, "export", "--format", "csv", "--out", str(tmp_path / "s.csv")).exit_code == 0
    from_json = read_jsonl(tmp_path / "s.jsonl")
    from_csv = list(csv.DictReader(io.StringIO((tmp_path / "s.csv").read_text(encoding="utf-8"))))
    assert len(from_csv) == len(from_json) and list(from_csv[0]) == list(SCORE_FIELDS)
    for a, b in zip(from_json, from_csv):
        for key in SCORE_FIELDS:
            expected = a[key]
            if isinstance(expected, str) and expected[:1] in ("=", "+", "-", "@"):
                expected = "'" + expected
            # Text as it is; every other value spelled as the JSON line spells it (true, false, 12).
            assert b[key] == (expected if isinstance(expected, str) else json.dumps(expected)), key
    assert any(row["comment"].startswith("'=SUM(A1)") and "\nnew line" in row["comment"] for row in from_csv)


def test_leval_layout_matches_the_leval_script(app, runner, tmp_path):
    scored(app, rounds=False)
    assert run(runner, "export", "--format", "leval", "--out", str(tmp_path / "leval")).exit_code == 0
    files = sorted(p.name for p in (tmp_path / "leval").iterdir())
    assert files == ["files_from_ann1.jsonl", "files_from_ann2.jsonl", "files_from_ann3.jsonl"]
    lines = read_jsonl(tmp_path / "leval" / "files_from_ann3.jsonl")
    assert len(lines) == 2
    for line in lines:
        keys = list(line)
        assert keys[:4] == ["instructions", "outputs", "gpt4_outputs", "claude_outputs"]
        assert keys[-3:] == ["evaluation", "input", "source"]
        # balanced-34b's files use the key balanced-x_pred, kept as L-Eval keeps gpt4-x_pred.
        assert sorted(keys[4:-3]) == ["balanced-x_pred", "shaky-3b_pred", "terse-13b_pred", "verbose-7b_pred"]
        assert not any(SCORE_SEPARATOR in text for text in line["gpt4_outputs"])
    # Read it back the way L-Eval's script does: the score follows the separator.
    counted = [float(item.split(SCORE_SEPARATOR)[1]) for line in lines for key in line if key.endswith("_pred")
               for item in line[key] if SCORE_SEPARATOR in item]
    with app.app_context():
        stored = db.session.scalars(select(Score.value).join(User, User.id == Score.annotator_id)
                                    .where(User.username == "ann3")).all()
        assert sorted(counted) == sorted(float(v) for v in stored) and len(stored) < 40  # ann3 did not finish
        assert leval_lines(S(), "ann3") == lines


def test_jsonl_round_trip_into_a_fresh_database(app, runner, tmp_path, migrated_copy):
    scored(app)
    first = tmp_path / "first.jsonl"
    assert run(runner, "export", "--format", "jsonl", "--rounds", "all", "--out", str(first)).exit_code == 0
    with fresh_app(tmp_path, migrated_copy, "fresh") as other:
        with other.app_context():
            assert not demo.load_demo().failed
        other_runner = other.test_cli_runner()
        result = run(other_runner, "import-annotations", str(first))
        assert result.exit_code == 0, result.output
        assert "created active annotators (reset their passwords to hand them over): ann1, ann2, ann3" in result.output
        second = tmp_path / "second.jsonl"
        assert run(other_runner, "export", "--format", "jsonl", "--rounds", "all", "--out", str(second)).exit_code == 0
        assert ordered(read_jsonl(second)) == ordered(read_jsonl(first))
        with other.app_context():
            users = db.session.scalars(select(User).where(User.username.in_(["ann1", "ann2", "ann3"]))).all()
            assert users and all(user.active and user.role == "annotator" for user in users)  # as exported
            statuses = dict(db.session.execute(select(AnnotationRound.number, AnnotationRound.status)
                                               .join(User, User.id == AnnotationRound.annotator_id)
                                               .where(User.username == "ann1")).all())
            assert statuses == {1: "archived", 2: "open"}
        again = run(other_runner, "import-annotations", str(first))
        assert again.exit_code == 0 and "0 new" in again.output and "0 conflicts" in again.output


def test_leval_round_trip_into_a_fresh_database(app, runner, tmp_path, migrated_copy):
    scored(app, rounds=False)
    folder = tmp_path / "exported"
    assert run(runner, "export", "--format", "leval", "--out", str(folder)).exit_code == 0
    with fresh_app(tmp_path, migrated_copy, "fresh") as other:
        with other.app_context():
            assert not demo.load_demo().failed
        other_runner = other.test_cli_runner()
        for path in sorted(folder.iterdir()):
            result = run(other_runner, "import-annotations", str(path))
            assert result.exit_code == 0, result.output
        again = tmp_path / "again"
        assert run(other_runner, "export", "--format", "leval", "--out", str(again)).exit_code == 0
        for path in sorted(folder.iterdir()):
            assert ordered(read_jsonl(again / path.name)) == ordered(read_jsonl(path))


def test_conflicts_are_reported_and_replaced_only_on_request(app, runner, tmp_path):
    scored(app, rounds=False)
    out = tmp_path / "s.jsonl"
    assert run(runner, "export", "--format", "jsonl", "--annotator", "ann2", "--out", str(out)).exit_code == 0
    rows = read_jsonl(out)
    rows[0]["score"] = rows[0]["score"] % 5 + 1
    rows[1]["comment"] = "changed my mind"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = run(runner, "import-annotations", str(out))
    assert result.exit_code == 0 and "2 conflicts" in result.output and "pass --replace" in result.output
    assert f"line 1: ann2, round 1, {rows[0]['system']}" in result.output
    with app.app_context():
        stored = {(r["system"], r["question_id"]): r for r in score_rows(S(), annotator="ann2")}
        assert stored[(rows[0]["system"], rows[0]["question_id"])]["score"] != rows[0]["score"]
        assert db.session.scalar(select(func.count(ScoreRevision.id))) == 0
    result = run(runner, "import-annotations", str(out), "--replace")
    assert result.exit_code == 0 and "2 replaced" in result.output
    with app.app_context():
        assert db.session.scalar(select(func.count(ScoreRevision.id))) == 2
        exported = {(r["system"], r["question_id"]): r for r in score_rows(S(), annotator="ann2")}
        assert exported[(rows[0]["system"], rows[0]["question_id"])]["score"] == rows[0]["score"]
        assert exported[(rows[1]["system"], rows[1]["question_id"])]["comment"] == "changed my mind"


def test_a_bad_row_rejects_the_whole_file(app, runner, tmp_path):
    scored(app, rounds=False)
    out = tmp_path / "s.jsonl"
    assert run(runner, "export", "--format", "jsonl", "--annotator", "ann1", "--out", str(out)).exit_code == 0
    rows = read_jsonl(out)
    for row in rows:
        row["annotator"] = "newcomer"
    rows[2]["system"] = "no-such-model"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = run(runner, "import-annotations", str(out))
    assert result.exit_code == 1
    assert "s.jsonl, line 3, field 'system': no system named 'no-such-model'" in result.output
    with app.app_context():
        assert db.session.scalar(select(User.id).where(User.username == "newcomer")) is None
    rows[2]["system"] = rows[3]["system"]
    rows[2]["answer_sha256"] = "0" * 64
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = run(runner, "import-annotations", str(out), "--json")
    report = json.loads(result.output)
    assert result.exit_code == 1 and report["error"]["field"] in ("answer_sha256", "score")


def test_leval_import_needs_a_name_and_ignores_reference_scores(app, runner, tmp_path):
    scored(app, rounds=False)
    with app.app_context():
        lines = leval_lines(S(), "ann2")
    lines[0]["gpt4_outputs"] = [text + SCORE_SEPARATOR + "4" for text in lines[0]["gpt4_outputs"]]
    anonymous = tmp_path / "scores.jsonl"
    anonymous.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    result = run(runner, "import-annotations", str(anonymous))
    assert result.exit_code == 1 and "whose scores are these?" in result.output
    result = run(runner, "import-annotations", str(anonymous), "--annotator", "guest.reader")
    assert result.exit_code == 0, result.output
    assert "40 scores: 40 new" in result.output and "ignored 5 scores given to the GPT-4/Claude references" in result.output
    with app.app_context():
        guest = db.session.scalars(select(User).where(User.username == "guest.reader")).one()
        assert not guest.active and not guest.check_password("")


def test_results_export_holds_every_aggregate(app, runner, tmp_path):
    scored(app, rounds=False)
    with app.app_context():
        generate_metric_results(seed=4)
    out = tmp_path / "results.json"
    result = run(runner, "export", "--format", "results", "--out", str(out))
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text(encoding="utf-8"))
    assert set(data["views"]) == {"all", "finished"}
    view = data["views"]["all"]
    assert {"systems", "breakdowns", "agreement", "profiles", "n_scores"} <= set(view)
    assert set(view["profiles"]) == {"official", "fixed"}
    official = view["profiles"]["official"]
    assert [row["metric"] for row in official["correlations"]] == ["F1", "ROUGE-L", "Keyword F1 (LV-Eval)", "−|ΔL| (words)"]
    assert set(official["disagreements"]) == {"f1", "rougeL", "keyword_f1", "length"}
    assert data["views"]["finished"]["annotators"] == ["ann1", "ann2"]
    assert data["significance_threshold_tau_7_systems"] == pytest.approx(15 / 21)


def test_web_downloads(app, client, auth):
    scored(app, rounds=False)
    auth.login("admin")
    response = client.get("/results/export/scores.csv")
    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert "attachment; filename=Demo-scores-all.csv" in response.headers["Content-Disposition"]
    response = client.get("/results/export/leval/ann2")
    assert "files_from_ann2.jsonl" in response.headers["Content-Disposition"]
    assert len(response.get_data(as_text=True).splitlines()) == 2
    page = client.get("/results/exports").get_data(as_text=True)
    assert "files_from_ann3.jsonl" in page and "python run.py export" in page


def test_round_trip_on_leval_human_eval_subset(app, runner, tmp_path, migrated_copy, shared_leval):
    human_eval = shared_leval / "Predictions" / "human_eval"
    scored(app, data_path=human_eval)
    first = tmp_path / "first.jsonl"
    assert run(runner, "export", "--format", "jsonl", "--out", str(first)).exit_code == 0
    rows = read_jsonl(first)
    assert len({r["system"] for r in rows}) == 7 and len([r for r in rows if r["annotator"] == "ann2"]) == 595
    assert run(runner, "export", "--format", "leval", "--annotator", "ann2", "--out", str(tmp_path / "files_from_ann2.jsonl")).exit_code == 0
    leval = read_jsonl(tmp_path / "files_from_ann2.jsonl")
    assert len(leval) == 12 and "gpt4-x_pred" in leval[0]
    with fresh_app(tmp_path, migrated_copy, "fresh") as other:
        with other.app_context():
            assert not import_path(human_eval).failed
            create_study(StudySpec(name="L-Eval human evaluation", status="open"))
        other_runner = other.test_cli_runner()
        assert run(other_runner, "import-annotations", str(first)).exit_code == 0
        second = tmp_path / "second.jsonl"
        assert run(other_runner, "export", "--format", "jsonl", "--out", str(second)).exit_code == 0
        assert ordered(read_jsonl(second)) == ordered(rows)


def test_the_export_command_counts_csv_records_not_lines(app, runner, tmp_path):
    scored(app, rounds=False)  # one comment spans two lines
    out = tmp_path / "s.csv"
    result = run(runner, "export", "--format", "csv", "--out", str(out))
    assert result.exit_code == 0, result.output
    records = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    lines = out.read_text(encoding="utf-8").count("\n") - 1
    assert lines == len(records) + 1, "the multi-line comment makes one more line than records"
    assert f"(csv: {len(records)} scores)" in result.output
    jsonl_result = run(runner, "export", "--format", "jsonl", "--out", str(tmp_path / "s.jsonl"))
    assert f"(jsonl: {len(records)} scores)" in jsonl_result.output
