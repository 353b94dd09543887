"""Generation prompt versions stored as GenerationPrompt rows; an edit adds a version, never rewrites one."""
from __future__ import annotations

from app.extensions import db
from app.core.generation.prompts import LEVAL_PROFILE, SYSTEM_KEYS, TEMPLATE_KEYS, PromptProfile, validate_profile
from app.models import GenerationPrompt
from app.services.input_rules import text_problem
from app.services.prompt_versions import (
    add_next_version, all_versions, find_version, newest_version, normalise_newlines, seed_version,
)


class PromptError(ValueError):
    """A prompt edit that cannot be saved, or a version that does not exist."""


def as_profile(row: GenerationPrompt) -> PromptProfile:
    content = row.content or {}
    return PromptProfile(name=row.name, version=row.version, systems=content.get("systems", {}),
                         templates=content.get("templates", {}),
                         fact_replace=tuple(content.get("fact_replace", ("", ""))))


def ensure_default() -> GenerationPrompt:
    """Return version 1 of the leval profile, seeding it on first use."""
    return seed_version(GenerationPrompt, LEVAL_PROFILE.name, LEVAL_PROFILE.version,
                        content=LEVAL_PROFILE.content(), fingerprint=LEVAL_PROFILE.fingerprint())


def list_versions() -> list[GenerationPrompt]:
    ensure_default()
    return all_versions(GenerationPrompt)


def current(name: str = LEVAL_PROFILE.name) -> GenerationPrompt:
    ensure_default()
    row = newest_version(GenerationPrompt, name)
    if row is None:
        raise PromptError(f"no prompt named {name!r}")
    return row


def get(prompt_id: int) -> GenerationPrompt | None:
    ensure_default()
    return db.session.get(GenerationPrompt, prompt_id)


def by_version(version: int, name: str = LEVAL_PROFILE.name) -> GenerationPrompt:
    ensure_default()
    row = find_version(GenerationPrompt, name, version)
    if row is None:
        raise PromptError(f"prompt {name!r} has no version {version}")
    return row


def create_version(base: GenerationPrompt, systems: dict[str, str], templates: dict[str, str],
                   user_id: int | None = None) -> GenerationPrompt:
    """Save an edit of `base` as the newest version of its prompt (unchanged text saves nothing)."""
    systems = {k: normalise_newlines(v) for k, v in systems.items() if k in SYSTEM_KEYS}
    templates = {k: normalise_newlines(v) for k, v in templates.items() if k in TEMPLATE_KEYS}
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
        row = add_next_version(GenerationPrompt, base.name, content=edited.content(),
                               fingerprint=edited.fingerprint(), created_by_id=user_id)
        if row is not None:
            return row
    raise PromptError("another edit was saved at the same moment; please try again")
