"""Read back a study's `jsonl` and `leval` exports: `python run.py import-annotations FILE [--study S] [--replace]`.

A file is imported into one study in one transaction: a row that names an unknown system, a
question outside the study, or an answer version the database does not hold rejects the whole
file with its line and field. Unknown annotators are created active or inactive as the file says
(`annotator_active`; inactive when it does not say, as in L-Eval's layout), with an unusable random
password, and existing accounts are left as they are. A score that differs from
the stored one is a conflict: reported and kept as stored, unless replace is asked for.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

from sqlalchemy import func, select

from app.core.metrics.files import FileFormatError, Row, parse_jsonl
from app.core.rubric import is_score
from app.core.text import normalize_ws
from app.extensions import db
from app.models import AnnotationRound, Score, ScoreRevision, User
from app.models.base import utcnow
from app.services.accounts import USERNAME_RE, generate_password
from app.services.exports.leval import annotator_from_filename, split_scored_answer
from app.services.exports.lookup import StudyIndex
from app.services.exports.rows import parse_iso_utc
from app.services.planner_statistics import SCORED, analyze
from app.services.importers.fields import optional_str, require_str, require_str_list
from app.services.studies.twins import link_recorded

IMPORT_FORMATS = ("auto", "jsonl", "leval")
CONFLICT_EXAMPLES = 5
ROUND_STATUSES = ("open", "archived")


@dataclass
class ParsedScore:
    line: int
    field: str
    annotator: str
    round: int | None
    answer_id: int
    answer_sha256: str
    value: int
    describe: str
    # None: the file does not say (L-Eval's layout has no comments), so a stored value is kept.
    comment: str | None = None
    answer_label: str | None = None
    seconds_spent: float | None = None
    scored_at: datetime | None = None
    first_scored_at: datetime | None = None
    round_status: str | None = None
    annotator_active: bool | None = None
    shown_once_for: str = ""  # the systems one score was given for on a page showing their answers once
    question_id: int | None = None


@dataclass
class AnnotationImportReport:
    file: str
    format: str = ""
    rows: int = 0
    scores: int = 0
    created: int = 0
    unchanged: int = 0
    replaced: int = 0
    conflicts: int = 0
    conflict_examples: list[str] = field(default_factory=list)
    annotators_created: list[str] = field(default_factory=list)
    annotators_created_inactive: list[str] = field(default_factory=list)
    rounds_created: int = 0
    ignored_reference_scores: int = 0
    error: dict | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def detect_format(row: Row) -> str:
    """Tell a leval line (a document with its lists) from a jsonl score row."""
    if "instructions" in row.data and "input" in row.data:
        return "leval"
    if "score" in row.data and "annotator" in row.data:
        return "jsonl"
    return "unknown"


def import_annotations(path: Path, study_id: int, *, replace: bool = False, annotator: str | None = None,
                       fmt: str = "auto") -> AnnotationImportReport:
    """Import one exported file into a study in a single transaction and report what happened."""
    path = Path(path)
    name = path.name
    report = AnnotationImportReport(file=name)
    try:
        if not path.is_file():
            raise FileFormatError(name, "no such file")
        rows = parse_jsonl(path.read_bytes(), name)
        fmt = detect_format(rows[0]) if fmt == "auto" else fmt
        if fmt not in ("jsonl", "leval"):
            raise FileFormatError(name, "not an export: expected score rows (annotator, score, …) or L-Eval's "
                                      "per-document lines (instructions, input, <model>_pred, …)", line=rows[0].line)
        report.format, report.rows = fmt, len(rows)
        index = StudyIndex(study_id)
        if fmt == "leval":
            who = annotator or annotator_from_filename(name)
            if not who:
                raise FileFormatError(name, "whose scores are these? Name the file files_from_<name>.jsonl "
                                          "or give the annotator")
            parsed = parse_leval_scores(rows, name, index, who, report)
        else:
            parsed = parse_jsonl_scores(rows, name, index)
        report.scores = len(parsed)
        store_scores(parsed, name, study_id, replace=replace, report=report)
        db.session.commit()
        analyze(*SCORED)
    except FileFormatError as exc:
        db.session.rollback()
        return AnnotationImportReport(file=name, format=report.format, rows=report.rows, error=exc.as_dict())
    except Exception:
        db.session.rollback()
        raise
    return report


def _score_value(raw: object, name: str, line: int, field_name: str) -> int:
    """Accept 1..5 as a number or text ("4", "4.0"), as typed into L-Eval's form."""
    try:
        number = float(str(raw).strip()) if isinstance(raw, str) else float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise FileFormatError(name, f"score must be a whole number from 1 to 5, got {raw!r}",
                            line=line, field=field_name) from None
    if isinstance(raw, bool) or not math.isfinite(number) or number != int(number) or not is_score(int(number)):
        raise FileFormatError(name, f"score must be a whole number from 1 to 5, got {raw!r}", line=line, field=field_name)
    return int(number)


