"""Issue 40, item 10, the small things a researcher met in the second hour: Table 2's selected judge profile,
an adaptive study before its start, the Studies empty state, the Overview's steps and names."""
from __future__ import annotations

import re

from sqlalchemy import select

from app.extensions import db
from app.models import User
from app.services.accounts import create_user, reset_password
from app.services.importers import import_path
from app.services.studies.setup import StudySpec, create_study, questions_for
from tests.conftest import AuthActions
from tests.support.study_data import write_study_set


def test_table2_names_every_judge_profile_on_its_button(demo, client, auth):
    """The selected judge-profile button was blank for a profile the template had no label for (evidence)."""
    auth.login("researcher")
    for judge in ("leval", "default", "evidence"):
        page = client.get(f"/results/table2?judge={judge}").get_data(as_text=True)
        current = re.search(r'<a href="[^"]*judge=[a-z]+[^"]*" aria-current="true">([^<]*)</a>',
                            page.split('id="ctl-judge"')[1])
        assert current and current.group(1).strip() == judge, judge
        assert 'data-field="judge-profile">' + judge in page


def test_an_adaptive_study_before_its_start_says_so_not_0_of_0(demo, client, auth):
    with demo.app_context():
        annotator = db.session.scalar(select(User.id).where(User.username == "annotator"))
        study = create_study(StudySpec(name="Adaptive one", question_ids=questions_for("demo"), allocation="adaptive",
                                       budget_answers=8, annotator_ids=[annotator], status="open"))
        study_id = study.id
    auth.login("annotator")
    chooser = client.get("/annotate/").get_data(as_text=True)
    choice = chooser.split(f'data-study="{study_id}"')[1].split("</li>")[0]
    assert "0 of 0" not in choice and "not started: answers are given as you go" in choice
    auth.logout()
    auth.login("researcher")
    page = client.get(f"/studies/{study_id}").get_data(as_text=True)
    row = page.split('id="progress"')[1].split('data-annotator="annotator"')[1].split("</tr>")[0]  # not "Who reads"
    assert "0 of 0" not in row and "not started" in row


def test_the_studies_empty_state_follows_what_is_imported(app, client, auth, tmp_path):
    auth.login("researcher")
    empty = client.get("/studies").get_data(as_text=True)
    assert "no questions to ask: import L-Eval&#39;s human-evaluation subset" in empty.replace("'", "&#39;")
    with app.app_context():
        assert not import_path(write_study_set(tmp_path / "set", documents=2, questions_each=3)).failed
    page = client.get("/studies").get_data(as_text=True)
    block = page.split('data-field="studies-empty"')[1].split("</p>")[0]
    assert "human-evaluation subset is imported (6 questions)" in block and "import-leval" not in block
    assert 'href="/studies/new"' in block


def test_the_overview_asks_to_change_a_printed_password_and_shows_commands_as_code(app, client):
    with app.app_context():
        admin = db.session.scalars(select(User).where(User.username == "admin")).one()
        password = reset_password(admin)  # printed on the console, as at the first start
        create_user("carol", "a-long-password-1", "researcher")
    auth = AuthActions(client)
    assert auth.login("admin", password).status_code == 302
    page = client.get("/").get_data(as_text=True)
    steps = re.findall(r'<li data-step="([a-z]+)">', page)
    assert steps[0] == "password"
    assert "Change your password" in page.split('data-step="password"')[1].split("</li>")[0]
    assert "`" not in page.split('class="card next-steps"')[1].split("</section>")[0]  # no Markdown backticks
    assert "<code>python run.py import-leval --download</code>" in page
    assert "Signed in as <strong>admin</strong>." in page  # not "admin (admin)"
    assert not re.search(r'>admin <span class="role">admin</span>', page)  # the top bar: not "admin admin"
    response = client.post("/account/password", data={
        "csrf_token": auth.token(), "current_password": password, "new_password": "a-new-password-123",
        "new_password_again": "a-new-password-123", "end_tokens": "y"})
    assert response.status_code in (302, 200)
    assert 'data-step="password"' not in client.get("/").get_data(as_text=True)
    other = app.test_client()
    assert AuthActions(other).login("carol", "a-long-password-1").status_code == 302
    page = other.get("/").get_data(as_text=True)
    assert 'data-step="password"' not in page  # an account made with its own password
    assert "Signed in as <strong>carol</strong> (researcher)." in page
