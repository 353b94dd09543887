"""Import human-eval reference files and task files as documents, questions and references."""
from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import func, select

from app.core.metrics.files import FileFormatError, Row, file_stem
from app.core.text import document_title, match_key, sha256_text, word_count
from app.extensions import db
from app.models import Document, Question, Reference
from app.models.corpus import HUMAN_EVAL, TASKS
from app.services.importers.fields import optional_str, require_str, require_str_list

# JSON key of each reference kind in the human-eval reference file.
REFERENCE_KEYS = {"human": "outputs", "gpt4-32k": "gpt4_outputs", "claude-100k": "claude_outputs"}


@dataclass
class ParsedDocument:
    line: int
    text: str
    task: str
    source: str
    evaluation: str
    instructions: list[str]
    references: dict[str, list[str]] = field(default_factory=dict)


def parse_reference_rows(rows: list[Row], name: str) -> list[ParsedDocument]:
    """Validate a human-eval reference file (instructions, outputs, gpt4_outputs, claude_outputs)."""
    parsed = []
    for row in rows:
        instructions = _instructions(row, name)
        refs = {kind: require_str_list(row, key, name, length=len(instructions)) for kind, key in REFERENCE_KEYS.items()}
        source = require_str(row, "source", name, column=Document.task)  # the source names the task
        parsed.append(ParsedDocument(
            line=row.line, text=require_str(row, "input", name), task=source.strip(), source=source,
            evaluation=optional_str(row, "evaluation", name, column=Question.evaluation) or "human",
            instructions=instructions, references=refs,
        ))
    return parsed


def parse_task_rows(rows: list[Row], name: str, task: str) -> list[ParsedDocument]:
    """Validate an L-Eval task file (instructions, outputs, input, source?, evaluation)."""
    parsed = []
    for row in rows:
        instructions = _instructions(row, name)
        outputs = require_str_list(row, "outputs", name, length=len(instructions))
        parsed.append(ParsedDocument(
            line=row.line, text=require_str(row, "input", name), task=task,
            source=optional_str(row, "source", name, column=Document.source) or task,
            evaluation=require_str(row, "evaluation", name, column=Question.evaluation), instructions=instructions,
            references={"human": outputs},
        ))
    return parsed


def parse_document_file(rows: list[Row], name: str, fmt: str) -> list[ParsedDocument]:
    """Validate a file of documents by its format ("references" or "task"); a task file is named after its task."""
    if fmt == "references":
        return parse_reference_rows(rows, name)
    return parse_task_rows(rows, name, task=file_stem(name))


def _instructions(row: Row, name: str) -> list[str]:
    instructions = require_str_list(row, "instructions", name)
    if not instructions:
        raise FileFormatError(name, "has no questions", line=row.line, field="instructions")
    return instructions


def title_for_new_document(text: str, collection: str, task: str, *, demo: bool = False) -> str:
    """The title of a document about to be stored: its own title line, else its task and number in that task.

    The shipped demo's documents are numbered apart, so real data starts at 1 beside the demo.
    """
    number = db.session.scalar(
        select(func.count(Document.id))
        .where(Document.collection == collection, Document.task == task, Document.is_demo.is_(demo))
    ) + 1
    return document_title(text, task, number)


@dataclass
class DocumentCounts:
    documents: int = 0
    questions: int = 0
    references: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0


def store_documents(parsed: list[ParsedDocument], *, collection: str, name: str, demo: bool = False) -> DocumentCounts:
    """Upsert parsed documents in the current transaction; identical content changes nothing.

    Lines that repeat a document's text (gsm100 shares one few-shot context) add their
    questions to the same document, so a long text is stored and read once.
    """
    counts = DocumentCounts()
    seen_docs: set[int] = set()
    claimed: dict[int, set[int]] = {}
    for doc in parsed:
        digest = sha256_text(doc.text)
        existing = db.session.scalars(
            select(Document).where(
                Document.collection == collection, Document.task == doc.task, Document.sha256 == digest
            )
        ).first()
        if existing is None:
            existing = Document(
                collection=collection, task=doc.task, source=doc.source,
                title=title_for_new_document(doc.text, collection, doc.task, demo=demo),
                text=doc.text, sha256=digest, word_count=word_count(doc.text), char_count=len(doc.text),
                evaluation=doc.evaluation, source_file=name, line_no=doc.line, is_demo=demo,
            )
            db.session.add(existing)
            db.session.flush()
            counts.created += 1
        if existing.id not in seen_docs:
            seen_docs.add(existing.id)
            counts.documents += 1
        _store_questions(existing, doc, counts, claimed.setdefault(existing.id, set()))
    return counts


def _store_questions(document: Document, doc: ParsedDocument, counts: DocumentCounts, claimed: set[int]) -> None:
    """Match this line's questions to stored ones by content; `claimed` holds ids used this run."""
    by_key: dict[str, list[Question]] = {}
    for question in document.questions:
        by_key.setdefault(question.match_key, []).append(question)
    next_position = max((q.position for q in document.questions), default=-1) + 1
    for position, instruction in enumerate(doc.instructions):
        human = doc.references["human"][position]
        key = match_key(instruction, human)
        question = next((q for q in by_key.get(key, []) if q.id not in claimed), None)
        if question is None:
            question = Question(
                document=document, position=next_position, instruction=instruction, reference=human,
                evaluation=doc.evaluation, match_key=key,
            )
            next_position += 1
            db.session.add(question)
            db.session.flush()
            counts.created += 1
        elif question.evaluation != doc.evaluation:
            question.evaluation = doc.evaluation
            counts.updated += 1
        else:
            counts.unchanged += 1
        claimed.add(question.id)
        counts.questions += 1
        stored = {ref.kind: ref for ref in question.references}
        for kind, texts in doc.references.items():
            ref = stored.get(kind)
            if ref is None:
                question.references.append(Reference(kind=kind, text=texts[position]))
                counts.created += 1
            elif ref.text != texts[position]:
                ref.text = texts[position]
                counts.updated += 1
            counts.references += 1


@dataclass
class DocumentPreview:
    """What store_documents would add: new documents, new questions, and questions already stored."""

    documents_new: int = 0
    questions_new: int = 0
    questions_stored: int = 0


def preview_documents(parsed: list[ParsedDocument], *, collection: str) -> DocumentPreview:
    """Count what store_documents would create, matching as it does (text sha256, then question keys); read-only."""
    result = DocumentPreview()
    stored_keys: dict[tuple[str, str], list[str]] = {}  # (task, sha256) -> keys of its questions, stored or to come
    for doc in parsed:
        slot = (doc.task, sha256_text(doc.text))
        if slot not in stored_keys:
            existing = db.session.scalars(select(Document).where(
                Document.collection == collection, Document.task == doc.task, Document.sha256 == slot[1])).first()
            stored_keys[slot] = [q.match_key for q in existing.questions] if existing is not None else []
            result.documents_new += existing is None
        keys = stored_keys[slot]
        for position, instruction in enumerate(doc.instructions):
            key = match_key(instruction, doc.references["human"][position])
            if key in keys:
                keys.remove(key)  # each stored question is claimed once, as _store_questions does
                result.questions_stored += 1
            else:
                result.questions_new += 1
    return result


def collection_for(kind: str) -> str:
    return HUMAN_EVAL if kind == "references" else TASKS
