"""Generation prompt versions stored as GenerationPrompt rows; an edit adds a version, never rewrites one."""
from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from ...extensions import db
from ...generate.prompts import LEVAL_PROFILE, SYSTEM_KEYS, TEMPLATE_KEYS, PromptProfile, validate_profile
from ...models import GenerationPrompt
from ..input_rules import text_problem


class PromptError(ValueError):
    """A prompt edit that cannot be saved, or a version that does not exist."""


def as_profile(row: GenerationPrompt) -> PromptProfile:
    content = row.content or {}
    return PromptProfile(name=row.name, version=row.version, systems=content.get("systems", {}),
                         templates=content.get("templates", {}),
                         fact_replace=tuple(content.get("fact_replace", ("", ""))))


def ensure_default() -> GenerationPrompt:
    """Return version 1 of the leval profile, seeding it on first use."""
    existing = _version(LEVAL_PROFILE.name, LEVAL_PROFILE.version)
    if existing is not None:
        return existing
    row = GenerationPrompt(name=LEVAL_PROFILE.name, version=LEVAL_PROFILE.version,
                           content=LEVAL_PROFILE.content(), fingerprint=LEVAL_PROFILE.fingerprint())
    db.session.add(row)
    try:
        db.session.commit()
    except IntegrityError:  # another process seeded it first
        db.session.rollback()
        return _version(LEVAL_PROFILE.name, LEVAL_PROFILE.version)
    return row


def _version(name: str, version: int) -> GenerationPrompt | None:
    return db.session.scalars(
        select(GenerationPrompt).where(GenerationPrompt.name == name, GenerationPrompt.version == version)
    ).first()


def list_versions() -> list[GenerationPrompt]:
    ensure_default()
    return list(db.session.scalars(
        select(GenerationPrompt).order_by(GenerationPrompt.name, GenerationPrompt.version.desc())))


def current(name: str = LEVAL_PROFILE.name) -> GenerationPrompt:
    ensure_default()
    row = db.session.scalars(select(GenerationPrompt).where(GenerationPrompt.name == name)
                             .order_by(GenerationPrompt.version.desc()).limit(1)).first()
    if row is None:
        raise PromptError(f"no prompt named {name!r}")
    return row


def get(prompt_id: int) -> GenerationPrompt | None:
    ensure_default()
    return db.session.get(GenerationPrompt, prompt_id)


def by_version(version: int, name: str = LEVAL_PROFILE.name) -> GenerationPrompt:
    ensure_default()
    row = _version(name, version)
    if row is None:
        raise PromptError(f"prompt {name!r} has no version {version}")
    return row


def create_version(base: GenerationPrompt, systems: dict[str, str], templates: dict[str, str],
                   user_id: int | None = None) -> GenerationPrompt:
    """Save an edit of `base` as the newest version of its prompt (unchanged text saves nothing)."""
    clean = lambda text: text.replace("\r\n", "\n")  # noqa: E731 - browsers send CRLF
    systems = {k: clean(v) for k, v in systems.items() if k in SYSTEM_KEYS}
    templates = {k: clean(v) for k, v in templates.items() if k in TEMPLATE_KEYS}
    for kind, texts in (("system message", systems), ("template", templates)):
        for key, text in texts.items():
            problem = text_problem(text)
            if problem:
                raise PromptError(f"{kind} {key!r} {problem}; nothing was saved")
    profile = as_profile(base)
    edited = PromptProfile(profile.name, profile.version, {**profile.systems, **systems},
                           {**profile.templates, **templates}, profile.fact_replace)
    try:
        validate_profile(edited)
    except ValueError as exc:
        raise PromptError(str(exc)) from None
    newest = current(base.name)
    if edited.fingerprint() == as_profile(newest).fingerprint():
        return newest
    for _ in range(3):  # two editors at once: the loser takes the next number
        number = (db.session.scalar(select(func.max(GenerationPrompt.version))
                                    .where(GenerationPrompt.name == base.name)) or 0) + 1
        row = GenerationPrompt(name=base.name, version=number, content=edited.content(),
                               fingerprint=edited.fingerprint(), created_by_id=user_id)
        db.session.add(row)
        try:
            db.session.commit()
            return row
        except IntegrityError:
            db.session.rollback()
    raise PromptError("another edit was saved at the same moment; please try again")
