"""Researchers' new instruction/answer pairs on stored documents: save, edit, delete, export, import.

Every pair is also a question (in an ``authored`` document with the same text), so generation
runs and studies can use it. A save names the version it edited: a stale save is refused with
who changed the pair and when, so two researchers never overwrite each other silently.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from sqlalchemy import func, select, update

from app.core.generation import authoring as core
from app.core.json_input import JsonRefused, read_json
from app.core.text import match_key, segment_text, sha256_text, word_count
from app.extensions import db
from app.models import AuthoredPair, Document, Prediction, Question, User
from app.models.base import utcnow
from app.models.generation import AUTHORED, IMPORTED
from app.services.importers.documents import title_for_new_document
from app.services.input_rules import (
    NUL,
    text_problem,
    unstorable_field,
    upload_name_problem,
)

PairError = core.PairError


class StaleEdit(Exception):
    """The pair changed (or was deleted) since the editor loaded it."""

    def __init__(self, pair: AuthoredPair):
        self.pair = pair
        if pair.deleted_at is not None:
            message = f"{pair.deleted_by_name or 'someone'} deleted this pair at {_iso(pair.deleted_at)}"
        else:
            message = (f"{pair.updated_by_name or pair.author_name or 'someone'} changed this pair at "
                       f"{_iso(pair.updated_at or pair.created_at)} (now version {pair.version})")
        super().__init__(message + "; nothing was saved. Reload to see their version.")


def _iso(value) -> str:
    return value.isoformat(timespec="seconds") if value else ""


def documents() -> list[dict]:
    """Every stored document one can author on, longest first, with its live pair count."""
    counts = dict(db.session.execute(select(AuthoredPair.document_id, func.count(AuthoredPair.id))
                                     .where(AuthoredPair.deleted_at.is_(None)).group_by(AuthoredPair.document_id)).all())
    rows = db.session.execute(select(Document.id, Document.title, Document.task, Document.collection,
                                     Document.word_count).where(Document.collection != AUTHORED)
                              .order_by(Document.word_count.desc(), Document.id))
    return [{"id": i, "title": t, "task": task, "collection": c, "words": w, "pairs": counts.get(i, 0)}
            for i, t, task, c, w in rows]


def pane_payload(document: Document) -> dict:
    """The document pane's segments, each with where it starts in the shown text and the gap after it."""
    shown = core.normalise_newlines(document.text)
    segments = segment_text(document.text)
    starts = core.segment_starts(shown, [text for text, _ in segments])
    out = []
    for i, ((text, paragraph), start) in enumerate(zip(segments, starts)):
        end = start + len(text)
        gap = shown[end:starts[i + 1]] if i + 1 < len(starts) else ""
        out.append([text, int(paragraph), start, gap])
    return {"id": document.id, "title": document.title, "task": document.task, "chars": len(shown),
            "segments": out}


def pair_json(pair: AuthoredPair, text: str) -> dict:
    spans = [{"start": core.to_shown(text, s["start"]), "end": core.to_shown(text, s["end"]),
              "quote": core.normalise_newlines(s["quote"])} for s in pair.evidence or []]
    return {"id": pair.id, "instruction": pair.instruction, "answer": pair.answer, "evidence": spans,
            "version": pair.version, "author": pair.author_name, "created_at": _iso(pair.created_at),
            "updated_by": pair.updated_by_name, "updated_at": _iso(pair.updated_at), "question_id": pair.question_id}


def authored_question_ids() -> list[int]:
    """The questions of every live pair, by document and then in the order they were written."""
    return list(db.session.scalars(
        select(AuthoredPair.question_id).where(AuthoredPair.deleted_at.is_(None), AuthoredPair.question_id.is_not(None))
        .order_by(AuthoredPair.document_id, AuthoredPair.id)))


def live_pairs(document_id: int) -> list[AuthoredPair]:
    return list(db.session.scalars(select(AuthoredPair).where(AuthoredPair.document_id == document_id,
                                                              AuthoredPair.deleted_at.is_(None))
                                   .order_by(AuthoredPair.id)))


def _authored_document(source: Document) -> Document:
    """The document that holds the questions of `source`'s pairs: an `authored` copy of its text."""
    found = db.session.scalars(select(Document).where(Document.collection == AUTHORED, Document.task == source.task,
                                                      Document.sha256 == source.sha256)).first()
    if found is None:
        found = Document(collection=AUTHORED, task=source.task, source=source.source, title=source.title,
                         text=source.text, sha256=source.sha256, word_count=source.word_count,
                         char_count=source.char_count, evaluation=source.evaluation, source_file="authored",
                         is_demo=source.is_demo)  # an authored copy of the demo is demo
        db.session.add(found)
        db.session.flush()
    return found


