"""Rater prompt versions stored as RaterPrompt rows; an edit adds a version, never rewrites one."""
from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from ...extensions import db
from ...models import RaterPrompt
from ...rater import DEFAULT_RATER_TEMPLATE, RaterTemplate, validate_template


class RaterPromptError(ValueError):
    """A prompt edit that cannot be saved."""


def as_template(prompt: RaterPrompt) -> RaterTemplate:
    return RaterTemplate(prompt.name, prompt.version, prompt.system_text, prompt.user_template)


def _version(name: str, version: int) -> RaterPrompt | None:
    return db.session.scalars(select(RaterPrompt).where(RaterPrompt.name == name, RaterPrompt.version == version)).first()


def ensure_default_rater_prompt() -> RaterPrompt:
    """Version 1 of the default rater prompt, seeded on first use."""
    template = DEFAULT_RATER_TEMPLATE
    existing = _version(template.name, template.version)
    if existing is not None:
        return existing
    prompt = RaterPrompt(name=template.name, version=template.version, system_text=template.system,
                         user_template=template.user_template)
    db.session.add(prompt)
    try:
        db.session.commit()
    except IntegrityError:  # another process seeded it first
        db.session.rollback()
        return _version(template.name, template.version)
    return prompt


def list_rater_prompts() -> list[RaterPrompt]:
    ensure_default_rater_prompt()
    return list(db.session.scalars(select(RaterPrompt).order_by(RaterPrompt.name, RaterPrompt.version.desc())))


def current_rater_prompt() -> RaterPrompt:
    """The newest version of the default rater prompt."""
    ensure_default_rater_prompt()
    return db.session.scalars(select(RaterPrompt).where(RaterPrompt.name == DEFAULT_RATER_TEMPLATE.name)
                              .order_by(RaterPrompt.version.desc()).limit(1)).first()


def get_rater_prompt(prompt_id: int) -> RaterPrompt | None:
    ensure_default_rater_prompt()
    return db.session.get(RaterPrompt, prompt_id)


def create_rater_version(base: RaterPrompt, *, system_text: str, user_template: str,
                         user_id: int | None = None) -> RaterPrompt:
    """Save an edit of `base` as the next version of its prompt; earlier versions stay as they were."""
    system_text = system_text.replace("\r\n", "\n").strip()
    user_template = user_template.replace("\r\n", "\n").strip()
    candidate = RaterTemplate(base.name, base.version, system_text, user_template)
    try:
        validate_template(candidate)
    except ValueError as exc:
        raise RaterPromptError(str(exc)) from None
    if candidate.fingerprint() == as_template(base).fingerprint():
        raise RaterPromptError("nothing changed: the edit is identical to the version it started from")
    latest = db.session.scalar(select(func.max(RaterPrompt.version)).where(RaterPrompt.name == base.name)) or 0
    prompt = RaterPrompt(name=base.name, version=latest + 1, system_text=system_text, user_template=user_template,
                         created_by_id=user_id)
    db.session.add(prompt)
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        raise RaterPromptError("someone saved another version at the same time; reload and try again") from None
    return prompt
