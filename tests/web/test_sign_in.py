"""Signing in (first-hour finding 6): "Keep me signed in" and its bounds, landing on the work, the chooser's progress.

Without the box the session cookie is the browser's (it ends when the browser closes); with it the
cookie lasts until the sign-in is LEVAL_KEEP_SIGNED_IN_DAYS old and no longer, and the server refuses
an older sign-in whatever the browser sends. Session versions end a kept session like any other.
"""
from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

import pytest
from sqlalchemy import select

from app.config import build_config
from app.extensions import db
from app.models import AnnotationRound, Study, StudyQuestion
from app.services.accounts import find_user
from app.services.annotation.choices import study_choices
from app.services.studies.setup import StudySpec, create_study
from app.web.sessions import SIGNED_IN_AT
from tests.conftest import PASSWORDS, AuthActions, csrf_token
from tests.support.scoring_data import generate_scores


def sign_in(client, username: str = "annotator", *, keep: bool = False, next_url: str | None = None):
    data = {"username": username, "password": PASSWORDS[username], "csrf_token": csrf_token(client)}
    if keep:
        data["keep"] = "y"
    return client.post("/login" + (f"?next={next_url}" if next_url else ""), data=data)


def session_cookie(response) -> str:
    cookies = [value for value in response.headers.getlist("Set-Cookie") if value.startswith("session=")]
    assert len(cookies) == 1, response.headers.getlist("Set-Cookie")
    return cookies[0]


def expiry(cookie: str) -> datetime | None:
    found = re.search(r"Expires=([^;]+)", cookie)
    return parsedate_to_datetime(found.group(1)) if found else None


def signed_out(client) -> bool:
    response = client.get("/")
    return response.status_code == 302 and "/login" in response.headers["Location"]


# Keep me signed in


def test_the_login_form_offers_keep_me_signed_in_for_the_configured_time(client):
    page = client.get("/login").get_data(as_text=True)
    assert re.search(r'<input id="keep" name="keep" type="checkbox" value="y"[^>]*>\s*Keep me signed in</label>', page)
    assert "For 14 days, even after the browser closes" in page


def test_without_the_box_the_session_ends_with_the_browser(client):
    cookie = session_cookie(sign_in(client))
    assert expiry(cookie) is None and "Max-Age" not in cookie, cookie


def test_with_the_box_the_session_is_kept_for_the_configured_days_and_no_longer(app, client):
    before = datetime.now(UTC)
    response = sign_in(client, keep=True)
    assert response.status_code == 302
    expires = expiry(session_cookie(response))
    assert expires is not None, "a kept session must outlive the browser"
    assert before + timedelta(days=14) - timedelta(seconds=5) <= expires <= datetime.now(UTC) + timedelta(days=14)
    # Using the session does not push the end further out.
    assert client.get("/annotate/").status_code in (200, 302)
    later = client.get("/").headers.getlist("Set-Cookie")
    assert all(expiry(value) in (None, expires) for value in later if value.startswith("session="))


def test_the_lifetime_is_configurable(app, client, monkeypatch, tmp_path):
    monkeypatch.setenv("LEVAL_KEEP_SIGNED_IN_DAYS", "3")
    assert build_config(tmp_path, {"SECRET_KEY": "x"})["PERMANENT_SESSION_LIFETIME"] == timedelta(days=3)
    app.config["PERMANENT_SESSION_LIFETIME"] = timedelta(days=3)
    assert "For 3 days, even after the browser closes" in client.get("/login").get_data(as_text=True)
    expires = expiry(session_cookie(sign_in(client, keep=True)))
    assert abs(expires - datetime.now(UTC) - timedelta(days=3)) < timedelta(seconds=10)


@pytest.mark.parametrize("keep", [True, False])
def test_the_server_refuses_a_sign_in_older_than_the_lifetime(app, client, keep):
    """A browser (or a copied cookie) that keeps sending the cookie past its expiry is signed out by the server."""
    sign_in(client, keep=keep)
    assert not signed_out(client)
    with client.session_transaction() as session:  # re-signed now: only the sign-in's own age can refuse it
        session[SIGNED_IN_AT] = int(time.time()) - int(timedelta(days=14).total_seconds()) + 60
    assert not signed_out(client), "a sign-in younger than the lifetime stays"
    with client.session_transaction() as session:
        session[SIGNED_IN_AT] = int(time.time()) - int(timedelta(days=14).total_seconds()) - 60
    assert signed_out(client), "a sign-in older than the lifetime must end"