def _new_question(source: Document, instruction: str, answer: str) -> Question:
    holder = _authored_document(source)
    position = (db.session.scalar(select(func.max(Question.position)).where(Question.document_id == holder.id))
                if holder.id else None)
    question = Question(document_id=holder.id, position=(position if position is not None else -1) + 1,
                        instruction=instruction, reference=answer, evaluation=source.evaluation or "",
                        match_key=match_key(instruction, answer))
    db.session.add(question)
    db.session.flush()
    return question


def _stored_spans(text: str, raw_spans) -> list[dict]:
    if raw_spans is None:
        raw_spans = []
    if not isinstance(raw_spans, list):
        raise PairError("evidence: a list of spans")
    spans = []
    for i, raw in enumerate(raw_spans):
        if not isinstance(raw, dict):
            raise PairError(f"evidence {i + 1}: a span is an object with start, end and quote")
        try:
            spans.append(core.span_from_pane(text, raw.get("start"), raw.get("end"), raw.get("quote")).as_json())
        except PairError as exc:
            raise PairError(f"evidence {i + 1}: {str(exc).split(': ', 1)[-1]}") from None
    return spans


def _checked(document: Document, instruction, answer, spans) -> tuple[core.PairData, list[dict]]:
    unstorable = unstorable_field({"instruction": instruction, "answer": answer, "evidence": spans})
    if unstorable:
        raise PairError("{}: {}".format(*unstorable))
    stored = _stored_spans(document.text, spans)
    return core.check_pair(document.text, instruction, answer, stored), stored


def create_pair(document: Document, instruction, answer, spans, user: User) -> AuthoredPair:
    """Validate and save a new pair at once (its question too)."""
    pair_data, _ = _checked(document, instruction, answer, spans)
    question = _new_question(document, pair_data.instruction, pair_data.answer)
    pair = AuthoredPair(document_id=document.id, question_id=question.id, instruction=pair_data.instruction,
                        answer=pair_data.answer, evidence=[s.as_json() for s in pair_data.spans],
                        author_id=user.id if user else None, author_name=user.username if user else "")
    db.session.add(pair)
    db.session.commit()
    return pair


def _has_answers(question_id: int | None) -> bool:
    return question_id is not None and db.session.scalar(
        select(Prediction.id).where(Prediction.question_id == question_id).limit(1)) is not None


def update_pair(pair: AuthoredPair, expected_version: int, instruction, answer, spans, user: User) -> AuthoredPair:
    """Save an edit made on `expected_version`; StaleEdit if someone saved or deleted it since."""
    document = db.session.get(Document, pair.document_id)
    pair_data, _ = _checked(document, instruction, answer, spans)
    question_id = pair.question_id
    text_changed = (pair_data.instruction, pair_data.answer) != (pair.instruction, pair.answer)
    if text_changed and _has_answers(question_id):
        # Answers were given for the old text: they keep it; the pair gets a fresh question.
        question_id = _new_question(document, pair_data.instruction, pair_data.answer).id
    elif text_changed and question_id is not None:
        db.session.execute(update(Question).where(Question.id == question_id).values(
            instruction=pair_data.instruction, reference=pair_data.answer,
            match_key=match_key(pair_data.instruction, pair_data.answer)))
    result = db.session.execute(
        update(AuthoredPair).where(AuthoredPair.id == pair.id, AuthoredPair.version == expected_version,
                                   AuthoredPair.deleted_at.is_(None))
        .values(instruction=pair_data.instruction, answer=pair_data.answer,
                evidence=[s.as_json() for s in pair_data.spans], question_id=question_id,
                version=AuthoredPair.version + 1, updated_by_name=user.username, updated_at=utcnow()))
    if result.rowcount != 1:
        db.session.rollback()
        db.session.expire_all()
        raise StaleEdit(db.session.get(AuthoredPair, pair.id))
    db.session.commit()
    db.session.refresh(pair)
    return pair


def delete_pair(pair: AuthoredPair, expected_version: int, user: User) -> None:
    """Delete a pair (kept as a tombstone); its question goes too unless it has answers."""
    result = db.session.execute(
        update(AuthoredPair).where(AuthoredPair.id == pair.id, AuthoredPair.version == expected_version,
                                   AuthoredPair.deleted_at.is_(None))
        .values(deleted_at=utcnow(), deleted_by_name=user.username, version=AuthoredPair.version + 1))
    if result.rowcount != 1:
        db.session.rollback()
        db.session.expire_all()
        raise StaleEdit(db.session.get(AuthoredPair, pair.id))
    if pair.question_id is not None and not _has_answers(pair.question_id):
        question = db.session.get(Question, pair.question_id)
        db.session.execute(update(AuthoredPair).where(AuthoredPair.id == pair.id).values(question_id=None))
        db.session.delete(question)
    db.session.commit()


