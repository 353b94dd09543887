"""The home page says what to do next (first-hour finding 19), following the README's walkthrough."""
from __future__ import annotations

import re

from tests.support.shared import require_human_eval


def steps(client) -> list[str]:
    return re.findall(r'data-step="([a-z]+)"', client.get("/").get_data(as_text=True))


def test_with_only_the_demo_the_next_step_is_importing_data(demo, client, auth):
    auth.login("researcher")
    page = client.get("/").get_data(as_text=True)
    assert steps(client) == ["import"] and "import-leval" in page


def test_after_an_import_the_next_steps_are_the_jobs_then_a_study(demo, client, auth, runner):
    assert runner.invoke(args=["import-leval", str(require_human_eval())]).exit_code == 0
    auth.login("researcher")
    assert steps(client) == ["jobs", "score", "study"]  # the import queued metric jobs nobody has run yet


def test_annotators_go_straight_to_their_work(demo, client, auth):
    auth.login("annotator")
    response = client.get("/")
    assert response.status_code == 302 and "/annotate" in response.headers["Location"]
