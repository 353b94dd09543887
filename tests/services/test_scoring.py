"""Scoring services in a study: blind ordering, workload order, resume, history, rounds, export."""
from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from app.extensions import db
from app.models import AnnotationRound, Answer, QuestionView, Score, ScoreRevision, StudyAnswer, StudySystem, System
from app.services.annotation import blinding, rounds, scoring, workload
from app.core.text import SEGMENT_CHARS, segment_text
from app.services.annotation.oversight import annotator_progress
from app.services.exports.rows import score_rows
from app.services.studies.lookup import require_study
from app.services.studies.setup import set_systems
from tests.support.scoring_helpers import demo, user_id  # noqa: F401  (fixture)


def _study():
    return require_study()


def _context(round_, question_id: int) -> scoring.SaveContext:
    blinding.ensure_view(round_, question_id)
    return scoring.load_save_context(round_.annotator_id, round_.study_id, question_id)


def _save(round_, question_id: int, answer, value: int, comment: str = ""):
    return scoring.save_score(_context(round_, question_id), answer.answer_id, answer.sha256, answer.label, value,
                              comment)


def _score_all(round_, question_id: int, value: int = 3) -> None:
    view = blinding.ensure_view(round_, question_id)
    for answer in blinding.visible_answers(view, round_.study_id):
        _save(round_, question_id, answer, value)


def _open(annotator: str = "annotator"):
    study = _study()
    round_ = rounds.open_round(study.id, user_id_now(annotator))
    return study, round_


def user_id_now(username: str) -> int:
    from app.models import User

    return db.session.scalar(select(User.id).where(User.username == username))


def _workload(study, round_):
    return workload.load_workload(study, round_.id if round_ else None, round_.annotator_id if round_ else 0)


def test_labels_round_trip():
    from app.services.annotation import payload  # the labels' one owner (the save body's parsing)

    assert [payload.answer_label(i) for i in (0, 1, 25, 26, 27, 701)] == ["A", "B", "Z", "AA", "AB", "ZZ"]
    for i in range(800):
        assert payload.label_index(payload.answer_label(i)) == i
    for bad in ("", "a", "A1", "ABCD", None, 3):
        assert payload.label_index(bad) is None


def test_shuffle_uses_every_order_and_keeps_the_ids():
    ids = list(range(100, 104))
    orders = Counter(tuple(blinding.shuffled(ids)) for _ in range(4000))
    assert all(sorted(order) == ids for order in orders)
    assert len(orders) == 24, "a secure shuffle reaches all 4! orders"
    assert max(orders.values()) < 4000 / 24 * 1.6


def test_view_order_is_stored_once_and_reused(demo):
    with demo.app_context():
        study, round_ = _open()
        question_id = _workload(study, round_).slots[0].question_id
        view = blinding.ensure_view(round_, question_id)
        order = list(view.order)
        assert sorted(order) == sorted(blinding.shown_slot_ids(study.id, question_id, round_.annotator_id))
        again = blinding.ensure_view(round_, question_id)
        assert again.id == view.id and again.order == order
        assert db.session.scalar(select(func.count(QuestionView.id))) == 1
        labels = [a.label for a in blinding.visible_answers(view, study.id)]
        assert labels == ["A", "B", "C", "D"]


def test_a_system_joining_later_is_appended_without_moving_seen_labels(demo):
    with demo.app_context():
        study = _study()
        systems = {s.name: s.id for s in db.session.scalars(select(System))}
        set_systems(study, [systems["verbose-7b"], systems["terse-13b"], systems["shaky-3b"]])
        db.session.commit()
        _, round_ = _open()
        question_id = _workload(study, round_).slots[0].question_id
        before = {a.label: a.answer_id for a in blinding.visible_answers(blinding.ensure_view(round_, question_id), study.id)}
        assert len(before) == 3
        set_systems(study, list(systems.values()))
        db.session.commit()
        view = blinding.ensure_view(round_, question_id)
        after = {a.label: a.answer_id for a in blinding.visible_answers(view, study.id)}
        assert {k: after[k] for k in before} == before and len(after) == 4
        added = db.session.scalar(select(Answer.id).where(
            Answer.question_id == question_id, Answer.system_id == systems["balanced-34b"]))
        assert after["D"] == added


def test_leaving_a_system_out_hides_its_answer_but_keeps_the_score(demo):
    with demo.app_context():
        study, round_ = _open()
        question_id = _workload(study, round_).slots[0].question_id
        _score_all(round_, question_id, 4)
        assert _workload(study, round_).done == 4
        view = blinding.ensure_view(round_, question_id)
        hidden = blinding.visible_answers(view, study.id)[1]
        system_id = db.session.get(Answer, hidden.answer_id).system_id
        everyone = list(db.session.scalars(select(StudySystem.system_id).where(StudySystem.study_id == study.id)))
        set_systems(study, [s for s in everyone if s != system_id])
        db.session.commit()
        visible = blinding.visible_answers(view, study.id)
        assert [a.label for a in visible] == ["A", "C", "D"]  # labels never shift
        assert blinding.resolve_label(view, study.id, "B") is None
        loaded = _workload(study, round_)
        assert (loaded.done, loaded.total) == (3, 30)
        assert db.session.scalar(select(func.count(Score.id))) == 4
        set_systems(study, everyone)
        db.session.commit()
        assert _workload(study, round_).done == 4


