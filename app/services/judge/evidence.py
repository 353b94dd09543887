"""The judge's `evidence` profile: each pair gets its document (cut once per document to the judge's context,
beside the longest prompt about it), and each reply's quotes are checked against the stored document.

A quote names its answer by position (A or B); stored, it also names the side (system or baseline), so the
report can tell which system the judge quoted for, whatever the order."""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import replace

from sqlalchemy import select

from app.core.evidence import DEFAULT_CONTEXT_TOKENS
from app.core.judge import ORDERS, JudgmentResult, PromptTemplate, render_pair
from app.core.judge.profiles import JudgeProfile
from app.extensions import db
from app.models import Question
from app.services.judge.pairs import JudgePair
from app.services.llm.evidence import EvidenceDocuments


def side_of(order: str, answer: str) -> str:
    """Which system answer A or B is in this order: "AB" shows the system first."""
    return "system" if (order == "AB") == (answer == "A") else "baseline"


def documents_of(pairs: list[JudgePair]) -> dict[int, int]:
    ids = [pair.question_id for pair in pairs if pair.question_id is not None]
    return dict(db.session.execute(select(Question.id, Question.document_id).where(Question.id.in_(ids))).all()) \
        if ids else {}


def with_documents(pairs: list[JudgePair], template: PromptTemplate, model: str, profile: JudgeProfile,
                   context_tokens: int = DEFAULT_CONTEXT_TOKENS) -> tuple[list[JudgePair], EvidenceDocuments]:
    """The pairs with their documents as the prompt shows them, cut to `context_tokens` beside the longest rest of
    a prompt about them (with the profile's quote limit); ValueError when a context holds no document."""
    document_of = documents_of(pairs)
    documents = EvidenceDocuments(model, context_tokens, document_of.values())
    rest: dict[int, int] = {}
    for pair in pairs:
        document_id = document_of[pair.question_id]
        tokens = max(sum(documents.counter(m["content"])
                         for m in render_pair(template, pair.item, order, profile.max_quotes)) for order in ORDERS)
        rest[document_id] = max(rest.get(document_id, 0), tokens)
    documents.fit(rest)
    attached = []
    for pair in pairs:
        document_id = document_of[pair.question_id]
        shown = documents.shown(document_id)
        key = f"{documents.fingerprint(document_id)}:{hashlib.sha256(shown.encode('utf-8')).hexdigest()}"
        attached.append(replace(pair, item=replace(pair.item, document=shown, document_key=key)))
    return attached, documents


def quote_checker(pairs: list[JudgePair], documents: EvidenceDocuments) -> Callable[[JudgmentResult], dict]:
    document_of = documents_of(pairs)
    question_of = {pair.item.pair_id: pair.question_id for pair in pairs}

    def check(result: JudgmentResult) -> dict:
        checked = documents.check(document_of[question_of[result.pair_id]], result.quotes)
        for quote in checked["quotes"]:
            quote["side"] = side_of(result.order, quote["answer"])
        return checked

    return check
