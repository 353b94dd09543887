"""Every results route without ?study= once several studies could be meant: the chooser, never a 500
(audit "Hardening, second round", finding 6: /results/disagreements/questions/<id> raised a BuildError).

The routes come from the app's url_map, so a results route added later is checked too.
"""
from __future__ import annotations

import html
import re
import tempfile

import pytest
from sqlalchemy import select

from app import create_app
from app.extensions import db
from app.models import Study, StudyQuestion
from app.services import demo
from app.services.studies.setup import StudySpec, create_study
from tests.support.scoring_data import generate_scores

LINK_RE = re.compile(r'<ul class="study-choices">(.*?)</ul>', re.S)


def results_rules() -> list[tuple[str, str]]:
    """(rule, method) of every results route, read from a real app's url_map."""
    with tempfile.TemporaryDirectory() as instance:
        app = create_app({"INSTANCE_PATH": instance, "TESTING": True, "SECRET_KEY": "routes",
                          "SQLALCHEMY_DATABASE_URI": "sqlite://"})
    return sorted((rule.rule, method) for rule in app.url_map.iter_rules() if rule.endpoint.startswith("results.")
                  for method in sorted(rule.methods - {"HEAD", "OPTIONS"}))


@pytest.fixture
def two_studies(app):
    """The demo's study scored by ann1, and a second open study over the same questions: neither is the default."""
    with app.app_context():
        demo.load_demo()
        generate_scores(["ann1"], seed=3)
        first = db.session.scalars(select(Study)).one()
        questions = list(db.session.scalars(select(StudyQuestion.question_id)
                                            .where(StudyQuestion.study_id == first.id)))
        second = create_study(StudySpec(name="Second", status="open", question_ids=questions))
        return {"studies": [first.id, second.id], "question": questions[0]}


def url_for_rule(rule: str, question_id: int) -> str:
    """The rule with its path's parts filled: a question both studies show, a format and an annotator."""
    return (rule.replace("<int:question_id>", str(question_id)).replace("<fmt>", "csv")
            .replace("<annotator>", "ann1"))


@pytest.mark.parametrize("rule, method", results_rules())
def test_a_results_route_without_a_study_asks_which_and_each_choice_opens_it(app, client, auth, two_studies, rule,
                                                                             method):
    auth.login("researcher")
    url = url_for_rule(rule, two_studies["question"])
    response = client.get(url) if method == "GET" else client.post(url, data={"csrf_token": auth.token()})
    page = response.get_data(as_text=True)
    assert response.status_code == 200, (url, response.status_code)
    assert "Results belong to a study. Choose one:" in page
    links = [html.unescape(href) for href in re.findall(r'href="([^"]+)"', LINK_RE.search(page).group(1))]
    assert len(links) == 2
    for study_id, link in zip(two_studies["studies"], links):
        if method == "GET":  # the same page (or download) in the chosen study, its path and query kept
            assert link.startswith(url.split("?")[0] + "?") and f"study={study_id}" in link
        else:  # a form post cannot be repeated by a link: the study's summary
            assert link == f"/results?study={study_id}"
        assert client.get(link).status_code == 200, link


def test_the_chooser_keeps_the_query_of_the_page_asked_for(app, client, auth, two_studies):
    auth.login("researcher")
    page = client.get(f"/results/disagreements/questions/{two_studies['question']}?profile=fixed&view=finished")
    links = [html.unescape(h) for h in re.findall(r'href="([^"]+)"', LINK_RE.search(page.get_data(as_text=True))[1])]
    assert all("profile=fixed" in link and "view=finished" in link for link in links), links