def test_workload_is_document_first(demo):
    with demo.app_context():
        study, round_ = _open()
        slots = _workload(study, round_).slots
        assert len(slots) == 10 and all(s.total == 4 for s in slots)
        documents = [s.document_id for s in slots]
        assert documents == sorted(documents), "all questions of a document come before the next document"
        for doc in set(documents):
            positions = [s.position for s in slots if s.document_id == doc]
            assert positions == sorted(positions)


def test_resume_goes_to_the_question_last_worked_on_while_it_has_unscored_answers(demo):
    with demo.app_context():
        study, round_ = _open()
        slots = _workload(study, round_).slots
        assert _workload(study, round_).resume_at(None).question_id == slots[0].question_id
        _score_all(round_, slots[0].question_id)
        view = blinding.ensure_view(round_, slots[3].question_id)
        first = blinding.visible_answers(view, study.id)[0]
        _save(round_, slots[3].question_id, first, 2)
        assert rounds.last_worked_question(round_.id) == slots[3].question_id
        loaded = _workload(study, round_)
        assert loaded.resume_at(rounds.last_worked_question(round_.id)).question_id == slots[3].question_id
        assert loaded.first_open().question_id == slots[1].question_id
        _score_all(round_, slots[3].question_id)
        loaded = _workload(study, round_)
        assert loaded.resume_at(slots[3].question_id).question_id == slots[4].question_id  # the next open one
        assert (loaded.done, loaded.total) == (8, 40)
        for slot in slots:
            _score_all(round_, slot.question_id)
        finished = _workload(study, round_)
        assert finished.resume_at(slots[3].question_id) is None and finished.complete


def test_history_keeps_every_change_and_repeats_change_nothing(demo):
    with demo.app_context():
        study, round_ = _open()
        question_id = _workload(study, round_).slots[0].question_id
        view = blinding.ensure_view(round_, question_id)
        answer = blinding.visible_answers(view, study.id)[0]
        first = scoring.save_score(_context(round_, question_id), answer.answer_id, answer.sha256, answer.label, 3, "",
                                   seconds=90)
        assert first.changed and db.session.scalars(select(Score)).one().seconds_spent == 90
        assert not _save(round_, question_id, answer, 3).changed
        _save(round_, question_id, answer, 5)
        _save(round_, question_id, answer, 5, "clear and complete")
        score = db.session.scalars(select(Score)).one()
        history = [(r.old_value, r.new_value, r.old_comment, r.new_comment) for r in scoring.revisions_of(score.id)]
        assert history == [(None, 3, None, ""), (3, 5, "", ""), (5, 5, "", "clear and complete")]
        assert all(r.changed_at is not None for r in db.session.scalars(select(ScoreRevision)))
        assert score.answer_label == "A" and score.value == 5 and score.answer_sha256 == answer.sha256


SHA = "a" * 64


@pytest.mark.parametrize("body, field", [
    ({"study": 1, "question_id": 1, "label": "A", "answer": SHA, "value": True}, "value"),
    ({"study": 1, "question_id": 1, "label": "A", "answer": SHA, "value": 3.0}, "value"),
    ({"study": 1, "question_id": 1, "label": "A", "answer": SHA, "value": "3"}, "value"),
    ({"study": 1, "question_id": 1, "label": "A", "answer": SHA, "value": 0}, "value"),
    ({"study": 1, "question_id": 1, "label": "A", "answer": SHA, "value": 6}, "value"),
    ({"study": 1, "question_id": 1, "label": "A", "answer": SHA}, "value"),
    ({"study": 1, "question_id": "1", "label": "A", "answer": SHA, "value": 3}, "question_id"),
    ({"study": 1, "question_id": 2 ** 63, "label": "A", "answer": SHA, "value": 3}, "question_id"),
    ({"question_id": 1, "label": "A", "answer": SHA, "value": 3}, "study"),
    ({"study": 1, "question_id": 1, "label": 7, "answer": SHA, "value": 3}, "label"),
    ({"study": 1, "question_id": 1, "label": "A", "value": 3}, "answer"),
    ({"study": 1, "question_id": 1, "label": "A", "answer": "A" * 64, "value": 3}, "answer"),
    ({"study": 1, "question_id": 1, "label": "A", "answer": SHA, "value": 3, "comment": ["x"]}, "comment"),
    ({"study": 1, "question_id": 1, "label": "A", "answer": SHA, "value": 3, "comment": "x" * 4001}, "comment"),
    ({"study": 1, "question_id": 1, "label": "A", "answer": SHA, "value": 3, "round": "1"}, "round"),
])
def test_payload_validation_rejects(body, field):
    with pytest.raises(scoring.ScoreError) as caught:
        scoring.parse_score_payload(body)
    assert caught.value.field == field and caught.value.status == 400


