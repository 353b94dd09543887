"""Generation with studies: new answer versions of an existing system, a study's questions, authored pairs in a study."""
from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import Answer, GenerationAnswer, MetricResult, Prediction, Study, StudyAnswer, StudyQuestion, System

STUB_POLICY = lambda body: "A regenerated answer."  # noqa: E731


@pytest.fixture(autouse=True)
def _estimate_tokens(monkeypatch):
    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")


def generate(runner, stub, *args, ok=True):
    result = runner.invoke(args=["generate", "--base-url", stub.base_url, "--model", "m", "--json", *args])
    if ok:
        assert result.exit_code == 0, result.output
        return json.loads(result.output.strip().splitlines()[-1])
    assert result.exit_code != 0
    return result.output


def test_a_run_is_stored_as_a_new_answer_version_and_studies_keep_theirs(demo, runner, stub):
    assert runner.invoke(args=["score-metrics", "--system", "terse-13b"]).exit_code == 0
    with demo.app_context():
        system = db.session.scalars(select(System).where(System.name == "terse-13b")).one()
        study = db.session.scalars(select(Study).where(Study.is_demo.is_(True))).one()
        pinned_before = dict(db.session.execute(select(StudyAnswer.question_id, StudyAnswer.answer_id)
                                                .where(StudyAnswer.study_id == study.id,
                                                       StudyAnswer.system_id == system.id)).all())
        old_texts = {a.id: a.text for a in db.session.scalars(select(Answer).where(Answer.id.in_(pinned_before.values())))}
        scored = db.session.scalar(select(func.count(MetricResult.id)).join(Prediction)
                                   .where(Prediction.system_id == system.id, Prediction.question_id.in_(pinned_before)))
    assert "already exists" in generate(runner, stub, "--system", "terse-13b", ok=False)
    assert "no system 'nobody'" in generate(runner, stub, "--system", "nobody", "--new-version", ok=False)
    out = generate(runner, stub, "--system", "terse-13b", "--new-version")
    assert (out["answered"], out["api_calls"]) == (10, 10)
    with demo.app_context():
        predictions = db.session.scalars(select(Prediction).where(Prediction.system_id == system.id)).all()
        assert {p.text for p in predictions if p.question_id in pinned_before} == {"A regenerated answer."}
        produced = db.session.scalars(select(GenerationAnswer).where(GenerationAnswer.run_id == out["run_id"])).all()
        versions = {g.question_id: db.session.get(Answer, g.answer_id) for g in produced}
        assert len(versions) == 10 and all(v.version >= 2 and v.text == "A regenerated answer." for v in versions.values())
        # The study still shows the versions it pinned, with their old text.
        pinned_after = dict(db.session.execute(select(StudyAnswer.question_id, StudyAnswer.answer_id)
                                               .where(StudyAnswer.study_id == study.id,
                                                      StudyAnswer.system_id == system.id)).all())
        assert pinned_after == pinned_before
        assert {a.id: a.text for a in db.session.scalars(select(Answer).where(Answer.id.in_(pinned_after.values())))} \
            == old_texts
        replaced = [p.id for p in predictions if p.question_id in pinned_before]
        # Metric values of the old texts go (no worker runs here, so nothing recomputed them yet).
        assert scored > 0
        assert db.session.scalar(select(func.count(MetricResult.id)).where(MetricResult.prediction_id.in_(replaced))) == 0
        assert out["metrics_job"]
    # Pinning the new versions is the researcher's explicit step.
    result = runner.invoke(args=["study", "pin", study.name, "--system", "terse-13b", "--latest"])
    assert result.exit_code == 0, result.output
    with demo.app_context():
        shown = db.session.scalars(select(Answer.text).join(StudyAnswer, StudyAnswer.answer_id == Answer.id)
                                   .where(StudyAnswer.study_id == study.id, StudyAnswer.system_id == system.id)).all()
        assert set(shown) == {"A regenerated answer."}


def test_a_new_version_keeps_the_length_instruction_flag(demo, runner, stub):
    output = generate(runner, stub, "--system", "terse-13b", "--new-version", "--length-instruction", ok=False)
    assert "is not length-instructed" in output and stub.calls == 0


def test_a_studys_questions_are_a_question_set(demo, runner, stub):
    with demo.app_context():
        study = db.session.scalars(select(Study).where(Study.is_demo.is_(True))).one()
        order = db.session.scalars(select(StudyQuestion.question_id).where(StudyQuestion.study_id == study.id)
                                   .order_by(StudyQuestion.position)).all()
    out = generate(runner, stub, "--questions", f"study:{study.id}", "--system", "for-the-study")
    assert out["answered"] == len(order) == out["manifest"]["questions"]["count"]
    assert out["manifest"]["questions"]["set"] == f"study:{study.id}"
    bad = generate(runner, stub, "--questions", "study:nope", "--system", "x", ok=False)
    assert "study: takes a study's id" in bad


def test_authored_pairs_can_become_a_studys_questions(demo, client, auth, runner, stub):
    from tests.web.test_authoring import create

    with demo.app_context():
        from app.models import Document
        from app.models.corpus import HUMAN_EVAL

        document = db.session.scalars(select(Document).where(Document.collection == HUMAN_EVAL)).first()
        doc = {"id": document.id, "text": document.text}
    auth.login("researcher")
    ids = [create(client, auth, doc).get_json()["pair"]["question_id"],
           create(client, auth, doc, instruction="Another?", answer="Yes.").get_json()["pair"]["question_id"]]
    generate(runner, stub, "--questions", "authored", "--system", "author-answers")
    result = runner.invoke(args=["study", "create", "Authored study", "--questions", "authored",
                                 "--systems", "author-answers"])
    assert result.exit_code == 0, result.output
    with demo.app_context():
        study = db.session.scalars(select(Study).where(Study.name == "Authored study")).one()
        questions = db.session.scalars(select(StudyQuestion.question_id).where(StudyQuestion.study_id == study.id)
                                       .order_by(StudyQuestion.position)).all()
        assert questions == ids
        shown = db.session.scalars(select(Answer.text).join(StudyAnswer, StudyAnswer.answer_id == Answer.id)
                                   .where(StudyAnswer.study_id == study.id)).all()
        assert shown == ["A regenerated answer."] * 2
