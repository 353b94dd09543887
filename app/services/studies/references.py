"""Answers that give a reference away, and answers that repeat each other.

In L-Eval's own subset claude-100k's answers are the "Claude-100k reference" and gpt4-32k's the
"GPT-4-32k reference": shown side by side, the reference names the system. Each study compares
every answer it shows with every reference it shows (app.core.metrics.similarity) and, by policy,
hides that reference on that question (default), shows it anyway, or leaves the system out.
Each comparison is made once per answer version and reference text and stored (text_repeats).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from sqlalchemy import delete, select
from sqlalchemy.exc import OperationalError

from app.core.metrics.similarity import NEAR_IDENTICAL_F1, REPEATS_RULE, repeats
from app.core.text import sha256_text
from app.extensions import db
from app.models import (
    Answer,
    Reference,
    Study,
    StudyAnswer,
    StudyHiddenReference,
    StudySystem,
    System,
    TextRepeat,
)
from app.models.corpus import REFERENCE_LABELS
from app.services.sqlite_writer import one_writer
from app.services.studies import twins
from app.services.studies.membership import SHOWN

LOOKUP_CHUNK = 500  # hashes per IN (…) list: well under SQLite's and PostgreSQL's parameter limits


@dataclass(frozen=True)
class ReferenceMatch:
    question_id: int
    system_id: int
    system: str
    kind: str
    match: str  # identical | near-identical


@dataclass
class Detection:
    matches: list[ReferenceMatch] = field(default_factory=list)
    # (question id, [system names]) where two or more systems gave the same answer
    shared_answers: list[tuple[int, list[str]]] = field(default_factory=list)
    # {(answer sha256, reference sha256): match} compared by this detect() and not stored yet
    unrecorded: dict[tuple[str, str], str] = field(default_factory=dict)

    def by_system(self) -> dict[str, dict[str, int]]:
        """{system: {"<kind> identical": n, "<kind> near-identical": n}} for the study page."""
        table: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for m in self.matches:
            table[m.system][f"{REFERENCE_LABELS.get(m.kind, m.kind)}: {m.match}"] += 1
        return {system: dict(counts) for system, counts in sorted(table.items())}


def detect(study: Study, *, include_excluded: bool = True) -> Detection:
    """Compare every answer of the study with the references it shows, and the answers with each other.

    Each (answer version, reference text) pair is compared once: the answer is read from
    text_repeats by both texts' sha256, and only pairs never compared before are computed; they wait
    in `Detection.unrecorded` for refresh() or record() to store.
    """
    kinds = list(study.reference_kinds or [])
    stmt = (
        select(StudyAnswer.question_id, StudyAnswer.system_id, System.name, Answer.text, Answer.sha256)
        .join(Answer, Answer.id == StudyAnswer.answer_id).join(System, System.id == StudyAnswer.system_id)
        .where(StudyAnswer.study_id == study.id)
        .order_by(StudyAnswer.question_id, System.name)
    )
    if not include_excluded:
        stmt = stmt.where(SHOWN)
    answers: dict[int, list[tuple[int, str, str, str]]] = defaultdict(list)
    for question_id, system_id, name, text, sha in db.session.execute(stmt):
        answers[question_id].append((system_id, name, text, sha))
    references: dict[int, dict[str, tuple[str, str]]] = defaultdict(dict)
    if kinds and answers:
        for question_id, kind, text in db.session.execute(
            select(Reference.question_id, Reference.kind, Reference.text)
            .where(Reference.question_id.in_(list(answers)), Reference.kind.in_(kinds))
        ):
            references[question_id][kind] = (text, sha256_text(text))
    found = Detection()
    known = _stored_repeats({sha for given in answers.values() for *_, sha in given})
    for question_id, given in answers.items():
        for system_id, name, text, sha in given:
            for kind, (reference, reference_sha) in references[question_id].items():
                key = (sha, reference_sha)
                if key not in known:
                    known[key] = repeats(text, reference) or ""
                    found.unrecorded[key] = known[key]
                if known[key]:
                    found.matches.append(ReferenceMatch(question_id, system_id, name, kind, known[key]))
        groups: dict[str, list[str]] = defaultdict(list)
        for _, name, text, _ in given:
            shown = twins.shows_as(text)  # the twins' rule: what the annotator's page shows
            if shown:
                groups[shown].append(name)
        found.shared_answers += [(question_id, names) for names in groups.values() if len(names) > 1]
    return found


def _stored_repeats(text_shas: set[str]) -> dict[tuple[str, str], str]:
    """{(text sha256, other sha256): match} stored under today's rule for these texts."""
    known: dict[tuple[str, str], str] = {}
    shas = sorted(text_shas)
    for start in range(0, len(shas), LOOKUP_CHUNK):
        for text_sha, other_sha, match in db.session.execute(
            select(TextRepeat.text_sha256, TextRepeat.other_sha256, TextRepeat.match)
            .where(TextRepeat.rule == REPEATS_RULE, TextRepeat.text_sha256.in_(shas[start:start + LOOKUP_CHUNK]))
        ):
            known[(text_sha, other_sha)] = match
    return known