def test_payload_validation_accepts_and_normalises():
    parsed = scoring.parse_score_payload({"study": 2, "question_id": 4, "label": "B", "value": 5, "answer": SHA,
                                          "comment": "  ok\r\nfine "})
    assert (parsed.study_id, parsed.question_id, parsed.label, parsed.value, parsed.comment, parsed.round_number) == (
        2, 4, "B", 5, "ok\nfine", None)
    with pytest.raises(scoring.ScoreError):
        scoring.parse_score_payload(["not", "an", "object"])


def test_database_refuses_out_of_range_values(demo):
    from sqlalchemy.exc import IntegrityError

    with demo.app_context():
        _, round_ = _open()
        answer = db.session.scalars(select(StudyAnswer)).first().answer
        db.session.add(Score(round_id=round_.id, annotator_id=round_.annotator_id, answer_id=answer.id, value=9))
        with pytest.raises(IntegrityError):
            db.session.commit()
        db.session.rollback()


def test_begin_again_archives_the_round_and_keeps_its_scores(demo):
    with demo.app_context():
        study = _study()
        annotator, admin = user_id_now("annotator"), user_id_now("admin")
        with pytest.raises(rounds.BeginAgainError):
            rounds.begin_again(study.id, annotator, admin)
        first = rounds.open_round(study.id, annotator)
        question_id = _workload(study, first).slots[0].question_id
        _score_all(first, question_id, 2)
        result = rounds.begin_again(study.id, annotator, admin)
        assert (result.archived_number, result.archived_scores, result.new_number) == (1, 4, 2)
        archived = db.session.get(AnnotationRound, first.id)
        assert archived.status == "archived" and archived.archived_by_id == admin and archived.archived_at
        assert db.session.scalar(select(func.count(Score.id)).where(Score.round_id == first.id)) == 4
        second = rounds.open_round(study.id, annotator)
        assert second.number == 2 and _workload(study, second).done == 0
        row = next(r for r in annotator_progress(study) if r.username == "annotator")
        assert row.round_number == 2 and row.done == 0
        assert [(r.number, r.scores) for r in row.earlier_rounds] == [(1, 4)]


def test_export_writes_current_scores_with_the_listed_fields(demo):
    with demo.app_context():
        study = _study()
        annotator = user_id_now("annotator")
        first = rounds.open_round(study.id, annotator)
        slots = _workload(study, first).slots
        _score_all(first, slots[0].question_id, 2)
        rounds.begin_again(study.id, annotator, user_id_now("admin"))
        second = rounds.open_round(study.id, annotator)
        _score_all(second, slots[1].question_id, 5)
        other = rounds.open_round(study.id, user_id_now("annotator2"))
        _score_all(other, slots[0].question_id, 1)
        rows = score_rows(study.id, "current")
        assert len(rows) == 8
        required = {"annotator", "system", "document_id", "question_id", "query", "answer_label", "score",
                    "comment", "scored_at", "seconds_spent", "answer_sha256", "stale", "study"}
        assert all(required <= set(r) for r in rows) and not any(r["stale"] for r in rows)
        mine = [r for r in rows if r["annotator"] == "annotator"]
        assert {(r["round"], r["question_id"], r["score"]) for r in mine} == {(2, slots[1].question_id, 5)}
        assert {r["answer_label"] for r in mine} == {"A", "B", "C", "D"}
        assert len({r["system"] for r in mine}) == 4
        assert len(score_rows(study.id, "all")) == 12  # the archived first round is kept
        with pytest.raises(ValueError):
            score_rows(study.id, "latest-ish")


LINES = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=300)


@settings(max_examples=150, deadline=None)
@given(st.lists(LINES, max_size=40), st.integers(min_value=20, max_value=400))
def test_segments_are_small_and_keep_all_the_text(lines, limit):
    text = "\n".join(lines)
    segments = segment_text(text, limit)
    assert all(0 < len(seg) <= limit for seg, _ in segments)
    # Nothing lost, added or reordered: only the whitespace at the cuts may differ.
    assert "".join("".join(seg for seg, _ in segments).split()) == "".join(text.split())


def test_segments_follow_paragraphs_and_cut_long_lines_at_sentences():
    long_line = " ".join(f"Sentence number {i} ends here." for i in range(200))
    text = "First paragraph\nsecond line.\n\n" + long_line + "\n\n\nLast."
    segments = segment_text(text)
    assert segments[0] == ("First paragraph\nsecond line.", True)
    middle = segments[1:-1]
    assert middle[0][1] is True and all(not starts for _, starts in middle[1:])
    assert all(seg.rstrip().endswith(".") and len(seg) <= SEGMENT_CHARS for seg, _ in middle)
    assert segments[-1] == ("Last.", True)
