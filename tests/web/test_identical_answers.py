"""Identical answers from two or more systems (issue 40, item 4): shown once on the annotator's page, the one
score recorded for each system as such, counted once per system, said by the exports, and told to nobody
on the annotator's side; the study option, on by default and off on request."""
from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import Answer, Score, ScoreRevision, Study, StudyAnswer, System
from app.services.accounts import create_user
from app.services.exports import export_text
from app.services.exports.importer import import_annotations
from app.services.importers import import_path
from app.services.studies.setup import StudyError, StudySpec, create_study, set_merge_identical
from tests.conftest import AuthActions
from tests.support.scoring_helpers import ANSWERS_RE, post_score
from tests.support.study_data import write_study_set

PASSWORD = "annotate-pass-789"
NORTH, EAST, SOUTH, WEST = "north-1b", "east-2b", "south-3b", "west-4b"
CHINESE = "灯塔的看守人记下了十四位访客。\n\n他说：那天风很大。"


def rewrite(folder, system: str, index: int, text: str) -> None:
    path = folder / f"{system}.pred.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows[index][f"{system}_pred"] = text
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def answer_of(folder, system: str, index: int) -> str:
    lines = (folder / f"{system}.pred.jsonl").read_text(encoding="utf-8").splitlines()
    return json.loads(lines[index])[f"{system}_pred"]


@pytest.fixture
def twins_data(tmp_path):
    """Six questions, four systems. Question 0: east repeats north's answer with other layout habits (CRLF,
    a leading BOM and space, a no-break space, trailing spaces and CRLF). Question 1: north, east and south give one Chinese answer (south with a zero-width
    space and more blank lines). Question 2: east changes one word of north's: not identical."""
    folder = write_study_set(tmp_path / "set", documents=2, questions_each=3)
    rewrite(folder, EAST, 0, "\ufeff " + answer_of(folder, NORTH, 0).replace(" ", "\u00a0", 1) + "  \r\n")
    rewrite(folder, NORTH, 1, CHINESE)
    rewrite(folder, EAST, 1, CHINESE.replace("\n", "\r\n"))
    rewrite(folder, SOUTH, 1, CHINESE.replace("访客", "访\u200b客").replace("\n\n", "\n\n\n\n"))
    rewrite(folder, EAST, 2, answer_of(folder, NORTH, 2).replace("Roughly", "About"))
    return folder


def make_study(app, folder, **spec) -> int:
    with app.app_context():
        assert not import_path(folder).failed
        for name in ("ann1", "ann2"):
            create_user(name, PASSWORD, "annotator")
        return create_study(StudySpec(name="Twins", status="open", **spec)).id


def signed_in(app, username: str):
    client = app.test_client()
    auth = AuthActions(client)
    assert auth.login(username, PASSWORD).status_code == 302
    return client, auth


def question_ids(app, study_id: int) -> list[int]:
    with app.app_context():
        from app.models import StudyQuestion

        return list(db.session.scalars(select(StudyQuestion.question_id).where(StudyQuestion.study_id == study_id)
                                       .order_by(StudyQuestion.position)))


def labels(client, study_id: int, question_id: int) -> tuple[str, dict[str, str]]:
    page = client.get(f"/annotate/{study_id}/q/{question_id}").get_data(as_text=True)
    return page, dict(ANSWERS_RE.findall(page))


def scores_by_system(app, question_id: int) -> dict[str, tuple[int | None, str, bool]]:
    with app.app_context():
        rows = db.session.execute(select(System.name, Score.value, Score.comment, Score.copied_from_id).join(
            Answer, Answer.id == Score.answer_id).join(System, System.id == Answer.system_id)
            .where(Answer.question_id == question_id)).all()
    return {name: (value, comment, source is not None) for name, value, comment, source in rows}


