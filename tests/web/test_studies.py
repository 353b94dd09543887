"""Studies: blinding an annotator cannot break, pinned answer versions, hidden references, overlap,
isolation between studies and from the demo, deletion that keeps scores safe, and the study commands."""
from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import zlib
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import (
    AnnotationRound, Answer, Prediction, QuestionView, Score, Study, StudyAnswer, StudyAssignment, System, User,
)
from app.services.accounts import create_user
from app.services.importers import import_path
from app.services.results import analyse
from app.services.studies.setup import StudySpec, create_study, set_status, set_systems
from tests.conftest import PASSWORDS, AuthActions
from tests.support.scoring_helpers import ANSWERS_RE, post_score
from tests.support.study_data import SYSTEMS, replace_answer, write_study_set

QUESTION_LINK_RE = re.compile(r'href="/annotate/(\d+)/q/(\d+)"')


def signed_in(app, username: str, password: str):
    client = app.test_client()
    auth = AuthActions(client)
    assert auth.login(username, password).status_code == 302
    return client, auth


def make_study(app, folder, name="Visitors", **spec) -> int:
    with app.app_context():
        assert not import_path(folder).failed
        return create_study(StudySpec(name=name, status="open", **spec)).id


def page_answers(client, study_id: int, question_id: int) -> tuple[str, dict[str, str]]:
    page = client.get(f"/annotate/{study_id}/q/{question_id}").get_data(as_text=True)
    return page, dict(ANSWERS_RE.findall(page))


def questions_of(client, study_id: int) -> list[int]:
    page = client.get(f"/annotate/{study_id}/done").get_data(as_text=True)
    return sorted({int(q) for s, q in QUESTION_LINK_RE.findall(page) if int(s) == study_id})


# --- blinding -----------------------------------------------------------------------------------------


def _session_user_id(client) -> int:
    """Read the annotator's own id out of the signed (not encrypted) session cookie, as an attacker would."""
    cookie = client.get_cookie("session").value
    compressed = cookie.startswith(".")
    payload = cookie.lstrip(".").split(".")[0]
    data = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    if compressed:
        data = zlib.decompress(data)
    return int(json.loads(data)["_user_id"].partition(".")[0])  # "<id>.<session version>"


def _old_seeded_guess(annotator_id: int, round_number: int, question_id: int, ids: list[int]) -> list[int]:
    """The order the first version drew: random.Random(sha256("leval-blind:…")) over ids sorted ascending."""
    digest = hashlib.sha256(f"leval-blind:{annotator_id}:{round_number}:{question_id}".encode()).digest()
    ordered = sorted(ids)
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(ordered)
    return ordered


def test_an_annotator_reading_everything_guesses_no_better_than_chance(app, tmp_path):
    folder = write_study_set(tmp_path / "data", documents=6, questions_each=10)
    study_id = make_study(app, folder)
    with app.app_context():
        create_user("eve", "eve-pass-12345", "annotator")
        ids = {name: sid for sid, name in db.session.execute(select(System.id, System.name))}
        # Prediction ids follow the import order, as the audit found: sorted ids give the systems' import order.
        by_question = defaultdict(dict)
        for pid, sid, qid in db.session.execute(select(Prediction.id, Prediction.system_id, Prediction.question_id)):
            by_question[qid][pid] = sid
    client, _ = signed_in(app, "eve", "eve-pass-12345")
    own_id = _session_user_id(client)
    guesses = {"old seeded order": 0, "same rank as question 1": 0, "import order": 0}
    total = 0
    learned: dict[str, int] | None = None
    truth_of: dict[tuple[int, str], int] = {}
    questions = questions_of(client, study_id)
    assert len(questions) == 60
    for question_id in questions:
        page, shown = page_answers(client, study_id, question_id)
        assert "north-1b" not in page and "Prediction" not in page
        with app.app_context():
            view = db.session.scalars(select(QuestionView).join(AnnotationRound).where(
                QuestionView.question_id == question_id, AnnotationRound.annotator_id == own_id)).one()
            slot_system = dict(db.session.execute(select(StudyAnswer.id, StudyAnswer.system_id)
                                                  .where(StudyAnswer.id.in_(view.order))).all())
        truth = {label: slot_system[slot] for label, slot in zip("ABCD", view.order)}
        predictions = sorted(by_question[question_id])
        old = _old_seeded_guess(own_id, 1, question_id, predictions)
        old_guess = {label: by_question[question_id][pid] for label, pid in zip("ABCD", old)}
        import_guess = {label: by_question[question_id][pid] for label, pid in zip("ABCD", predictions)}
        if learned is None:
            learned = truth  # suppose the attacker found out the mapping on one question
            continue
        for label in shown:
            total += 1
            guesses["old seeded order"] += old_guess[label] == truth[label]
            guesses["same rank as question 1"] += learned[label] == truth[label]
            guesses["import order"] += import_guess[label] == truth[label]
            truth_of[(question_id, label)] = truth[label]
    assert total == 59 * 4
    chance, spread = total / 4, (total * 0.25 * 0.75) ** 0.5
    for attack, right in guesses.items():
        assert right < chance + 4 * spread, f"{attack}: {right} of {total} right, chance {chance:.0f}"
    # Labels do not keep a system: across questions each label meets every system.
    per_label = defaultdict(Counter)
    for (question_id, label), system in truth_of.items():
        per_label[label][system] += 1
    assert all(len(systems) == len(ids) for systems in per_label.values())