def _store_repeats(found: dict[tuple[str, str], str]) -> None:
    """Add compared pairs in the session's transaction; a pair another process stored meanwhile is kept as it is."""
    if not found:
        return
    if db.session.get_bind().dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    rows = [{"rule": REPEATS_RULE, "text_sha256": text_sha, "other_sha256": other_sha, "match": match}
            for (text_sha, other_sha), match in sorted(found.items())]
    for start in range(0, len(rows), LOOKUP_CHUNK):
        db.session.execute(insert(TextRepeat).on_conflict_do_nothing(), rows[start:start + LOOKUP_CHUNK])
    found.clear()


def record(detection: Detection) -> None:
    """Store what a read-only detect() compared for the first time, in a commit of its own.

    A page that only shows the check calls it; a failed write (the database busy or read-only) costs
    only the next view the same comparisons.
    """
    if not detection.unrecorded:
        return
    try:
        with one_writer():
            _store_repeats(detection.unrecorded)
            db.session.commit()
    except OperationalError:
        db.session.rollback()


def refresh(study: Study) -> Detection:
    """Apply the study's policy to what the answers it shows repeat; record that the check was made."""
    detection = detect(study, include_excluded=False)
    _store_repeats(detection.unrecorded)
    db.session.execute(delete(StudyHiddenReference).where(StudyHiddenReference.study_id == study.id))
    if study.reference_policy == "hide":
        reasons: dict[tuple[int, str], list[str]] = defaultdict(list)
        for m in detection.matches:
            reasons[(m.question_id, m.kind)].append(f"{m.match} to an answer under evaluation")
        for (question_id, kind), why in sorted(reasons.items()):
            db.session.add(StudyHiddenReference(study_id=study.id, question_id=question_id, kind=kind,
                                                reason="; ".join(sorted(set(why)))))
    elif study.reference_policy == "exclude":
        leaving = {m.system_id for m in detection.matches}
        if leaving:
            db.session.execute(delete(StudySystem).where(StudySystem.study_id == study.id,
                                                         StudySystem.system_id.in_(leaving)))
            for slot in db.session.scalars(select(StudyAnswer).where(
                    StudyAnswer.study_id == study.id, StudyAnswer.system_id.in_(leaving))):
                slot.excluded = True
    study.references_checked = True
    db.session.flush()
    twins.refresh(study)
    return detection


def hidden_kinds(study_id: int, question_id: int) -> set[str]:
    """The reference kinds hidden on this question of the study."""
    return set(db.session.scalars(select(StudyHiddenReference.kind).where(
        StudyHiddenReference.study_id == study_id, StudyHiddenReference.question_id == question_id)))


def hidden_counts(study_id: int) -> dict[str, int]:
    """{reference kind: questions on which it is hidden}."""
    counts: dict[str, int] = defaultdict(int)
    for kind in db.session.scalars(select(StudyHiddenReference.kind).where(StudyHiddenReference.study_id == study_id)):
        counts[kind] += 1
    return dict(counts)


__all__ = ["NEAR_IDENTICAL_F1", "Detection", "ReferenceMatch", "detect", "hidden_counts", "hidden_kinds", "record",
           "refresh"]