def test_a_kept_session_ends_with_sign_out_everywhere_else_and_with_sign_out(app, client):
    sign_in(client, "researcher", keep=True)
    other = app.test_client()
    sign_in(other, "researcher")
    assert not signed_out(client) and not signed_out(other)
    assert other.post("/account/sessions", data={"csrf_token": csrf_token(other)}).status_code == 302
    assert signed_out(client), "sign out everywhere else must end a kept session"
    assert not signed_out(other)
    sign_in(client, "researcher", keep=True)
    AuthActions(other).logout()
    assert signed_out(client), "signing out ends a kept session elsewhere too"


def test_after_signing_out_the_next_sign_in_is_not_kept_unless_asked(client):
    sign_in(client, keep=True)
    AuthActions(client).logout()
    cookie = session_cookie(sign_in(client))
    assert expiry(cookie) is None, cookie


# Landing on the work


@pytest.fixture
def three_studies(demo):
    """The demo's study and two more open studies over its questions: the annotator is offered three."""
    with demo.app_context():
        first = db.session.scalars(select(Study)).one()
        questions = list(db.session.scalars(select(StudyQuestion.question_id)
                                            .where(StudyQuestion.study_id == first.id)))
        second = create_study(StudySpec(name="Second", status="open", question_ids=questions))
        third = create_study(StudySpec(name="Third", status="open", question_ids=questions))
        return [first.id, second.id, third.id]


def score_some(app, study_id: int, annotator: str = "annotator") -> None:
    with app.app_context():
        assert 0 < generate_scores([annotator], seed=5, coverage=0.4, study_id=study_id)


def test_with_no_study_in_progress_the_annotator_chooses(demo, client, three_studies):
    response = sign_in(client)
    assert response.headers["Location"] == "/"
    assert "<h1>Your studies</h1>" in client.get("/annotate/").get_data(as_text=True)


def test_with_one_study_in_progress_sign_in_lands_on_its_work(demo, client, three_studies):
    score_some(demo, three_studies[1])
    response = sign_in(client)
    assert response.headers["Location"] == f"/annotate/{three_studies[1]}/"
    work = client.get(response.headers["Location"])
    assert re.fullmatch(rf"/annotate/{three_studies[1]}/q/\d+", work.headers["Location"]), work.headers["Location"]
    # The menu's Annotate still shows the chooser: switching studies stays one click away.
    assert "<h1>Your studies</h1>" in client.get("/annotate/").get_data(as_text=True)


def test_a_next_page_wins_over_the_study_in_progress(demo, client, three_studies):
    score_some(demo, three_studies[1])
    wanted = f"/annotate/{three_studies[2]}/"
    assert sign_in(client, next_url=wanted).headers["Location"] == wanted
    AuthActions(client).logout()
    # The sign-in page reached from the home page carries next=/: that is the default, not a wish.
    assert sign_in(client, next_url="/").headers["Location"] == f"/annotate/{three_studies[1]}/"


def test_with_two_studies_in_progress_the_annotator_chooses(demo, client, three_studies):
    score_some(demo, three_studies[1])
    score_some(demo, three_studies[2])
    assert sign_in(client).headers["Location"] == "/"


def test_staff_land_on_the_overview(demo, client, three_studies):
    score_some(demo, three_studies[1], annotator="researcher")
    assert sign_in(client, "researcher").headers["Location"] == "/"


# The chooser's progress


def test_the_chooser_shows_each_studys_progress_and_what_its_button_does(demo, client, three_studies):
    score_some(demo, three_studies[1])
    sign_in(client, next_url="/annotate/")
    page = client.get("/annotate/").get_data(as_text=True)
    rows = dict(re.findall(r'data-study="(\d+)">(.*?)</li>', page, re.DOTALL))
    assert set(rows) == {str(s) for s in three_studies}
    with demo.app_context():
        progress = {c.study.id: (c.scored, c.total) for c in study_choices(find_user("annotator"))}
    scored, total = progress[three_studies[1]]
    assert 0 < scored < total
    second = rows[str(three_studies[1])]
    assert f">{scored} of {total} scored</span>" in second and ">Continue</a>" in second
    first = rows[str(three_studies[0])]
    assert f">0 of {total} scored</span>" in first and ">Start</a>" in first
    with demo.app_context():  # looking at the chooser opens no round
        assert db.session.scalars(select(AnnotationRound.study_id)).all() == [three_studies[1]]
