"""The question page shows an answer laid out by core.text.display_answer, while a save is still
checked against the sha256 of the stored text (the exact version scored), never the displayed one."""
from __future__ import annotations

import html
import re

from sqlalchemy import select

from app.core.text import display_answer, sha256_text
from app.extensions import db
from app.models import Answer, Score, StudyAnswer
from tests.support.scoring_helpers import first_question, post_score, question_url, shown_answers, signed_in

STORED = "\ufeff  \r\nThe answer is 42.  \r\n\r\n\r\n\r\nBecause\u200b it is.\t \r\n"
TEXT_RE = re.compile(r'data-label="([A-Z]+)" data-answer="([0-9a-f]{64})".*?<div class="prose answer-text">(.*?)</div>',
                     re.S)


def _store_on_every_answer(app, question_id: int) -> None:
    with app.app_context():
        answers = db.session.scalars(select(Answer).join(StudyAnswer, StudyAnswer.answer_id == Answer.id)
                                     .where(StudyAnswer.question_id == question_id))
        for number, answer in enumerate(answers):
            answer.text = STORED.replace("42", str(42 + number))
            answer.sha256 = sha256_text(answer.text)
        db.session.commit()


def test_the_page_shows_the_display_text_but_names_the_stored_texts_sha(demo):
    client, auth = signed_in(demo)
    question_id = first_question(client)
    _store_on_every_answer(demo, question_id)
    page = client.get(question_url(client, question_id)).get_data(as_text=True)
    shown = {label: (sha, html.unescape(text)) for label, sha, text in TEXT_RE.findall(page)}
    assert len(shown) == 4
    with demo.app_context():
        stored = {a.sha256: a.text for a in db.session.scalars(select(Answer).where(Answer.question_id == question_id))}
    for label, (sha, text) in shown.items():
        assert sha in stored and sha == sha256_text(stored[sha]), label  # the stored text's hash
        assert text == display_answer(stored[sha]) and text.startswith("The answer is 4"), label
        assert "\r" not in text and "\ufeff" not in text and "\n\n\n" not in text, label
        assert f'"{len(stored[sha])}"' not in page  # no raw length rides along


def test_a_save_is_checked_against_the_stored_texts_sha(demo):
    client, auth = signed_in(demo)
    token = auth.token()
    question_id = first_question(client)
    _store_on_every_answer(demo, question_id)
    sha = shown_answers(client, question_id)["A"]
    with demo.app_context():
        stored = db.session.scalar(select(Answer.text).where(Answer.sha256 == sha))
    displayed_sha = sha256_text(display_answer(stored))
    assert displayed_sha != sha
    refused = post_score(client, token, question_id=question_id, label="A", value=4, answer=displayed_sha)
    assert refused.status_code == 409 and refused.get_json()["reload"] is True
    saved = post_score(client, token, question_id=question_id, label="A", value=4, answer=sha)
    assert saved.status_code == 200, saved.get_json()
    with demo.app_context():
        score = db.session.scalar(select(Score))
        assert score.answer_sha256 == sha == sha256_text(stored) and score.value == 4
