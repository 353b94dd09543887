"""A study on LongBench's questions, picked by their question set (`longbench:<dataset>`) on the new-study form, and
an annotator scoring one LongBench answer through the pages."""
from __future__ import annotations

import re

from sqlalchemy import select

from app.extensions import db
from app.models import Answer, Document, Prediction, Question, Score, Study, StudyQuestion, System
from app.models.longbench import LONGBENCH
from app.services.longbench.importer import import_path
from app.services.question_sets import QuestionSetError, select_questions
from tests.conftest import PASSWORDS, AuthActions
from tests.support.longbench_data import full_data_rows, write_data, write_model
from tests.support.scoring_helpers import post_score

DATASET = "multifieldqa_zh"  # Chinese questions and answers


def test_a_study_takes_a_longbench_dataset_by_name_and_an_annotator_scores_its_answer(app, client, auth, tmp_path):
    write_data(tmp_path, datasets=[DATASET])
    write_model(tmp_path, "model-a", datasets=[DATASET], seed=1)
    write_model(tmp_path, "model-b", datasets=[DATASET], seed=2)
    with app.app_context():
        assert not import_path(tmp_path).failed
        expected = list(db.session.scalars(
            select(Question.id).join(Document).where(Document.collection == LONGBENCH, Document.task == DATASET)
            .order_by(Question.id)))
        assert [q.question_id for q in select_questions(f"longbench:{DATASET}")] == expected
        assert len(expected) == len(full_data_rows(DATASET))
        try:
            select_questions("longbench:no_such_dataset", required=True)
        except QuestionSetError as exc:
            assert "no LongBench question of 'no_such_dataset' is imported" in str(exc)
        else:
            raise AssertionError("an empty LongBench set was accepted")
    auth.login("researcher")
    form = client.get("/studies/new").get_data(as_text=True)
    assert f'value="longbench:{DATASET}"' in form and f"LongBench {DATASET}" in form
    response = client.post("/studies/new", data={
        "csrf_token": auth.token(), "name": "LongBench zh", "questions": f"longbench:{DATASET}",
        "reference": ["human"], "policy": "hide", "scorers": "everyone"})
    assert response.status_code == 302, response.get_data(as_text=True)
    with app.app_context():
        study = db.session.scalar(select(Study).where(Study.name == "LongBench zh"))
        study_id = study.id
        assert list(db.session.scalars(select(StudyQuestion.question_id).where(StudyQuestion.study_id == study_id)
                                       .order_by(StudyQuestion.position))) == expected
    assert client.post(f"/studies/{study_id}/status", data={"csrf_token": auth.token(), "status": "open"}
                       ).status_code == 302
    auth.logout()

    annotator = app.test_client()
    annotator_auth = AuthActions(annotator)
    assert annotator_auth.login("annotator", PASSWORDS["annotator"]).status_code == 302
    page = annotator.get(f"/annotate/{study_id}/q/{expected[0]}").get_data(as_text=True)
    with app.app_context():
        question = db.session.get(Question, expected[0])
        document = db.session.get(Document, question.document_id)
        answers = dict(db.session.execute(select(Answer.sha256, System.name).join(System)).all())
        texts = set(db.session.scalars(select(Answer.sha256).join(Prediction, Prediction.id == Answer.prediction_id)
                                       .where(Prediction.question_id == expected[0])))
    assert question.instruction in page  # the data row's question; its context comes by the document panel
    url = re.search(r'data-document-url="([^"]+)"', page).group(1)
    assert document.text[:40] in annotator.get(url).get_data(as_text=True)
    shown = dict(re.findall(r'data-label="([A-Z]+)" data-answer="([0-9a-f]{64})"', page))
    # Both models' answers, identical ones shown once (a new study's default, docs/studies.md).
    assert len(shown) == len(texts) and set(shown.values()) <= set(answers)
    label = sorted(shown)[0]
    saved = post_score(annotator, annotator_auth.token(), study=study_id, question_id=expected[0], label=label,
                       value=4, answer=shown[label])
    assert saved.status_code == 200 and saved.get_json()["saved"], saved.get_data(as_text=True)
    with app.app_context():
        scores = list(db.session.scalars(select(Score).order_by(Score.id)))
        givers = db.session.scalar(select(db.func.count()).select_from(Answer).join(
            Prediction, Prediction.id == Answer.prediction_id).where(
            Prediction.question_id == expected[0], Answer.sha256 == shown[label]))
        # One score given, recorded for every system whose answer is that text (the first given, the rest copies).
        assert [(s.value, s.answer_sha256, s.answer_label) for s in scores] == [(4, shown[label], label)] * givers
        assert [s.copied_from_id is None for s in scores] == [True] + [False] * (givers - 1)
