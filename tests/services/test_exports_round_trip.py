"""Every export format read back into a fresh database exports the identical file again."""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

from sqlalchemy import delete, select

from app.extensions import db
from app.models import Answer, Score, System, User
from app.services import demo
from app.services.exports import SCORE_SEPARATOR
from app.services.exports.leval import split_scored_answer
from app.services.importers import import_path
from app.services.studies.lookup import require_study
from app.services.studies.setup import StudySpec, create_study, set_systems
from tests.support.scoring_data import generate_metric_results, generate_scores
from tests.services.test_exports import fresh_app, read_jsonl, run, scored

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"


def _shuffle_score_ids(seed: int) -> None:
    """Store the scores again in a random order, as annotators score in any order (ids then differ from export order)."""
    scores = db.session.scalars(select(Score)).all()
    copies = [{column.key: getattr(score, column.key) for column in Score.__table__.columns if column.key != "id"}
              for score in scores]
    db.session.execute(delete(Score))
    random.Random(seed).shuffle(copies)
    for copy in copies:
        db.session.add(Score(**copy))
    db.session.commit()


def _export_all(runner, folder: Path) -> dict[str, str]:
    """Export the study in every format (and every round choice); return file name -> text."""
    folder.mkdir()
    for fmt in ("jsonl", "csv"):
        for rounds in ("all", "current"):
            result = run(runner, "export", "--format", fmt, "--rounds", rounds, "--out", str(folder / f"{rounds}.{fmt}"))
            assert result.exit_code == 0, result.output
    result = run(runner, "export", "--format", "results", "--out", str(folder / "results.json"))
    assert result.exit_code == 0, result.output
    assert run(runner, "export", "--format", "leval", "--out", str(folder / "leval")).exit_code == 0
    texts = {path.relative_to(folder).as_posix(): path.read_text(encoding="utf-8")
             for path in sorted(folder.rglob("*")) if path.is_file()}
    # The one deliberate difference: when the results file was made.
    results = json.loads(texts["results.json"])
    assert results.pop("generated_at")
    texts["results.json"] = json.dumps(results, ensure_ascii=False, indent=2)
    return texts


def test_every_format_round_trips_to_an_identical_file(app, runner, tmp_path, migrated_copy):
    scored(app)
    with app.app_context():
        generate_metric_results(seed=4)
        _shuffle_score_ids(seed=5)
        db.session.scalars(select(User).where(User.username == "ann2")).one().active = False
        db.session.commit()
    first = _export_all(runner, tmp_path / "first")
    assert len(first) == 4 + 1 + 3 and "leval/files_from_ann3.jsonl" in first
    with fresh_app(tmp_path, migrated_copy, "fresh") as other:
        with other.app_context():
            assert not demo.load_demo().failed
            generate_metric_results(seed=4)
        other_runner = other.test_cli_runner()
        result = run(other_runner, "import-annotations", str(tmp_path / "first" / "all.jsonl"))
        assert result.exit_code == 0, result.output
        second = _export_all(other_runner, tmp_path / "second")
        with other.app_context():
            active = dict(db.session.execute(select(User.username, User.active)
                                             .where(User.username.in_(["ann1", "ann2", "ann3"]))).all())
    assert active == {"ann1": True, "ann2": False, "ann3": True}
    assert sorted(second) == sorted(first)
    for name in first:
        assert second[name] == first[name], name