def test_nothing_the_annotator_receives_names_a_prediction_or_user_id(demo):
    with demo.app_context():
        prediction_ids = set(db.session.scalars(select(Prediction.id)))
        answer_ids = set(db.session.scalars(select(Answer.id)))
    client, auth = signed_in(demo, "annotator", PASSWORDS["annotator"])
    page = client.get("/annotate/", follow_redirects=True).get_data(as_text=True)
    for attribute in ("data-prediction", "data-answer-id", "data-system", "data-user-id"):
        assert attribute not in page
    saved = post_score(client, auth.token(), question_id=int(re.search(r'data-question-id="(\d+)"', page).group(1)),
                       label="A", value=3).get_json()
    assert set(saved) == {"saved", "changed", "label", "value", "comment", "saved_at", "progress", "question"}
    assert prediction_ids and answer_ids  # the ids exist, the pages just never carry them


# --- pinned answers: the replace scenario ------------------------------------------------------------------


def test_a_replaced_answer_never_carries_a_score_given_to_the_old_text(app, tmp_path, runner):
    folder = write_study_set(tmp_path / "data", documents=1, questions_each=3)
    study_id = make_study(app, folder)
    with app.app_context():
        create_user("ann", "ann-pass-12345", "annotator")
    client, auth = signed_in(app, "ann", "ann-pass-12345")
    question_id = questions_of(client, study_id)[0]
    page, shown = page_answers(client, study_id, question_id)
    with app.app_context():
        slot = dict(db.session.execute(select(Answer.sha256, System.name).join(System)).all())
    label = next(label for label, sha in shown.items() if slot[sha] == "east-2b")
    old_sha = shown[label]
    assert post_score(client, auth.token(), study=study_id, question_id=question_id, label=label, value=3,
                      answer=old_sha).status_code == 200
    before = _results(app, study_id)

    # An upload with "replace what differs" changes the answer that was scored.
    new_text = "east-2b now says the keeper counted nobody at all."
    with app.app_context():
        report = import_path(replace_answer(folder, "east-2b", 0, new_text), replace=True)
        assert report.files[0].counts["replaced"] == 1
        current = db.session.scalars(select(Prediction).join(System).where(System.name == "east-2b")
                                     .order_by(Prediction.question_id)).first()
        assert current.text == new_text
    # The study keeps showing the version that was scored, with its score.
    page, shown_now = page_answers(client, study_id, question_id)
    assert shown_now == shown and new_text not in page
    assert re.search(rf'id="answer-{label}".*?Scored 3', page, re.S)
    assert _results(app, study_id) == before
    rows = _export(runner, study_id)
    assert [(r["system"], r["answer_sha256"], r["stale"], r["answer_version"]) for r in rows] == [
        ("east-2b", old_sha, False, 1)]

    # The researcher moves the study on: the screen says what goes stale.
    confirm = _staff(app).get(f"/studies/{study_id}/pin/{_system_id(app, 'east-2b')}").get_data(as_text=True)
    assert re.search(r'data-field="stale">1<', confirm) and re.search(r'data-field="moved">1<', confirm)
    pinned = runner.invoke(args=["study", "pin", "Visitors", "--system", "east-2b", "--latest"])
    assert pinned.exit_code == 0 and "1 score(s) become stale" in pinned.output
    page, shown_after = page_answers(client, study_id, question_id)
    assert new_text in page and shown_after[label] != old_sha
    assert not re.search(rf'id="answer-{label}".*?Scored 3', page, re.S)  # the new text waits for a score
    stale_save = post_score(client, auth.token(), study=study_id, question_id=question_id, label=label, value=5,
                            answer=old_sha)
    assert stale_save.status_code == 409 and stale_save.get_json()["reload"] is True
    results = _results(app, study_id)
    assert results["n_scores"] == 0
    with app.app_context():
        with_stale = analyse(study_id, include_stale=True)
        assert with_stale["n_scores"] == 1 and with_stale["n_stale"] == 1
    rows = _export(runner, study_id)
    assert [(r["answer_sha256"], r["stale"], r["score"]) for r in rows] == [(old_sha, True, 3)]
    # The new version is queued for the annotator: their round counts it as still to do.
    done = client.get(f"/annotate/{study_id}/done").get_data(as_text=True)
    assert "0 of 12" in done or "Not finished yet" in done


