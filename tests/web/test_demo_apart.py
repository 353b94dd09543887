"""The demo sits apart from real data (first-hour finding 1).

After the README's first run (the demo) and `import-leval` of L-Eval's human-evaluation folder, no
list, leaderboard, dropdown or annotator's chooser puts a demo system, document or study beside the
real ones; "Show the demo" shows the demo alone, and staff are told once that it is still there.
"""
from __future__ import annotations

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import Study, System
from tests.support.shared import require_human_eval

DEMO_SYSTEMS = ("balanced-34b", "shaky-3b", "terse-13b", "verbose-7b")


@pytest.fixture
def with_real_data(demo, runner):
    result = runner.invoke(args=["import-leval", str(require_human_eval())])
    assert result.exit_code == 0, result.output
    with demo.app_context():
        real = set(db.session.scalars(select(System.name).where(System.is_demo.is_(False))))
    assert len(real) == 7
    return demo, real


def pages(client) -> dict[str, str]:
    return {url: client.get(url).get_data(as_text=True)
            for url in ("/leaderboard", "/judge/", "/lveval", "/predictions", "/studies", "/results/human")}


def test_before_real_data_the_demo_is_all_there_is(demo, client, auth):
    auth.login("researcher")
    board = client.get("/leaderboard").get_data(as_text=True)
    assert all(name in board for name in DEMO_SYSTEMS)
    assert 'data-field="show-demo"' not in board  # nothing to keep apart yet


def test_once_real_data_exists_no_page_shows_the_demo_beside_it(with_real_data, client, auth):
    app, real = with_real_data
    auth.login("researcher")
    for url, page in pages(client).items():
        shown = [name for name in DEMO_SYSTEMS if name in page]
        assert not shown, f"{url} shows demo systems {shown}"
    board = client.get("/leaderboard").get_data(as_text=True)
    assert all(name in board for name in real)
    judge = client.get("/judge/").get_data(as_text=True)
    assert all(f'value="{name}"' in judge for name in real)


def test_annotators_are_not_offered_the_demo_study_once_real_data_exists(with_real_data, client, auth):
    app, _ = with_real_data
    with app.app_context():
        demo_study = db.session.scalars(select(Study).where(Study.is_demo.is_(True))).one()
        demo_study_id = demo_study.id
    auth.login("annotator")
    chooser = client.get("/annotate/", follow_redirects=True).get_data(as_text=True)
    assert demo_study.name not in chooser
    assert client.get(f"/annotate/{demo_study_id}/").status_code == 404


def test_show_the_demo_shows_the_demo_alone_and_back(with_real_data, client, auth):
    app, real = with_real_data
    auth.login("researcher")
    board = client.get("/leaderboard").get_data(as_text=True)
    assert 'data-field="show-demo"' in board
    client.post("/demo-view", data={"csrf_token": auth.token(), "show": "1", "next": "/leaderboard"})
    demo_board = client.get("/leaderboard").get_data(as_text=True)
    assert 'data-field="demo-view"' in demo_board
    assert all(name in demo_board for name in DEMO_SYSTEMS) and not any(name in demo_board for name in real)
    client.post("/demo-view", data={"csrf_token": auth.token(), "show": "0"})
    back = client.get("/leaderboard").get_data(as_text=True)
    assert not any(name in back for name in DEMO_SYSTEMS) and all(name in back for name in real)


def test_staff_are_told_once_that_the_demo_is_still_there(with_real_data, client, auth):
    auth.login("researcher")
    first = client.get("/").get_data(as_text=True)
    assert "demo data set is still here" in first and "delete-demo" in first
    assert "demo data set is still here" not in client.get("/").get_data(as_text=True)


def test_deleting_the_demo_works_from_the_real_view(with_real_data, client, auth):
    app, real = with_real_data
    auth.login("researcher")
    with app.app_context():
        demo_systems = len(db.session.scalars(select(System.id).where(System.is_demo.is_(True))).all())
    assert demo_systems >= len(DEMO_SYSTEMS)
    plan = client.get("/studies/demo/delete").get_data(as_text=True)
    # The plan counts the demo's systems although the real view hides them.
    assert f"1 studies, {demo_systems} systems" in plan
    client.post("/studies/demo/delete", data={"csrf_token": auth.token()})
    with app.app_context():
        assert db.session.scalar(select(System.id).where(System.is_demo.is_(True)).limit(1)) is None
        assert set(db.session.scalars(select(System.name))) == real
    board = client.get("/leaderboard").get_data(as_text=True)
    assert 'data-field="show-demo"' not in board, "no demo is left to show"


def test_what_is_made_of_demo_questions_is_demo(demo):
    from app.models import StudyQuestion
    from app.services.studies.setup import StudySpec, create_study

    with demo.app_context():
        demo_study = db.session.scalars(select(Study).where(Study.is_demo.is_(True))).one()
        question_ids = list(db.session.scalars(select(StudyQuestion.question_id)
                                               .where(StudyQuestion.study_id == demo_study.id)))
        assert create_study(StudySpec(name="Practice", question_ids=question_ids, status="draft")).is_demo