def _pair_data(pair: AuthoredPair) -> core.PairData:
    return core.PairData(pair.instruction, pair.answer,
                         tuple(core.Span(s["start"], s["end"], s["quote"]) for s in pair.evidence or []),
                         pair.author_name, _iso(pair.created_at), _iso(pair.updated_at))


def export_document(document: Document) -> tuple[str, str]:
    """Return (file name, the document's L-Eval task-file line with its new pairs)."""
    pairs = live_pairs(document.id)
    originals = [(q.instruction, q.reference) for q in document.questions]
    line = core.export_line(document.text, document.source or document.task, document.evaluation or "",
                            originals, [_pair_data(p) for p in pairs])
    name = f"{document.task or 'document'}-{document.id}.authored.jsonl"
    return name, json.dumps(line, ensure_ascii=False) + "\n"


@dataclass
class ImportReport:
    documents: int = 0
    created_documents: int = 0
    pairs_created: int = 0
    pairs_unchanged: int = 0


def import_file(raw: bytes, name: str, user: User) -> ImportReport:
    """Read an exported (or plain L-Eval) task file; store its documents and pairs. All or nothing."""
    problem = upload_name_problem(name)
    if problem:
        shown = name.replace(NUL, "\\u0000")[:80]
        raise PairError(f"{shown}: {problem}")
    try:
        lines = raw.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError:
        raise PairError(f"{name}: not UTF-8 text") from None
    parsed = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = read_json(line)
        except JsonRefused as exc:
            field = f", field {exc.field}" if exc.field else ""
            raise PairError(f"{name}, line {number}{field}: not valid JSON ({exc.reason}, column {exc.column})") from None
        where = f"{name}, line {number}"
        unstorable = unstorable_field(data)
        if unstorable:
            raise PairError("{}, field {}: {}".format(where, *unstorable))
        task_line = core.read_line(data, where)
        for pair in task_line.pairs:
            problem = text_problem(pair.author, column=AuthoredPair.author_name)
            if problem:
                raise PairError(f"{where}, field {core.AUTHORED_KEY} author: {problem}")
        parsed.append(task_line)
    if not parsed:
        raise PairError(f"{name}: no line to import")
    report = ImportReport()
    try:
        for line in parsed:
            document = _document_for(line, name, report)
            known = {(p.instruction, p.answer) for p in live_pairs(document.id)}
            for pair in line.pairs:
                if (pair.instruction, pair.answer) in known:
                    report.pairs_unchanged += 1
                    continue
                question = _new_question(document, pair.instruction, pair.answer)
                author = db.session.scalars(select(User).where(User.username == pair.author)).first()
                db.session.add(AuthoredPair(
                    document_id=document.id, question_id=question.id, instruction=pair.instruction,
                    answer=pair.answer, evidence=[s.as_json() for s in pair.spans],
                    author_id=author.id if author else None, author_name=pair.author or user.username,
                    updated_by_name=user.username if pair.author and pair.author != user.username else ""))
                known.add((pair.instruction, pair.answer))
                report.pairs_created += 1
        db.session.commit()
    except Exception:
        db.session.rollback()
        raise
    return report


def _document_for(line: core.TaskLine, name: str, report: ImportReport) -> Document:
    digest = sha256_text(line.text)
    report.documents += 1
    found = db.session.scalars(select(Document).where(Document.sha256 == digest, Document.collection != AUTHORED)
                               .order_by(Document.id)).first()
    if found is not None:
        return found
    task = line.source or name.rsplit("/", 1)[-1].split(".")[0]
    document = Document(collection=IMPORTED, task=task[:80], source=line.source[:200],
                        title=title_for_new_document(line.text, IMPORTED, task[:80]),
                        text=line.text, sha256=digest, word_count=word_count(line.text), char_count=len(line.text),
                        evaluation=line.evaluation[:20], source_file=name[:500])
    db.session.add(document)
    db.session.flush()
    for position, (instruction, answer) in enumerate(line.originals):
        db.session.add(Question(document_id=document.id, position=position, instruction=instruction,
                                reference=answer, evaluation=line.evaluation[:20],
                                match_key=match_key(instruction, answer)))
    db.session.flush()
    report.created_documents += 1
    return document