def _results(app, study_id: int) -> dict:
    with app.app_context():
        data = analyse(study_id)
        return {"n_scores": data["n_scores"], "systems": data["systems"]}


def _export(runner, study_id: int) -> list[dict]:
    result = runner.invoke(args=["export", "--format", "jsonl", "--rounds", "all", "--study-id", str(study_id),
                                 "--out", "-"])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def _staff(app):
    client, _ = signed_in(app, "researcher", PASSWORDS["researcher"])
    return client


def _system_id(app, name: str) -> int:
    with app.app_context():
        return db.session.scalar(select(System.id).where(System.name == name))


# --- references that give an answer away -----------------------------------------------------------------


def test_references_an_answer_repeats_are_hidden_on_that_question(app, tmp_path):
    folder = write_study_set(tmp_path / "data", documents=1, questions_each=4, copies_gpt4="east-2b",
                             near_claude="south-3b")
    study_id = make_study(app, folder)
    staff = _staff(app)
    page = staff.get(f"/studies/{study_id}").get_data(as_text=True)
    assert re.search(r'data-system="east-2b".*?GPT-4-32k reference: identical: 4', page, re.S)
    assert re.search(r'data-system="south-3b".*?Claude-100k reference: near-identical: 4', page, re.S)
    assert "GPT-4-32k reference on 4 question(s)" in page and "Claude-100k reference on 4 question(s)" in page
    client, _ = signed_in(app, "annotator", PASSWORDS["annotator"])
    for question_id in questions_of(client, study_id):
        shown, _ = page_answers(client, study_id, question_id)
        assert "Human reference" in shown
        assert "GPT-4-32k reference" not in shown and "Claude-100k reference" not in shown
        assert "2 references hidden on this question" in shown
    # Show them anyway, or leave the systems out: the researcher's choice.
    token = AuthActions(staff).token()
    staff.post(f"/studies/{study_id}/references", data={"reference": ["human", "gpt4-32k", "claude-100k"],
                                                         "policy": "show", "csrf_token": token})
    shown, answers = page_answers(client, study_id, questions_of(client, study_id)[0])
    assert "GPT-4-32k reference" in shown and len(answers) == 4
    staff.post(f"/studies/{study_id}/references", data={"reference": ["human", "gpt4-32k", "claude-100k"],
                                                         "policy": "exclude", "csrf_token": token})
    shown, answers = page_answers(client, study_id, questions_of(client, study_id)[0])
    assert "GPT-4-32k reference" in shown and len(answers) == 2
    with app.app_context():
        left = set(db.session.scalars(select(System.name).join(StudyAnswer, StudyAnswer.system_id == System.id)
                                      .where(StudyAnswer.excluded.is_(False))))
        assert left == {"north-1b", "west-4b"}