def test_identical_answers_are_shown_once_and_the_score_is_recorded_for_each_system(app, twins_data):
    study_id = make_study(app, twins_data)
    q0, q1, q2, *rest = question_ids(app, study_id)
    client, auth = signed_in(app, "ann1")
    token = auth.token()
    _, shown = labels(client, study_id, q0)
    assert sorted(shown) == ["A", "B", "C"]  # north and east once
    assert sorted(labels(client, study_id, q1)[1]) == ["A", "B"]  # north, east and south once (Chinese)
    assert sorted(labels(client, study_id, q2)[1]) == ["A", "B", "C", "D"]  # one word apart: both shown
    total = 24 - 1 - 2
    for label in shown:
        response = post_score(client, token, study=study_id, question_id=q0, label=label, value=4, comment="同上")
        assert response.status_code == 200, response.get_json()
    assert response.get_json()["progress"] == {"done": 3, "total": total}
    assert response.get_json()["question"] == {"scored": 3, "total": 3}
    scores = scores_by_system(app, q0)
    assert set(scores) == {NORTH, EAST, SOUTH, WEST}  # four systems, three answers scored
    assert scores[NORTH][:2] == scores[EAST][:2] == (4, "同上")
    assert [scores[NORTH][2], scores[EAST][2]].count(True) == 1  # one given, one recorded from it
    # A change and a clear reach the copy; each is a revision of both rows.
    with app.app_context():
        shared_sha = db.session.scalar(select(Answer.sha256).join(StudyAnswer, StudyAnswer.answer_id == Answer.id)
                                       .join(System, System.id == Answer.system_id).where(
            StudyAnswer.question_id == q0, StudyAnswer.twin_of_id.is_(None), System.name.in_((NORTH, EAST))))
    twin_label = next(label for label, sha in shown.items() if sha == shared_sha)
    assert post_score(client, token, study=study_id, question_id=q0, label=twin_label, value=2,
                      comment="").get_json()["changed"]
    assert scores_by_system(app, q0)[NORTH][:2] == scores_by_system(app, q0)[EAST][:2] == (2, "")
    cleared = post_score(client, token, study=study_id, question_id=q0, label=twin_label, clear=True)
    assert cleared.get_json()["progress"]["done"] == 2
    assert scores_by_system(app, q0)[NORTH][0] is None and scores_by_system(app, q0)[EAST][0] is None
    with app.app_context():
        copy = db.session.scalars(select(Score).where(Score.copied_from_id.is_not(None))).one()
        assert [r.new_value for r in db.session.scalars(select(ScoreRevision).where(
            ScoreRevision.score_id == copy.id).order_by(ScoreRevision.id))] == [4, 2, None]
    # The Chinese group: three systems, one score.
    _, shown = labels(client, study_id, q1)
    for label in shown:
        post_score(client, token, study=study_id, question_id=q1, label=label, value=5)
    scores = scores_by_system(app, q1)
    assert [scores[name][0] for name in (NORTH, EAST, SOUTH, WEST)] == [5, 5, 5, 5]
    assert sorted(flag for *_, flag in scores.values()) == [False, False, True, True]


def test_results_count_the_score_once_per_system_and_the_exports_say_so(app, twins_data, tmp_path):
    study_id = make_study(app, twins_data)
    q0 = question_ids(app, study_id)[0]
    for index, name in enumerate(("ann1", "ann2")):
        client, auth = signed_in(app, name)
        for question_id in question_ids(app, study_id):
            _, shown = labels(client, study_id, question_id)
            for label in shown:
                assert post_score(client, auth.token(), study=study_id, question_id=question_id, label=label,
                                  value=1 + (index + ord(label)) % 5).status_code == 200
    with app.app_context():
        from app.services.results import full_results

        results = full_results(study_id, n_resamples=20)
        per_system = {row["system"]: row["n_scores"] for row in results["views"]["all"]["systems"]}
        assert per_system == {NORTH: 12, EAST: 12, SOUTH: 12, WEST: 12}  # 6 questions x 2 annotators each
        assert results["identical_answers"]["shown_once"] is True
        assert results["identical_answers"]["answers_shown_through_another"] == 3
        assert results["identical_answers"]["questions"] == 2
        jsonl = export_text("jsonl", study_id)
        rows = [json.loads(line) for line in jsonl.splitlines()]
        assert len(rows) == 48
        on_q0 = {(r["annotator"], r["system"]): r["shown_once_for"] for r in rows if r["question_id"] == q0}
        assert on_q0[("ann1", NORTH)] == on_q0[("ann1", EAST)] == f"{EAST}; {NORTH}"
        assert on_q0[("ann1", SOUTH)] == ""
        assert sum(1 for r in rows if r["shown_once_for"] == f"{EAST}; {NORTH}; {SOUTH}") == 6
        header = export_text("csv", study_id).splitlines()[0]
        assert header.endswith(",shown_once_for")
        # Read back into a fresh study of the same answers: the same rows, grouped the same way.
        path = tmp_path / "scores.jsonl"
        path.write_text(jsonl, encoding="utf-8")
        other = create_study(StudySpec(name="Twins again", status="open"))
        report = import_annotations(path, other.id)
        assert report.error is None and report.created == 48
        again = [json.loads(line) for line in export_text("jsonl", other.id).splitlines()]
        for before, after in zip(rows, again):
            assert {**before, "study": "Twins again"} == after
        assert len(again) == len(rows)


