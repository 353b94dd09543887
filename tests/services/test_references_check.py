"""The references check compares each answer version with each reference text once, not on every view (issue 38).

The oracle is the comparison itself (app.core.metrics.similarity.repeats), counted: after a study is
set up, showing its page compares nothing again, and what the page says is what a fresh comparison
of every pair says. A changed reference is a new text and is compared again.
"""
from __future__ import annotations

import pytest
from sqlalchemy import delete, func, select, update

from app.core.metrics.similarity import repeats
from app.extensions import db
from app.models import Reference, Study, StudyAnswer, TextRepeat
from app.services.importers import import_path
from app.services.studies import references
from app.services.studies.setup import StudySpec, create_study
from tests.conftest import PASSWORDS, AuthActions
from tests.support.study_data import write_study_set


@pytest.fixture
def counted(monkeypatch):
    """Count every comparison the references check makes."""
    calls = []

    def counting(answer, other, *args, **kwargs):
        calls.append((answer, other))
        return repeats(answer, other, *args, **kwargs)

    monkeypatch.setattr(references, "repeats", counting)
    return calls


def _study(app, tmp_path) -> int:
    folder = write_study_set(tmp_path / "data", documents=2, questions_each=3, copies_gpt4="east-2b",
                             near_claude="south-3b")
    with app.app_context():
        assert not import_path(folder).failed
        return create_study(StudySpec(name="Visitors", status="open")).id


def _fresh_matches(study_id: int) -> set[tuple]:
    """Every (question, system, kind, match) by comparing each pair now, as the check did on every view."""
    study = db.session.get(Study, study_id)
    found = set()
    for slot in db.session.scalars(select(StudyAnswer).where(StudyAnswer.study_id == study_id)):
        for reference in db.session.scalars(select(Reference).where(Reference.question_id == slot.question_id,
                                                                    Reference.kind.in_(study.reference_kinds))):
            match = repeats(slot.answer.text, reference.text)
            if match:
                found.add((slot.question_id, slot.system_id, reference.kind, match))
    return found


def _staff(app):
    client = app.test_client()
    assert AuthActions(client).login("researcher", PASSWORDS["researcher"]).status_code == 302
    return client


def test_the_study_page_compares_nothing_a_pin_already_compared(app, tmp_path, counted):
    study_id = _study(app, tmp_path)
    assert counted, "creating the study compares its answers with its references"
    counted.clear()
    staff = _staff(app)
    for _ in range(2):
        page = staff.get(f"/studies/{study_id}")
        assert page.status_code == 200
    assert "GPT-4-32k reference: identical: 6" in page.get_data(as_text=True)
    assert counted == []
    with app.app_context():
        shown = {(m.question_id, m.system_id, m.kind, m.match)
                 for m in references.detect(db.session.get(Study, study_id)).matches}
        assert counted == []
        assert shown == _fresh_matches(study_id) and shown


def test_a_study_checked_before_the_store_existed_is_compared_once_on_its_first_view(app, tmp_path, counted):
    study_id = _study(app, tmp_path)
    with app.app_context():
        pairs = db.session.scalar(select(func.count()).select_from(TextRepeat))
        db.session.execute(delete(TextRepeat))  # as the migration leaves an existing study: nothing stored
        db.session.commit()
    counted.clear()
    staff = _staff(app)
    assert staff.get(f"/studies/{study_id}").status_code == 200
    assert len(counted) == pairs
    counted.clear()
    assert staff.get(f"/studies/{study_id}").status_code == 200
    assert counted == []


def test_a_changed_reference_is_compared_again_and_an_older_rule_is_not_trusted(app, tmp_path, counted):
    study_id = _study(app, tmp_path)
    with app.app_context():
        study = db.session.get(Study, study_id)
        before = {(m.question_id, m.system_id, m.kind) for m in references.detect(study).matches}
        assert any(kind == "gpt4-32k" for *_, kind in before)
        counted.clear()
        question_id = min(q for q, _, kind in before if kind == "gpt4-32k")
        db.session.execute(update(Reference).where(Reference.question_id == question_id,
                                                   Reference.kind == "gpt4-32k").values(text="Something else entirely."))
        db.session.commit()
        after = references.detect(study)
        assert {other for _, other in counted} == {"Something else entirely."}
        assert {(m.question_id, m.system_id, m.kind) for m in after.matches} == {
            key for key in before if not (key[0] == question_id and key[2] == "gpt4-32k")}
        db.session.execute(update(TextRepeat).values(rule="an older rule"))
        db.session.commit()
        counted.clear()
        assert {(m.question_id, m.system_id, m.kind, m.match) for m in references.detect(study).matches} \
            == _fresh_matches(study_id)
        assert counted, "rows of another rule are not read as today's answers"
