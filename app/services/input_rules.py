"""What text the database can store, checked where input arrives: the one owner of these rules.

PostgreSQL refuses a NUL character (U+0000) in any text and a string longer than its column;
SQLite stores both silently. Every boundary (the importers, the upload preview, the score API,
the judge settings, the account forms) asks here, so both databases refuse the same input with
the same message, naming the field. Maximum lengths come from the model columns themselves.
"""
from __future__ import annotations

import re
from typing import Any

from sqlalchemy.orm import InstrumentedAttribute

from app.core.filenames import is_hidden, is_only_dots, is_windows_reserved
from app.core.text import strings_in
from app.models import Prediction, PredictionFile, Study, System

NUL = "\x00"
NUL_PROBLEM = "contains a NUL character (\\u0000), which the database cannot store"
# JSON's \\u escapes can name half of a surrogate pair; no database (nor UTF-8) can store it.
SURROGATE_PROBLEM = "holds half of a surrogate pair, which is not valid Unicode text"
_SURROGATE = re.compile("[\ud800-\udfff]")
# A name people read beside other names and type again (a system's, a study's): it holds nothing that hides (bidi
# controls, zero-width characters), nothing a path reads as a folder (/ \\, only dots) and no space at either end.
_READABLE_NAME = ("no control characters, no invisible or text-direction characters (such as U+202E or U+200B), "
                  "no / or \\, no space at either end")
# A system name (docs/uploads.md, "Limits") also becomes a file name (`<name>.pred.jsonl`, downloads): no device
# name Windows reserves.
SYSTEM_NAME_RULE = (f"a system name has 1 to 120 characters, {_READABLE_NAME}, is not only dots "
                    "and is not a name Windows reserves (CON, PRN, AUX, NUL, COM1-COM9, LPT1-LPT9)")
# A study name (docs/studies.md): scripts find a study by it (`GET /api/v1/studies?name=`, `--study NAME`).
STUDY_NAME_RULE = f"a study name has 1 to 120 characters, {_READABLE_NAME} and is not only dots"
_PATH_SEPARATORS = frozenset("/\\")
# Longest answer annotators are shown without a researcher's decision (docs/uploads.md, "Limits"); longer ones are
# imported and scored by the metrics, but held out of studies until a researcher shows them.
MAX_HUMAN_ANSWER_CHARS = 100_000


class InputRefused(ValueError):
    """Text the database cannot store; `field` names it."""

    def __init__(self, field: str, message: str):
        self.field, self.message = field, message
        super().__init__(f"{field}: {message}")


def column_length(column: InstrumentedAttribute) -> int:
    """The declared length of a String column, e.g. 20 for Prediction.evaluation."""
    return column.property.columns[0].type.length


def text_problem(value: str, *, limit: int | None = None, column: InstrumentedAttribute | None = None) -> str | None:
    """Why value cannot be stored (a NUL character, longer than its column or limit), or None."""
    if NUL in value:
        return NUL_PROBLEM
    if _SURROGATE.search(value):
        return SURROGATE_PROBLEM
    limit = column_length(column) if column is not None else limit
    if limit is not None and len(value) > limit:
        return f"is {len(value):,} characters long; at most {limit:,} are allowed"
    return None


def check_text(value: str, field: str, *, limit: int | None = None,
               column: InstrumentedAttribute | None = None) -> str:
    """Return value, or raise InputRefused naming the field."""
    problem = text_problem(value, limit=limit, column=column)
    if problem:
        raise InputRefused(field, problem)
    return value


def unstorable_field(data: Any, field: str = "") -> tuple[str, str] | None:
    """(field, why) for the first top-level key of a parsed value (or the key itself) holding text the database
    cannot store (a NUL character or half a surrogate pair, at any depth), or None."""
    if isinstance(data, dict):
        for key, value in data.items():
            problem = text_problem(key) if isinstance(key, str) else None
            if problem:
                return key.replace(NUL, "\\u0000").encode("utf-8", "backslashreplace").decode(), problem
            problem = _unstorable(value)
            if problem:
                return field or str(key), problem
        return None
    problem = _unstorable(data)
    return (field or "value", problem) if problem else None


def _unstorable(value: Any) -> str | None:
    return next(filter(None, map(text_problem, strings_in(value))), None)


def system_name_problem(name: str) -> str | None:
    """Why a system name is refused (empty, too long, NUL or outside SYSTEM_NAME_RULE), or None: the one check of
    every path that names a system (uploads, the command-line importers, LV-Eval, generation's *Store as system*)."""
    if not name:
        return "the system name is empty (a file named only `.pred.jsonl`?)"
    problem = text_problem(name, column=System.name)
    if problem:
        return f"the system name {problem}"
    if not _is_readable_name(name) or is_windows_reserved(name):
        return f"the system name {name[:60]!r} is not allowed: {SYSTEM_NAME_RULE}"
    return None


def study_name_problem(name: str) -> str | None:
    """Why a study name is refused (empty, too long, NUL or outside STUDY_NAME_RULE), or None: the one check of
    a new study's name (the New study form, the API, `study create`)."""
    problem = text_problem(name, column=Study.name)
    if not name or problem or not _is_readable_name(name):
        return f"the study name {name[:60]!r} is not allowed: {STUDY_NAME_RULE}"
    return None


def _is_readable_name(name: str) -> bool:
    return not (name != name.strip() or any(ch in _PATH_SEPARATORS or is_hidden(ch) for ch in name)
                or is_only_dots(name))


def upload_name_problem(name: str) -> str | None:
    """Why an uploaded file's name (or a zip member's path) cannot be recorded, or None."""
    problem = text_problem(name, column=PredictionFile.filename)
    return f"the file name {problem}" if problem else None


def pred_key_problem(key: str) -> str | None:
    return text_problem(key, column=System.pred_key)


def evaluation_problem(value: str) -> str | None:
    return text_problem(value, column=Prediction.evaluation)


def long_answer_flag(text: str) -> str:
    """"held" for an answer over the cap for human evaluation, else ""."""
    from app.models.corpus import LONG_ANSWER_HELD

    return LONG_ANSWER_HELD if len(text) > MAX_HUMAN_ANSWER_CHARS else ""


def lveval_row_errors(parsed) -> list:
    """FileFormatErrors for the LV-Eval rows (of a parsed LvevalFile) whose text the database cannot store."""
    from app.core.metrics.files import FileFormatError

    errors = []
    for row in parsed.rows:
        for field_name, value in (("pred", row.pred), ("input", row.input), ("gold_ans", row.gold_ans)):
            problem = text_problem(value) if isinstance(value, str) else None
            if problem:
                errors.append(FileFormatError(parsed.name, problem, line=row.line, field=field_name))
    return errors