def test_the_annotator_is_not_told_that_an_answer_stands_for_several_systems(app, twins_data):
    """Blinding: beyond a question having fewer answers (as when a system gives none), nothing in what the
    browser receives says that an answer is shared, or by whom."""
    study_id = make_study(app, twins_data)
    q0, q1, q2, *_ = question_ids(app, study_id)
    client, auth = signed_in(app, "ann1")
    seen = []
    for question_id in (q0, q1, q2):
        page, shown = labels(client, study_id, question_id)
        seen.append(page)
        for label in shown:
            response = post_score(client, auth.token(), study=study_id, question_id=question_id, label=label,
                                  value=3)
            seen.append(response.get_data(as_text=True))
            assert set(response.get_json()) == {"saved", "changed", "label", "value", "comment", "saved_at",
                                                "progress", "question"}
    seen.append(client.get(f"/annotate/{study_id}/done").get_data(as_text=True))
    everything = "\n".join(seen).lower()
    for word in ("identical", "same answer", "shown once", "twin", "several systems", "shown_once", "copied",
                 NORTH, EAST, SOUTH, WEST):
        assert word not in everything, word
    with app.app_context():  # the page's hash is the shown slot's own text's, as without the option
        shown_sha = set(ANSWERS_RE.findall(seen[0]))
        stored = set(db.session.scalars(select(Answer.sha256).join(StudyAnswer, StudyAnswer.answer_id == Answer.id)
                                        .where(StudyAnswer.question_id == q0, StudyAnswer.twin_of_id.is_(None))))
        assert {sha for _, sha in shown_sha} == stored


def test_the_option_is_on_by_default_and_off_shows_them_apart_until_the_first_score(app, twins_data, runner):
    study_id = make_study(app, twins_data, merge_identical=False)
    q0 = question_ids(app, study_id)[0]
    client, auth = signed_in(app, "ann1")
    assert sorted(labels(client, study_id, q0)[1]) == ["A", "B", "C", "D"]
    result = runner.invoke(args=["study", "identical", "Twins", "once"])
    assert result.exit_code == 0 and "3 answer(s) through another" in result.output
    _, shown = labels(client, study_id, q0)
    assert len(shown) == 3 and set(shown) < {"A", "B", "C", "D"}  # labels seen keep their places
    assert post_score(client, auth.token(), study=study_id, question_id=q0, label=min(shown), value=3).status_code == 200
    with app.app_context():
        study = db.session.get(Study, study_id)
        with pytest.raises(StudyError, match="only before the first one"):
            set_merge_identical(study, False)
        db.session.rollback()
    result = runner.invoke(args=["study", "create", "Default", "--questions", f"study:{study_id}"])
    assert result.exit_code == 0, result.output
    with app.app_context():
        assert db.session.scalar(select(Study.merge_identical).where(Study.name == "Default")) is True
        assert db.session.scalar(select(func.count(StudyAnswer.id)).join(Study, Study.id == StudyAnswer.study_id)
                                 .where(Study.name == "Default", StudyAnswer.twin_of_id.is_not(None))) == 3


