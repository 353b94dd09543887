"""The documents of an `evidence` run (the rater's or the judge's): each one read once, cut once to the model's
context with generation's token counting and `fit` truncation (what was cut is recorded, as generation does),
and indexed once to check the quotes of every reply about it (app.core.evidence, app.core.quotes)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from sqlalchemy import select

from app.core.evidence import REPLY_TOKENS, Quote, check_quotes, fit_document
from app.core.generation.authoring import to_shown
from app.core.generation.tokens import counter_for
from app.core.generation.truncate import Truncation
from app.core.quotes import DocumentIndex
from app.extensions import db
from app.models import Document


class EvidenceDocuments:
    """One run's documents by id: their stored text and fingerprint, their cut, their quote index."""

    def __init__(self, model: str, context_tokens: int, document_ids: Iterable[int]) -> None:
        self.counter = counter_for(model)
        self.context_tokens = context_tokens
        ids = sorted(set(document_ids))
        self.texts: dict[int, tuple[str, str]] = {
            row.id: (row.text, row.sha256) for row in db.session.execute(
                select(Document.id, Document.text, Document.sha256).where(Document.id.in_(ids)))
        } if ids else {}
        self.cuts: dict[int, Truncation] = {}
        self._indexes: dict[int, DocumentIndex] = {}

    def fingerprint(self, document_id: int) -> str:
        return self.texts[document_id][1]

    def fit(self, prompt_tokens: Mapping[int, int]) -> None:
        """Cut each document once, to the context less the reply and the longest rest of a prompt about it.

        ValueError when a context leaves no room for a document.
        """
        for document_id, tokens in prompt_tokens.items():
            self.cuts[document_id] = fit_document(self.texts[document_id][0], self.counter,
                                                  context_tokens=self.context_tokens, reply_tokens=REPLY_TOKENS,
                                                  prompt_tokens=tokens)

    def shown(self, document_id: int) -> str:
        """The document as the prompt shows it (after `fit`)."""
        return self.cuts[document_id].text

    def check(self, document_id: int, quotes: Iterable[Quote]) -> dict:
        """What a reply's quotes are worth: each checked against the whole stored document."""
        index = self._indexes.get(document_id)
        if index is None:
            index = self._indexes[document_id] = DocumentIndex(self.texts[document_id][0])
        return {"document_id": document_id, "quotes": check_quotes(index, quotes)}

    def record(self) -> dict:
        """The run's record of its cuts: the tokenizer, and per document what was kept and cut."""
        return {"tokenizer": self.counter.describe(), "context_tokens": self.context_tokens,
                "reply_tokens": REPLY_TOKENS, "documents": len(self.cuts),
                "documents_cut": sum(cut.cut for cut in self.cuts.values()),
                "cuts": {str(document_id): cut.record() for document_id, cut in sorted(self.cuts.items()) if cut.cut}}


def shown_spans(text: str, quotes: Iterable[dict]) -> list[dict]:
    """The located quotes as spans of the text the document pane shows (its offsets, as the authoring page's)."""
    return [{"start": to_shown(text, q["start"]), "end": to_shown(text, q["end"]), "quote": q["quote"],
             "status": q["status"]} for q in quotes if q["start"] is not None]