def _optional_number(row: Row, key: str, name: str, *, integer: bool = False) -> float | None:
    value = row.data.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise FileFormatError(name, f"expected a number, got {value!r}", line=row.line, field=key)
    if integer and (value != int(value) or value < 1):
        raise FileFormatError(name, f"expected a whole number of at least 1, got {value!r}", line=row.line, field=key)
    return value


def _optional_time(row: Row, key: str, name: str) -> datetime | None:
    text = optional_str(row, key, name)
    if not text:
        return None
    try:
        return parse_iso_utc(text)
    except ValueError:
        raise FileFormatError(name, f"not an ISO 8601 timestamp: {text!r}", line=row.line, field=key) from None


def _optional_bool(row: Row, key: str, name: str) -> bool | None:
    value = row.data.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, bool):
        raise FileFormatError(name, f"expected true or false, got {value!r}", line=row.line, field=key)
    return value


def _label(value: str | None) -> str | None:
    return None if value is None else value[:4]


def parse_jsonl_scores(rows: list[Row], name: str, index: StudyIndex) -> list[ParsedScore]:
    """Validate score rows and resolve each to a stored answer."""
    parsed = []
    for row in rows:
        system_name = require_str(row, "system", name)
        system = index.systems.get(system_name)
        if system is None:
            raise FileFormatError(name, f"no system named {system_name!r}", line=row.line, field="system")
        query = require_str(row, "query", name)
        questions = index.find_questions(query, optional_str(row, "gt", name), optional_str(row, "document_sha256", name))
        if len(questions) != 1:
            problem = "matches no question of the study" if not questions else "matches several questions: give document_sha256"
            raise FileFormatError(name, problem, line=row.line, field="query")
        expected = optional_str(row, "answer_sha256", name)
        if expected:
            answer = index.versions.get((system.id, questions[0].id, expected))
            if answer is None:
                raise FileFormatError(name, f"no stored answer version of {system_name} has this text: the scored "
                                      "answer is not in the database", line=row.line, field="answer_sha256")
        else:
            answer = index.shown.get((system.id, questions[0].id))
            if answer is None:
                raise FileFormatError(name, f"the study shows no answer of {system_name} to this question",
                                      line=row.line, field="system")
        status = optional_str(row, "round_status", name)
        if status and status not in ROUND_STATUSES:
            raise FileFormatError(name, f"expected one of {ROUND_STATUSES}", line=row.line, field="round_status")
        round_number = _optional_number(row, "round", name, integer=True)
        seconds = _optional_number(row, "seconds_spent", name)
        parsed.append(ParsedScore(
            line=row.line, field="score", annotator=require_str(row, "annotator", name),
            round=int(round_number) if round_number is not None else None, answer_id=answer.id,
            answer_sha256=answer.sha256,
            value=_score_value(row.data.get("score"), name, row.line, "score"),
            describe=f"{system_name} on question {questions[0].id}",
            comment=optional_str(row, "comment", name),
            answer_label=_label(optional_str(row, "answer_label", name)),
            seconds_spent=float(seconds) if seconds is not None else None,
            scored_at=_optional_time(row, "scored_at", name),
            first_scored_at=_optional_time(row, "first_scored_at", name),
            round_status=status or None,
            annotator_active=_optional_bool(row, "annotator_active", name),
            shown_once_for=optional_str(row, "shown_once_for", name) or "", question_id=questions[0].id,
        ))
    return parsed