def test_an_answer_moving_to_a_text_another_system_gave_takes_its_given_score(app, twins_data, tmp_path, runner):
    study_id = make_study(app, twins_data)
    q2 = question_ids(app, study_id)[2]
    client, auth = signed_in(app, "ann1")
    _, shown = labels(client, study_id, q2)
    for label in shown:
        post_score(client, auth.token(), study=study_id, question_id=q2, label=label, value=2 + "ABCD".index(label))
    north = scores_by_system(app, q2)[NORTH][0]
    # east-2b's new version repeats north-1b's answer to question 2 word for word.
    new = tmp_path / "v2"
    new.mkdir()
    (new / f"{EAST}.pred.jsonl").write_text((twins_data / f"{EAST}.pred.jsonl").read_text(encoding="utf-8"),
                                            encoding="utf-8")
    rewrite(new, EAST, 2, answer_of(twins_data, NORTH, 2))
    with app.app_context():
        assert not import_path(new, replace=True).failed
    result = runner.invoke(args=["study", "pin", "Twins", "--system", EAST, "--latest"])
    assert result.exit_code == 0, result.output
    _, shown = labels(client, study_id, q2)
    assert len(shown) == 3
    scores = scores_by_system(app, q2)
    with app.app_context():
        current = db.session.scalars(select(Score).join(Answer, Answer.id == Score.answer_id).join(
            StudyAnswer, StudyAnswer.answer_id == Answer.id).join(System, System.id == Answer.system_id).where(
            System.name == EAST, StudyAnswer.question_id == q2)).one()
        assert current.value == north and current.copied_from_id is not None
    assert scores[EAST][0] == north
    done = client.get(f"/annotate/{study_id}/done").get_data(as_text=True)
    assert "<strong>3 of 20</strong>" in done  # the answers the page shows: 24 less the 4 shown through another


def test_the_study_page_says_how_identical_answers_are_shown_and_switches_before_the_first_score(app, twins_data,
                                                                                                  client, auth):
    study_id = make_study(app, twins_data)
    auth.login("researcher")
    page = client.get(f"/studies/{study_id}").get_data(as_text=True)
    section = page.split('id="identical"')[1].split("</div>")[0]
    assert 'data-field="identical-policy">Shown <strong>once</strong>' in section and "Show them apart" in section
    response = client.post(f"/studies/{study_id}/identical", data={"csrf_token": auth.token(), "how": "apart"})
    assert response.status_code == 302
    with app.app_context():
        assert db.session.get(Study, study_id).merge_identical is False
        assert db.session.scalar(select(func.count(StudyAnswer.id)).where(StudyAnswer.twin_of_id.is_not(None))) == 0
    annotator, annotator_auth = signed_in(app, "ann1")
    q0 = question_ids(app, study_id)[0]
    assert post_score(annotator, annotator_auth.token(), study=study_id, question_id=q0, label="A",
                      value=3).status_code == 200
    page = client.get(f"/studies/{study_id}").get_data(as_text=True)
    assert "can be changed only before the study&#39;s first score" in page or \
        "can be changed only before the study's first score" in page
    refused = client.post(f"/studies/{study_id}/identical", data={"csrf_token": auth.token(), "how": "once"},
                          follow_redirects=True).get_data(as_text=True)
    assert "only before the first one" in refused
    with app.app_context():
        assert db.session.get(Study, study_id).merge_identical is False


def test_the_new_study_form_offers_the_option_checked_and_unchecked_shows_them_apart(app, twins_data, client, auth):
    with app.app_context():
        assert not import_path(twins_data).failed
    auth.login("researcher")
    form = client.get("/studies/new").get_data(as_text=True)
    assert 'name="identical" value="once" checked' in form and "<legend>Identical answers</legend>" in form
    base = {"csrf_token": auth.token(), "questions": "human_eval", "reference": ["human"], "policy": "hide",
            "scorers": "everyone", "allocation": "fixed", "identical_listed": "1"}
    for name, extra, once in (("Once", {"identical": "once"}, True), ("Apart", {}, False)):
        response = client.post("/studies/new", data={**base, "name": name, **extra})
        assert response.status_code == 302, response.get_data(as_text=True)
        with app.app_context():
            study = db.session.scalar(select(Study).where(Study.name == name))
            twins = db.session.scalar(select(func.count(StudyAnswer.id)).where(
                StudyAnswer.study_id == study.id, StudyAnswer.twin_of_id.is_not(None)))
            assert (study.merge_identical, twins) == (once, 3 if once else 0)


