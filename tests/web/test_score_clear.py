"""Clearing a score through the save API: the answer is "Not scored" again, progress, results and
exports stop counting it, the audit trail keeps the clear, and the page's access rules still hold."""
from __future__ import annotations

import re

from sqlalchemy import select

from app.extensions import db
from app.models import Score, ScoreRevision
from app.services.annotation.scoring import frequencies
from app.services.exports import SCORE_SEPARATOR, leval_lines, score_rows
from app.services.results.scores import load_current_scores
from app.services.studies.lookup import study_rows
from app.services.accounts import create_user
from tests.support.scoring_helpers import (
    SECOND, first_question, post_score, question_url, shown_answers, signed_in, study_of,
)

SCORED_CELL = re.compile(re.escape(SCORE_SEPARATOR) + r"[1-5]$")


def clear(client, token, question_id, label, **extra):
    return post_score(client, token, question_id=question_id, label=label, clear=True, **extra)


def test_a_cleared_score_is_not_scored_again_and_its_clear_is_kept_as_a_revision(demo):
    client, auth = signed_in(demo)
    token = auth.token()
    question_id = first_question(client)
    assert post_score(client, token, question_id=question_id, label="B", value=4, comment="fine").status_code == 200
    assert post_score(client, token, question_id=question_id, label="C", value=2).status_code == 200

    cleared = clear(client, token, question_id, "B", comment="fine")
    assert cleared.status_code == 200, cleared.get_json()
    body = cleared.get_json()
    assert body["changed"] is True and body["value"] is None
    assert body["progress"] == {"done": 1, "total": 40} and body["question"] == {"scored": 1, "total": 4}
    assert clear(client, token, question_id, "B", comment="fine").get_json()["changed"] is False  # safe to retry
    assert clear(client, token, question_id, "A").get_json()["changed"] is False  # never scored: nothing written

    page = client.get(question_url(client, question_id)).get_data(as_text=True)
    article = page[page.index('id="answer-B"'):page.index('id="answer-C"')]
    assert "Not scored" in article and " checked" not in article
    assert "0 of 40" not in page and "1 of 40" in page
    with demo.app_context():
        score = db.session.scalar(select(Score).where(Score.answer_label == "B"))
        assert score.value is None and score.comment == "fine"
        revisions = db.session.execute(select(ScoreRevision.old_value, ScoreRevision.new_value)
                                       .where(ScoreRevision.score_id == score.id).order_by(ScoreRevision.id)).all()
        assert [tuple(r) for r in revisions] == [(None, 4), (4, None)]
        assert db.session.scalar(select(db.func.count(Score.id)).where(Score.answer_label == "A")) == 0

    again = post_score(client, token, question_id=question_id, label="B", value=5, comment="fine")
    assert again.get_json()["progress"]["done"] == 2
    with demo.app_context():
        assert [r.new_value for r in db.session.scalars(select(ScoreRevision).where(ScoreRevision.score_id == score.id)
                                                        .order_by(ScoreRevision.id))] == [4, None, 5]


def test_results_exports_and_counts_leave_a_cleared_score_out(demo):
    client, auth = signed_in(demo)
    token = auth.token()
    question_id = first_question(client)
    for label, value in zip("ABCD", (1, 3, 5, 2)):
        assert post_score(client, token, question_id=question_id, label=label, value=value).status_code == 200
    assert clear(client, token, question_id, "C").status_code == 200
    study_id = study_of(client)
    with demo.app_context():
        current = load_current_scores(study_id)
        assert sorted(record["score"] for record in current.records) == [1, 2, 3]
        assert sorted(row["score"] for row in score_rows(study_id)) == [1, 2, 3]
        assert frequencies(study_id, db.session.scalar(select(Score.round_id))) == {1: 1, 2: 1, 3: 1, 4: 0, 5: 0}
        scored_cells = [cell for line in leval_lines(study_id, "annotator") for cells in line.values()
                        if isinstance(cells, list) for cell in cells if SCORED_CELL.search(str(cell))]
        assert len(scored_cells) == 3
        assert next(row for row in study_rows() if row.study.id == study_id).scores == 3


def test_a_clear_follows_the_same_validation_and_access_rules(demo):
    client, auth = signed_in(demo)
    token = auth.token()
    question_id = first_question(client)
    assert post_score(client, token, question_id=question_id, label="A", value=3).status_code == 200
    for bad in ({"clear": "yes"}, {"clear": 1}, {"clear": True, "value": 3}):
        response = post_score(client, token, question_id=question_id, label="A", **bad)
        assert response.status_code == 400 and response.get_json()["field"] in ("clear", "value"), bad
    assert post_score(client, token, question_id=question_id, label="A", value=None).status_code == 400
    stale = clear(client, token, question_id, "A", answer="b" * 64)
    assert stale.status_code == 409 and stale.get_json()["reload"] is True
    # Another annotator cannot clear this one's score: the save goes to their own round, where there is nothing.
    with demo.app_context():
        create_user(*SECOND, "annotator")
    other, other_auth = signed_in(demo, SECOND[0])
    assert clear(other, other_auth.token(), question_id, "A",
                 answer=shown_answers(client, question_id)["A"]).status_code in (200, 404, 409)
    with demo.app_context():
        assert db.session.scalar(select(Score.value).where(Score.answer_label == "A")) == 3
    signed_out = demo.test_client()
    response = signed_out.post("/annotate/api/score", json={"question_id": question_id, "label": "A", "clear": True})
    assert response.status_code in (302, 400, 401, 403)
    with demo.app_context():
        assert db.session.scalar(select(Score.value).where(Score.answer_label == "A")) == 3