def parse_leval_scores(rows: list[Row], name: str, index: StudyIndex, annotator: str,
                       report: AnnotationImportReport) -> list[ParsedScore]:
    """Validate L-Eval per-document lines; each scored `<model>_pred` answer becomes one score."""
    parsed = []
    for row in rows:
        questions = index.document_questions(require_str(row, "input", name))
        if questions is None:
            raise FileFormatError(name, "the study asks no question on this document", line=row.line, field="input")
        instructions = require_str_list(row, "instructions", name)
        if len(instructions) != len(questions) or any(
            normalize_ws(given) != normalize_ws(stored.instruction) for given, stored in zip(instructions, questions)
        ):
            raise FileFormatError(name, "the questions differ from the stored document's", line=row.line,
                                field="instructions")
        for key, value in row.data.items():
            if key in ("gpt4_outputs", "claude_outputs") and isinstance(value, list):
                # L-Eval's own files score the two references too; here they are references only.
                report.ignored_reference_scores += sum(
                    1 for item in value if isinstance(item, str) and split_scored_answer(item)[1] is not None
                )
            if not key.endswith("_pred"):
                continue
            system = index.system_for_pred_key(key)
            if system is None:
                raise FileFormatError(name, "no system uses this prediction key or name", line=row.line, field=key)
            answers = require_str_list(row, key, name, length=len(questions))
            for position, (item, question) in enumerate(zip(answers, questions)):
                text, score = split_scored_answer(item)
                if score is None:
                    continue
                answer = index.shown.get((system.id, question.id))
                if answer is None or normalize_ws(text) != normalize_ws(answer.text):
                    raise FileFormatError(name, f"answer {position} differs from the stored answer of {system.name}",
                                        line=row.line, field=key)
                parsed.append(ParsedScore(
                    line=row.line, field=key, annotator=annotator, round=None, answer_id=answer.id,
                    answer_sha256=answer.sha256,
                    value=_score_value(score, name, row.line, key),
                    describe=f"{system.name} on question {question.id}",
                ))
    return parsed


def _annotators(parsed: list[ParsedScore], name: str, report: AnnotationImportReport) -> dict[str, User]:
    """Find each named user; create unknown ones as annotators, active as the file says, with an unusable password."""
    users: dict[str, User] = {}
    said: dict[str, tuple[bool, int]] = {}  # username -> (active, first line saying so)
    for p in parsed:
        if p.annotator_active is None:
            continue
        first = said.setdefault(p.annotator, (p.annotator_active, p.line))
        if first[0] != p.annotator_active:
            raise FileFormatError(name, f"{p.annotator} is active on line {first[1]} of the file but not here"
                                  if first[0] else f"{p.annotator} is inactive on line {first[1]} of the file but "
                                  "active here", line=p.line, field="annotator_active")
    for username in sorted({p.annotator for p in parsed}):
        user = db.session.scalars(select(User).where(User.username == username)).first()
        if user is None:
            user = db.session.scalars(select(User).where(func.lower(User.username) == username.lower())).first()
        if user is None:
            if not USERNAME_RE.match(username):
                line = next(p.line for p in parsed if p.annotator == username)
                raise FileFormatError(name, f"{username!r} is not a valid username", line=line, field="annotator")
            active = said.get(username, (False, 0))[0]
            user = User(username=username, role="annotator", active=active)
            user.set_password(generate_password())  # nobody knows it: an admin resets it to hand the account over
            db.session.add(user)
            db.session.flush()
            report.annotators_created.append(username)
            if not active:
                report.annotators_created_inactive.append(username)
        users[username] = user
    return users