def test_an_adaptive_study_gives_an_identical_answer_once_and_records_its_score_for_each(app, twins_data):
    """The adaptive policy asks for systems' answers; a twin's is given as the slot the page shows, never by itself,
    so no page shows one text twice; its score reaches every system, and progress and pending count it once."""
    from app.models import AnnotationRound, StudyAllocation, User
    from app.services.annotation.oversight import annotator_progress
    from app.services.studies import allocation

    with app.app_context():
        assert not import_path(twins_data).failed
        ids = [create_user(name, PASSWORD, "annotator").id for name in ("ann1", "ann2")]
        study_id = create_study(StudySpec(name="Adaptive twins", status="open", allocation="adaptive",
                                          budget_documents=4, annotator_ids=ids)).id
        assert db.session.scalar(select(func.count(StudyAnswer.id)).where(
            StudyAnswer.study_id == study_id, StudyAnswer.twin_of_id.is_not(None))) == 3
    clients = [signed_in(app, name) for name in ("ann1", "ann2")]
    pages = 0
    for _ in range(40):
        progressed = False
        for client, auth in clients:
            response = client.get(f"/annotate/{study_id}/")
            if "/done" in response.headers.get("Location", "/done"):
                continue
            page = client.get(response.headers["Location"]).get_data(as_text=True)
            question_id = int(page.split('data-question-id="', 1)[1].split('"', 1)[0])
            shown = dict(ANSWERS_RE.findall(page))
            assert len(set(shown.values())) == len(shown)
            for label, sha in shown.items():
                saved = post_score(client, auth.token(), study=study_id, question_id=question_id, label=label,
                                   value=4, answer=sha)
                assert saved.status_code == 200, saved.get_json()
            pages, progressed = pages + 1, True
        if not progressed:
            break
    assert pages >= 6
    with app.app_context():
        twin_slots = set(db.session.scalars(select(StudyAnswer.id).where(
            StudyAnswer.study_id == study_id, StudyAnswer.twin_of_id.is_not(None))))
        given = db.session.execute(select(StudyAllocation.user_id, StudyAllocation.study_answer_id)
                                   .where(StudyAllocation.study_id == study_id)).all()
        assert given and not {slot for _, slot in given} & twin_slots  # never a twin by itself
        # Every twin answer on a question its shown slot was given on has the annotator's score, recorded from it.
        shown_of = dict(db.session.execute(select(StudyAnswer.id, StudyAnswer.twin_of_id).where(
            StudyAnswer.id.in_(twin_slots))).all())
        answer_of_slot = dict(db.session.execute(select(StudyAnswer.id, StudyAnswer.answer_id).where(
            StudyAnswer.study_id == study_id)).all())
        copies = 0
        for user_id, slot in given:
            for twin, shown_slot in shown_of.items():
                if shown_slot == slot:
                    value, source = db.session.execute(select(Score.value, Score.copied_from_id).join(
                        AnnotationRound, AnnotationRound.id == Score.round_id).where(
                        AnnotationRound.study_id == study_id, AnnotationRound.annotator_id == user_id,
                        Score.answer_id == answer_of_slot[twin])).one()
                    assert value == 4 and source is not None
                    copies += 1
        assert copies >= 3  # the first document (q0, q1) read by both annotators
        study = db.session.get(Study, study_id)
        for row in annotator_progress(study):
            mine = sum(1 for user_id, _ in given if user_id == db.session.scalar(
                select(User.id).where(User.username == row.username)))
            assert (row.done, row.total) == (mine, mine)  # once, as the page showed it
        assert allocation._pending(study_id, allocation.ratings_of(study_id)) == {}