def _demo_with_separator(folder: Path) -> tuple[Path, str]:
    """A copy of the demo whose first shaky-3b answer quotes L-Eval's score separator (and a trailing score)."""
    shutil.copytree(DEMO, folder)
    path = folder / "human_eval" / "shaky-3b.pred.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[0])
    row["shaky-3b_pred"] = f"Quoting the form:{SCORE_SEPARATOR}4 and the bare marker {SCORE_SEPARATOR.strip()}"
    lines[0] = json.dumps(row, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder, row["shaky-3b_pred"]


def _load(data: Path) -> None:
    assert not import_path(data).failed
    create_study(StudySpec(name="Separator study", status="open"))


def test_leval_round_trip_with_the_separator_inside_an_unscored_answer(app, runner, tmp_path, migrated_copy):
    data, text = _demo_with_separator(tmp_path / "data")
    with app.app_context():
        _load(data)
        generate_scores(["ann1"], seed=1)
        quoted = db.session.scalars(select(Answer.id).where(Answer.text == text)).one()
        db.session.execute(delete(Score).where(Score.answer_id == quoted))
        db.session.commit()
    folder = tmp_path / "first"
    assert run(runner, "export", "--format", "leval", "--out", str(folder)).exit_code == 0
    exported = (folder / "files_from_ann1.jsonl").read_text(encoding="utf-8")
    with fresh_app(tmp_path, migrated_copy, "fresh") as other:
        with other.app_context():
            _load(data)
        other_runner = other.test_cli_runner()
        result = run(other_runner, "import-annotations", str(folder / "files_from_ann1.jsonl"))
        assert result.exit_code == 0, result.output
        assert "39 scores: 39 new" in result.output
        again = tmp_path / "again"
        assert run(other_runner, "export", "--format", "leval", "--out", str(again)).exit_code == 0
        assert (again / "files_from_ann1.jsonl").read_text(encoding="utf-8") == exported
        with other.app_context():
            assert db.session.scalars(select(Score).join(Answer).where(Answer.text == text)).first() is None


def test_split_scored_answer_reads_the_last_separator_and_an_empty_score_as_unscored():
    assert split_scored_answer(f"a{SCORE_SEPARATOR}b{SCORE_SEPARATOR}4") == (f"a{SCORE_SEPARATOR}b", "4")
    assert split_scored_answer(f"a{SCORE_SEPARATOR}4{SCORE_SEPARATOR}") == (f"a{SCORE_SEPARATOR}4", None)
    assert split_scored_answer(f"a{SCORE_SEPARATOR} ") == ("a", None)  # L-Eval's form shows unscored answers so
    assert split_scored_answer("plain") == ("plain", None)


def test_leval_export_says_which_scores_it_leaves_out(app, runner, client, auth, tmp_path):
    scored(app, rounds=False)
    with app.app_context():
        study = require_study()
        study_id = study.id
        kept = [sid for sid, name in db.session.execute(select(System.id, System.name)) if name != "shaky-3b"]
        set_systems(study, kept)
        db.session.commit()
    result = run(runner, "export", "--format", "leval", "--annotator", "ann1", "--out", str(tmp_path / "f.jsonl"))
    assert result.exit_code == 0, result.output
    assert "left out 10 scores" in result.output and "shaky-3b" in result.output
    assert all("shaky-3b_pred" not in line for line in read_jsonl(tmp_path / "f.jsonl"))
    folder = run(runner, "export", "--format", "leval", "--out", str(tmp_path / "all"))
    assert "files_from_ann2.jsonl: left out 10 scores" in folder.output
    auth.login("admin")
    page = client.get(f"/results/exports?study={study_id}").get_data(as_text=True)
    assert "left out 10 scores" in page and "shaky-3b" in page


def test_annotator_active_must_be_a_boolean_and_agree_across_rows(app, runner, tmp_path):
    scored(app, rounds=False)
    out = tmp_path / "s.jsonl"
    assert run(runner, "export", "--format", "jsonl", "--annotator", "ann3", "--out", str(out)).exit_code == 0
    rows = read_jsonl(out)
    for row in rows:
        row["annotator"] = "newcomer"
    bad = [dict(rows[0], annotator_active="yes"), *rows[1:]]
    mixed = [rows[0], *[dict(row, annotator_active=False) for row in rows[1:]]]
    for name, content in (("bad.jsonl", bad), ("mixed.jsonl", mixed)):
        (tmp_path / name).write_text("".join(json.dumps(row) + "\n" for row in content), encoding="utf-8")
    result = run(runner, "import-annotations", str(tmp_path / "bad.jsonl"))
    assert result.exit_code == 1 and "line 1" in result.output and "annotator_active" in result.output
    result = run(runner, "import-annotations", str(tmp_path / "mixed.jsonl"))
    assert result.exit_code == 1 and "line 2" in result.output and "newcomer is active on line 1" in result.output
    with app.app_context():
        assert db.session.scalars(select(User).where(User.username == "newcomer")).first() is None


def _intervals(results: dict) -> dict:
    """Every bootstrap interval of a results export, by where it is."""
    found = {}

    def walk(value, path):
        if isinstance(value, dict):
            if "ci_low" in value or "ci_high" in value:
                found[path] = (value.get("ci_low"), value.get("ci_high"))
            for key, item in value.items():
                walk(item, f"{path}/{key}")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{path}/{index}")

    walk(results, "")
    return found


def test_results_intervals_are_identical_after_a_re_import_that_numbers_questions_differently(
        app, runner, tmp_path, migrated_copy):
    """A colleague's database numbers the same questions otherwise (it held other data first): the export's
    re-import must report the same bootstrap intervals, seeded from the scores, not from database ids."""
    from tests.support.judge_data import write_judge_dataset

    # Real data, not the demo: an instance that holds real data keeps the demo (and its study) out of every command.
    scored(app, rounds=False, data_path=write_judge_dataset(tmp_path / "data"))
    scores, first = tmp_path / "scores.jsonl", tmp_path / "first.json"
    assert run(runner, "export", "--format", "jsonl", "--out", str(scores)).exit_code == 0
    assert run(runner, "export", "--format", "results", "--out", str(first)).exit_code == 0
    with fresh_app(tmp_path, migrated_copy, "fresh") as other:
        with other.app_context():
            assert not demo.load_demo().failed  # takes the first ids
            assert not import_path(write_judge_dataset(tmp_path / "other")).failed
            create_study(StudySpec(name="L-Eval human evaluation", status="open"))
        other_runner = other.test_cli_runner()
        imported = run(other_runner, "import-annotations", str(scores))
        assert imported.exit_code == 0, imported.output
        again, second = tmp_path / "again.jsonl", tmp_path / "second.json"
        assert run(other_runner, "export", "--format", "jsonl", "--out", str(again)).exit_code == 0
        assert run(other_runner, "export", "--format", "results", "--out", str(second)).exit_code == 0
    ids = {(row["document_id"], row["question_id"]) for row in read_jsonl(scores)}
    assert ids.isdisjoint((row["document_id"], row["question_id"]) for row in read_jsonl(again))
    before, after = (_intervals(json.loads(path.read_text(encoding="utf-8"))) for path in (first, second))
    assert len(before) >= 10 and any(low is not None for low, _ in before.values())
    assert after == before