def _rounds(parsed: list[ParsedScore], users: dict[str, User], study_id: int, report: AnnotationImportReport) -> dict:
    """Find or create each (annotator, round) of the study; a score without a round goes to the annotator's latest."""
    user_ids = [user.id for user in users.values()]
    stored = {(r.annotator_id, r.number): r for r in db.session.scalars(
        select(AnnotationRound).where(AnnotationRound.study_id == study_id, AnnotationRound.annotator_id.in_(user_ids)))}
    latest = {}
    for annotator_id, number in stored:
        latest[annotator_id] = max(latest.get(annotator_id, 0), number)
    statuses: dict[tuple[int, int], str | None] = {}
    for p in parsed:
        user_id = users[p.annotator].id
        p.round = p.round or latest.get(user_id, 1)
        statuses.setdefault((user_id, p.round), p.round_status)
    created = {key for key in statuses if key not in stored}
    for user_id, number in sorted(created):
        stored[(user_id, number)] = AnnotationRound(study_id=study_id, annotator_id=user_id, number=number)
        db.session.add(stored[(user_id, number)])
        report.rounds_created += 1
    now = utcnow()
    # As after "begin again": an annotator's latest round is the open one, earlier ones are archived.
    for user_id in {user_id for user_id, _ in created}:
        top = max(number for annotator_id, number in stored if annotator_id == user_id)
        for (annotator_id, number), round_ in stored.items():
            if annotator_id != user_id:
                continue
            if (annotator_id, number) in created:
                round_.status = statuses[(annotator_id, number)] or ("open" if number == top else "archived")
            elif number < top and round_.status == "open":
                round_.status = "archived"
            if round_.status == "archived" and round_.archived_at is None:
                round_.archived_at = now
    db.session.flush()
    return stored


def store_scores(parsed: list[ParsedScore], name: str, study_id: int, *, replace: bool,
                 report: AnnotationImportReport) -> None:
    """Add new scores, count identical ones, and report (or, with replace, overwrite) differing ones."""
    if not parsed:
        return
    users = _annotators(parsed, name, report)
    rounds = _rounds(parsed, users, study_id, report)
    round_ids = [round_.id for round_ in rounds.values()]
    existing = {(s.round_id, s.answer_id): s for s in db.session.scalars(
        select(Score).where(Score.round_id.in_(round_ids)))}
    first_line: dict[tuple[int, int], int] = {}
    shown_once: dict[tuple, list[tuple[int, int]]] = {}
    for p in parsed:
        user = users[p.annotator]
        round_ = rounds[(user.id, p.round)]
        key = (round_.id, p.answer_id)
        if key in first_line:
            raise FileFormatError(name, f"a second score for the same answer, annotator and round (first on line "
                                      f"{first_line[key]})", line=p.line, field=p.field)
        first_line[key] = p.line
        if p.shown_once_for:
            shown_once.setdefault((round_.id, p.question_id, p.shown_once_for), []).append(key)
        created_at = p.first_scored_at or p.scored_at or utcnow()
        updated_at = p.scored_at or created_at
        current = existing.get(key)
        if current is None:
            db.session.add(Score(
                round_id=round_.id, annotator_id=user.id, answer_id=p.answer_id, answer_sha256=p.answer_sha256,
                value=p.value,
                comment=p.comment or "", answer_label=p.answer_label or "", seconds_spent=p.seconds_spent or 0.0,
                created_at=created_at, updated_at=updated_at,
            ))
            report.created += 1
        elif current.value == p.value and p.comment in (None, current.comment or ""):
            report.unchanged += 1
        elif replace or current.value is None:  # a cleared score has no value to conflict with
            comment = current.comment if p.comment is None else p.comment
            current.revisions.append(ScoreRevision(
                old_value=current.value, new_value=p.value, old_comment=current.comment, new_comment=comment))
            current.value, current.comment, current.updated_at = p.value, comment, updated_at
            if p.answer_label is not None:
                current.answer_label = p.answer_label
            if p.seconds_spent is not None:
                current.seconds_spent = p.seconds_spent
            report.replaced += 1
        else:
            report.conflicts += 1
            if len(report.conflict_examples) < CONFLICT_EXAMPLES:
                report.conflict_examples.append(
                    f"line {p.line}: {p.annotator}, round {p.round}, {p.describe}: stored {current.value}, file {p.value}")
    db.session.flush()
    if shown_once:  # each group: one score given for several systems' identical answers, kept as such
        ids = {(s.round_id, s.answer_id): s.id for s in db.session.scalars(
            select(Score).where(Score.round_id.in_(round_ids)))}
        link_recorded([[ids[key] for key in keys] for keys in shown_once.values()], study_id)
