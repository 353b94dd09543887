"""The long-document panel: the text cut into segments small enough to render and search smoothly.

L-Eval's documents are long (up to 255,521 characters) and shaped very differently: hard-wrapped
novels with no blank lines, transcripts with one speaker turn per line, review dumps that are a
single 70,000-character line. Segments group whole lines up to SEGMENT_CHARS and cut overlong
lines at sentence ends, so the browser renders a few hundred small blocks, never one giant node.
"""
from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass

from sqlalchemy import select

from app.core.text import segment_text
from app.extensions import db
from app.models import Document, Question, StudyAnswer
from app.services.studies.assignment import may_score
from app.services.studies.membership import SHOWN

# Bump when the segmentation changes, so browsers drop cached copies (it is part of the ETag).
SEGMENT_VERSION = 1
CACHE_SIZE = 24

@dataclass(frozen=True)
class DocumentPayload:
    etag: str
    body: bytes


class _PayloadCache:
    """A small LRU of serialised documents: the 255K text is cut and encoded once per process."""

    def __init__(self, size: int):
        self._size = size
        self._items: OrderedDict[tuple[int, str], DocumentPayload] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[int, str]) -> DocumentPayload | None:
        with self._lock:
            item = self._items.get(key)
            if item is not None:
                self._items.move_to_end(key)
            return item

    def put(self, key: tuple[int, str], payload: DocumentPayload) -> None:
        with self._lock:
            self._items[key] = payload
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)


_cache = _PayloadCache(CACHE_SIZE)


def document_version(sha256: str) -> str:
    """A short token naming this document text and segmentation (used in URLs and the ETag)."""
    return f"{sha256[:16]}-{SEGMENT_VERSION}"


def readable_by(user_id: int):
    """Over Document: the account may read it, as one of its questions is theirs to score (assignment.may_score)
    with an answer shown: the documents of their question pages, no other."""
    return Document.id.in_(
        select(Question.document_id).join(StudyAnswer, StudyAnswer.question_id == Question.id)
        .where(SHOWN, may_score(StudyAnswer.study_id, user_id, StudyAnswer.question_id)))


def document_payload(document_id: int, reader_id: int) -> DocumentPayload | None:
    """The JSON for the document panel, or None when there is no such document for this account."""
    # Checked before the cache: a cached text is served only to those who may read it.
    head = db.session.execute(
        select(Document.sha256).where(Document.id == document_id, readable_by(reader_id))
    ).first()
    if head is None:
        return None
    key = (document_id, head.sha256)
    cached = _cache.get(key)
    if cached is not None:
        return cached
    doc = db.session.execute(
        select(Document.title, Document.task, Document.text, Document.word_count).where(Document.id == document_id)
    ).one()
    body = {
        "id": document_id,
        "title": doc.title,
        "task": doc.task,
        "chars": len(doc.text),
        "words": doc.word_count,
        # [text, 1 if it starts a paragraph else 0]: compact, and keeps the JSON small.
        "segments": [[text, int(starts)] for text, starts in segment_text(doc.text)],
    }
    encoded = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    payload = DocumentPayload(etag=document_version(head.sha256), body=encoded)
    _cache.put(key, payload)
    return payload
