"""Generation prompt versions stored as GenerationPrompt rows; an edit adds a version, never rewrites one."""
from __future__ import annotations

from app.core.generation.prompts import (
    LEVAL_PROFILE,
    SYSTEM_KEYS,
    TEMPLATE_KEYS,
    PromptProfile,
    validate_profile,
)
from app.models import GenerationPrompt
from app.services.input_rules import text_problem
from app.services.llm.prompt_versions import (
    PromptError,
    PromptVersions,
    normalise_newlines,
    save_edit,
    seed_version,
)


def as_profile(row: GenerationPrompt) -> PromptProfile:
    content = row.content or {}
    return PromptProfile(name=row.name, version=row.version, systems=content.get("systems", {}),
                         templates=content.get("templates", {}),
                         fact_replace=tuple(content.get("fact_replace", ("", ""))))


def ensure_default() -> GenerationPrompt:
    """Return version 1 of the leval profile, seeding it on first use."""
    return seed_version(GenerationPrompt, LEVAL_PROFILE.name, LEVAL_PROFILE.version,
                        content=LEVAL_PROFILE.content(), fingerprint=LEVAL_PROFILE.fingerprint())


_versions = PromptVersions(GenerationPrompt, ensure_default, LEVAL_PROFILE.name)


def list_versions() -> list[GenerationPrompt]:
    return _versions.all()


def current(name: str = LEVAL_PROFILE.name) -> GenerationPrompt:
    return _versions.newest(name)


def get(prompt_id: int) -> GenerationPrompt | None:
    return _versions.get(prompt_id)


def by_version(version: int, name: str = LEVAL_PROFILE.name) -> GenerationPrompt:
    return _versions.by_version(version, name)


def create_version(base: GenerationPrompt, systems: dict[str, str], templates: dict[str, str],
                   user_id: int | None = None) -> GenerationPrompt:
    """Save an edit of `base` as the newest version of its prompt (unchanged text raises PromptError)."""
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
    return save_edit(GenerationPrompt, base, new_fingerprint=edited.fingerprint(), old_fingerprint=profile.fingerprint(),
                     user_id=user_id, content=edited.content(), fingerprint=edited.fingerprint())