def test_identical_answers_across_systems_are_reported(app, tmp_path):
    folder = write_study_set(tmp_path / "data", documents=1, questions_each=2, copies_gpt4="east-2b")
    rows = [json.loads(line) for line in (folder / "east-2b.pred.jsonl").read_text().splitlines()]
    for row in rows:
        row["west-4b_pred"] = row.pop("east-2b_pred")
    (folder / "west-4b.pred.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    study_id = make_study(app, folder)
    page = _staff(app).get(f"/studies/{study_id}").get_data(as_text=True)
    assert "Identical answers across systems: 2 question(s)" in page and "east-2b, west-4b" in page


# --- overlap -----------------------------------------------------------------------------------------------


def test_overlap_two_of_three_annotators_shares_every_answer_evenly(app, tmp_path):
    folder = write_study_set(tmp_path / "data", documents=3, questions_each=4)
    with app.app_context():
        people = [create_user(name, f"{name}-pass-12345", "annotator").id for name in ("ada", "ben", "cai")]
    study_id = make_study(app, folder, annotator_ids=people, overlap=2)
    with app.app_context():
        assignments = db.session.execute(select(StudyAssignment.question_id, StudyAssignment.user_id)).all()
        per_question = Counter(question for question, _ in assignments)
        per_person = Counter(user for _, user in assignments)
    assert len(per_question) == 12 and set(per_question.values()) == {2}
    assert sorted(per_person.values()) == [8, 8, 8]
    seen = {}
    for name in ("ada", "ben", "cai"):
        client, _ = signed_in(app, name, f"{name}-pass-12345")
        seen[name] = questions_of(client, study_id)
        assert len(seen[name]) == 8
        assert f"0 of {8 * 4}" in client.get(f"/annotate/{study_id}/done").get_data(as_text=True)
    outsider, _ = signed_in(app, "annotator", PASSWORDS["annotator"])
    assert outsider.get(f"/annotate/{study_id}/").status_code == 404  # not one of the study's annotators
    page = _staff(app).get(f"/studies/{study_id}").get_data(as_text=True)
    assert page.count('data-field="coverage">0 of 2') == 12


def test_a_save_reports_progress_over_the_annotators_own_shown_answers(app, tmp_path):
    """With overlap only the assigned questions count, and the answers of a system taken out count nowhere."""
    folder = write_study_set(tmp_path / "data", documents=3, questions_each=4)
    with app.app_context():
        people = [create_user(name, f"{name}-pass-12345", "annotator").id for name in ("ada", "ben", "cai")]
    study_id = make_study(app, folder, annotator_ids=people, overlap=2)
    client, auth = signed_in(app, "ada", "ada-pass-12345")
    first, second = questions_of(client, study_id)[:2]
    client.study_id = study_id  # the study post_score saves in and reads the shown answers of
    token = auth.token()

    def save(question_id: int, label: str, value: int) -> tuple[int, int, int, int]:
        """(done, total, scored on the question, answers on the question) as the save reports them."""
        response = post_score(client, token, question_id=question_id, label=label, value=value)
        assert response.status_code == 200, response.get_json()
        body = response.get_json()
        return body["progress"]["done"], body["progress"]["total"], body["question"]["scored"], body["question"]["total"]

    # The system behind A on the first question is taken out later; on the second question, its
    # answer (`gone`) and another one (`kept`) are scored first.
    with app.app_context():
        system_of = dict(db.session.execute(select(Answer.sha256, Answer.system_id)
                                            .where(Answer.question_id.in_([first, second]))).all())
    leaving = system_of[page_answers(client, study_id, first)[1]["A"]]
    by_system = {system_of[sha]: label for label, sha in page_answers(client, study_id, second)[1].items()}
    gone, kept = by_system[leaving], next(label for system, label in by_system.items() if system != leaving)

    assert save(first, "A", 4) == (1, 32, 1, 4)
    assert save(first, "B", 2) == (2, 32, 2, 4)
    assert save(first, "B", 3) == (2, 32, 2, 4)  # a changed score is not another one
    assert save(second, kept, 5) == (3, 32, 1, 4)
    assert save(second, gone, 1) == (4, 32, 2, 4)
    with app.app_context():
        study = db.session.get(Study, study_id)
        set_systems(study, [s for s in db.session.scalars(select(System.id)) if s != leaving])
        db.session.commit()
    # Each of ada's 8 questions has 3 answers left. Done: B and C here, `kept` on the second question.
    assert save(first, "C", 1) == (3, 24, 2, 3)
    assert "3 of 24" in client.get(f"/annotate/{study_id}/done").get_data(as_text=True)


def test_overlap_without_enough_annotators_is_refused(app, tmp_path):
    folder = write_study_set(tmp_path / "data", documents=1, questions_each=2)
    with app.app_context():
        assert not import_path(folder).failed
        one = create_user("solo", "solo-pass-12345", "annotator").id
        from app.services.studies.setup import StudyError

        with pytest.raises(StudyError, match="between 1 and the number of annotators"):
            create_study(StudySpec(name="Too few", annotator_ids=[one], overlap=2))
        with pytest.raises(StudyError, match="needs the study's annotators"):
            create_study(StudySpec(name="Nobody", overlap=1))


# --- isolation -------------------------------------------------------------------------------------------


def test_two_studies_on_the_same_systems_keep_their_scores_apart(demo, runner):
    with demo.app_context():
        demo_study = db.session.scalars(select(Study)).one()
        # Over the demo's own data, so it belongs with the demo (a real study would hide the demo).
        second = create_study(StudySpec(name="Second look", question_ids=None, status="open", is_demo=True,
                                        system_ids=list(db.session.scalars(select(System.id)))))
        assert second.id != demo_study.id
    client, auth = signed_in(demo, "annotator", PASSWORDS["annotator"])
    assert "Second look" in client.get("/annotate/").get_data(as_text=True)  # two open studies: a choice
    question = questions_of(client, demo_study.id)[0]
    _, shown = page_answers(client, demo_study.id, question)
    for label, sha in shown.items():
        assert post_score(client, auth.token(), study=demo_study.id, question_id=question, label=label, value=2,
                          answer=sha).status_code == 200
    with demo.app_context():
        assert analyse(demo_study.id)["n_scores"] == 4
        assert analyse(second.id)["n_scores"] == 0
    assert len(_export(runner, demo_study.id)) == 4 and _export(runner, second.id) == []
    # The same question of the other study is unscored, with its own blind order.
    assert "0 of 40" in client.get(f"/annotate/{second.id}/done").get_data(as_text=True)


def test_a_closed_study_disappears_for_annotators(demo):
    with demo.app_context():
        study = db.session.scalars(select(Study)).one()
        set_status(study, "closed")
        db.session.commit()
        study_id = study.id
    client, _ = signed_in(demo, "annotator", PASSWORDS["annotator"])
    assert "No study is open for you" in client.get("/annotate/").get_data(as_text=True)
    assert client.get(f"/annotate/{study_id}/").status_code == 404


# --- the demo, deletion ------------------------------------------------------------------------------------


def test_the_demo_is_only_loaded_into_an_empty_database(app, tmp_path, monkeypatch):
    from app.cli.serve import bootstrap, demo_wanted

    folder = write_study_set(tmp_path / "data", documents=1, questions_each=2)
    with app.app_context():
        assert not import_path(folder).failed
        bootstrap(load_demo=True)
        assert db.session.scalar(select(func.count()).select_from(Study).where(Study.is_demo.is_(True))) == 0
    monkeypatch.setenv("LEVAL_DEMO", "0")
    assert demo_wanted(False) is False
    monkeypatch.delenv("LEVAL_DEMO")
    assert demo_wanted(True) is False and demo_wanted(False) is True


def test_deleting_a_scored_system_needs_force_and_exports_the_scores_first(demo, runner):
    client, auth = signed_in(demo, "annotator", PASSWORDS["annotator"])
    with demo.app_context():
        study_id = db.session.scalar(select(Study.id))
    question = questions_of(client, study_id)[0]
    for label in "ABCD":
        assert post_score(client, auth.token(), question_id=question, label=label, value=4).status_code == 200
    refused = runner.invoke(args=["delete-system", "terse-13b", "--yes"])
    assert refused.exit_code != 0 and "1 human score(s)" in refused.output and "--force" in refused.output
    done = runner.invoke(args=["delete-system", "terse-13b", "--yes", "--force"])
    assert done.exit_code == 0, done.output
    saved = next(Path(demo.instance_path, "deleted").glob("system-terse-13b-*.jsonl"))
    rows = [json.loads(line) for line in saved.read_text(encoding="utf-8").splitlines()]
    assert [(r["system"], r["score"], r["annotator"]) for r in rows] == [("terse-13b", 4, "annotator")]
    with demo.app_context():
        assert db.session.scalar(select(func.count(Score.id))) == 3  # the other systems' scores stay
        assert db.session.scalar(select(System.id).where(System.name == "terse-13b")) is None


def test_deleting_the_demo_from_the_web_says_what_goes(demo):
    staff = _staff(demo)
    confirm = staff.get("/studies/demo/delete").get_data(as_text=True)
    # The demo holds the L-Eval and the LV-Eval demo sets.
    assert "1 studies, 8 systems, 60 documents" in confirm and "0 human score(s)" in confirm
    token = AuthActions(staff).token()
    done = staff.post("/studies/demo/delete", data={"csrf_token": token}, follow_redirects=True)
    assert "Deleted the demo data set." in done.get_data(as_text=True)
    with demo.app_context():
        assert db.session.scalar(select(func.count(Study.id))) == 0
        assert db.session.scalar(select(func.count(System.id))) == 0
        assert db.session.scalar(select(func.count(User.id))) == 3  # accounts are not demo data


# --- the study commands ---------------------------------------------------------------------------------------


def test_study_commands_create_show_open_close_and_list(app, tmp_path, runner):
    folder = write_study_set(tmp_path / "data", documents=1, questions_each=3)
    with app.app_context():
        assert not import_path(folder).failed
        for name in ("x1", "x2", "x3"):
            create_user(name, f"{name}-pass-12345", "annotator")
    created = runner.invoke(args=["study", "create", "Pilot", "--questions", "human_eval", "--systems",
                                  "north-1b,east-2b,south-3b", "--overlap", "2", "--annotators", "x1,x2,x3"])
    assert created.exit_code == 0, created.output
    shown = json.loads(runner.invoke(args=["study", "show", "Pilot", "--json"]).stdout)
    assert shown["status"] == "draft" and shown["overlap"] == 2 and shown["questions"] == 3
    assert [s["name"] for s in shown["systems"] if s["in_study"]] == ["east-2b", "north-1b", "south-3b"]
    assert shown["annotators"] == ["x1", "x2", "x3"]
    assert runner.invoke(args=["study", "open", "Pilot"]).exit_code == 0
    listed = json.loads(runner.invoke(args=["study", "list", "--json"]).stdout)
    assert [(s["name"], s["status"], s["answers"]) for s in listed] == [("Pilot", "open", 9)]
    assert runner.invoke(args=["study", "close", "Pilot"]).exit_code == 0
    bad = runner.invoke(args=["study", "create", "Pilot"])
    assert bad.exit_code != 0 and "already exists" in bad.output
    unknown = runner.invoke(args=["study", "create", "Other", "--systems", "nope"])
    assert unknown.exit_code != 0 and "no system named nope" in unknown.output
    assert set(SYSTEMS) >= {"north-1b"}


def test_a_new_study_leaves_the_demo_out(demo, tmp_path):
    folder = write_study_set(tmp_path / "data", documents=1, questions_each=3)
    with demo.app_context():
        assert not import_path(folder).failed
        study = create_study(StudySpec(name="Real"))
        from app.models import Document, Question, StudyQuestion

        questions = db.session.execute(select(Document.is_demo).join(Question, Question.document_id == Document.id)
                                       .join(StudyQuestion, StudyQuestion.question_id == Question.id)
                                       .where(StudyQuestion.study_id == study.id)).scalars().all()
        systems = set(db.session.scalars(select(System.name).join(StudyAnswer, StudyAnswer.system_id == System.id)
                                         .where(StudyAnswer.study_id == study.id)))
    assert questions == [False, False, False] and systems == set(SYSTEMS)


# --- text the database cannot store ---------------------------------------------------------------------------


@pytest.mark.parametrize("field, value, message", [
    ("name", "Bad\x00name", "is not allowed: a study name has 1 to 120 characters, no control characters"),
    ("name", "n" * 121, "is not allowed: a study name has 1 to 120 characters, no control characters"),
    ("name", "a/b", "is not allowed: a study name has 1 to 120 characters"),
    ("description", "About\x00this", "The description contains a NUL character (\\u0000)"),
    ("overlap", "²", "Overlap must be blank (everyone) or a whole number of at least 1."),  # isdigit(): was a 500
    ("questions", "ids:¹", "ids: takes question ids separated by commas"),
])
def test_the_new_study_form_refuses_text_the_database_cannot_store(demo, field, value, message):
    staff = _staff(demo)
    with demo.app_context():
        before = db.session.scalar(select(func.count(Study.id)))
    form = {"csrf_token": AuthActions(staff).token(), "name": "Stored nowhere", "description": "", "questions": "demo",
            field: value}
    response = staff.post("/studies/new", data=form)
    assert response.status_code == 400
    assert message in response.get_data(as_text=True)
    with demo.app_context():
        assert db.session.scalar(select(func.count(Study.id))) == before
