"""Versioned prompts of every kind (judge, rater, generation): seeded once, numbered per name, never rewritten.

Each kind keeps its own table (JudgePrompt, RaterPrompt, GenerationPrompt), all with `name` and `version`
columns unique together; this module owns how such rows are found, seeded and added, and the one rule
for edits: an edit becomes the next version of its prompt, and an edit that changes nothing saves nothing.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from app.extensions import db

Row = TypeVar("Row")
# Two editors saving at once: the loser takes the next number, up to this many times.
EDIT_ATTEMPTS = 3


class PromptError(ValueError):
    """A prompt edit that cannot be saved, or a version that does not exist; the message says why."""


def find_version(model: type[Row], name: str, version: int) -> Row | None:
    """Return one version of a named prompt, or None."""
    return db.session.scalars(select(model).where(model.name == name, model.version == version)).first()


def newest_version(model: type[Row], name: str) -> Row | None:
    """Return the highest version of a named prompt, or None."""
    return db.session.scalars(select(model).where(model.name == name).order_by(model.version.desc()).limit(1)).first()


def all_versions(model: type[Row]) -> list[Row]:
    """Return every version, newest first within each name."""
    return list(db.session.scalars(select(model).order_by(model.name, model.version.desc())))


def seed_version(model: type[Row], name: str, version: int, **fields: Any) -> Row:
    """Return a shipped version, storing it on first use (another process may store it first)."""
    existing = find_version(model, name, version)
    if existing is not None:
        return existing
    row = model(name=name, version=version, **fields)
    db.session.add(row)
    try:
        db.session.commit()
    except IntegrityError:  # another process seeded it first
        db.session.rollback()
        return find_version(model, name, version)
    return row


def add_next_version(model: type[Row], name: str, **fields: Any) -> Row | None:
    """Store the next version of a named prompt; None when another edit took that number at the same time."""
    number = (db.session.scalar(select(func.max(model.version)).where(model.name == name)) or 0) + 1
    row = model(name=name, version=number, **fields)
    db.session.add(row)
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        return None
    return row


class PromptVersions:
    """One kind's versions, its shipped default seeded before any read (so every list starts with it)."""

    def __init__(self, model: type, seed_default: Callable[[], Any], default_name: str):
        self.model, self.seed_default, self.default_name = model, seed_default, default_name

    def all(self) -> list:
        self.seed_default()
        return all_versions(self.model)

    def newest(self, name: str | None = None):
        self.seed_default()
        name = name or self.default_name
        row = newest_version(self.model, name)
        if row is None:
            raise PromptError(f"no prompt named {name!r}")
        return row

    def get(self, prompt_id: int):
        self.seed_default()
        return db.session.get(self.model, prompt_id)

    def by_version(self, version: int, name: str | None = None):
        self.seed_default()
        name = name or self.default_name
        row = find_version(self.model, name, version)
        if row is None:
            raise PromptError(f"prompt {name!r} has no version {version}")
        return row


def normalise_newlines(text: str) -> str:
    """Browsers send CRLF; versions are compared and stored with LF."""
    return text.replace("\r\n", "\n")


def save_edit(model: type[Row], base: Any, *, new_fingerprint: str, old_fingerprint: str, user_id: int | None,
              **fields: Any) -> Row:
    """Store an edit of `base` as the next version of its prompt; earlier versions stay as they were.

    `new_fingerprint` and `old_fingerprint` identify the edited and the original content: equal ones
    raise PromptError, since a version that changes nothing would only blur which one a run used.
    """
    if new_fingerprint == old_fingerprint:
        raise PromptError("nothing changed: the edit is identical to the version it started from")
    for _ in range(EDIT_ATTEMPTS):
        row = add_next_version(model, base.name, created_by_id=user_id, **fields)
        if row is not None:
            return row
    raise PromptError("someone saved another version at the same time; reload and try again")


def save_message_edit(model: type[Row], base: Any, *, template_type: Callable[..., Any],
                      validate: Callable[[Any], None], system_text: str, user_template: str,
                      user_id: int | None) -> Row:
    """An edit of a two-message prompt (a system message and a user template: the judge's and the rater's).

    Newlines as the browser sends them are folded, the edit is checked by the core's validator, and it is
    saved as the next version (an unchanged edit saves nothing).
    """
    system_text = normalise_newlines(system_text).strip()
    user_template = normalise_newlines(user_template).strip()
    candidate = template_type(base.name, base.version, system_text, user_template)
    try:
        validate(candidate)
    except ValueError as exc:
        raise PromptError(str(exc)) from None
    original = template_type(base.name, base.version, base.system_text, base.user_template)
    return save_edit(model, base, new_fingerprint=candidate.fingerprint(), old_fingerprint=original.fingerprint(),
                     user_id=user_id, system_text=system_text, user_template=user_template)
