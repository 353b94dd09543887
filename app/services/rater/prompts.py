"""Rater prompt versions stored as RaterPrompt rows; an edit adds a version, never rewrites one."""
from __future__ import annotations

from app.extensions import db
from app.models import RaterPrompt
from app.core.rater import DEFAULT_RATER_TEMPLATE, RaterTemplate, validate_template
from app.services.prompt_versions import add_next_version, all_versions, newest_version, normalise_newlines, seed_version


class RaterPromptError(ValueError):
    """A prompt edit that cannot be saved."""


def as_template(prompt: RaterPrompt) -> RaterTemplate:
    return RaterTemplate(prompt.name, prompt.version, prompt.system_text, prompt.user_template)


def ensure_default_rater_prompt() -> RaterPrompt:
    """Version 1 of the default rater prompt, seeded on first use."""
    template = DEFAULT_RATER_TEMPLATE
    return seed_version(RaterPrompt, template.name, template.version, system_text=template.system,
                        user_template=template.user_template)


def list_rater_prompts() -> list[RaterPrompt]:
    ensure_default_rater_prompt()
    return all_versions(RaterPrompt)


def current_rater_prompt() -> RaterPrompt:
    """The newest version of the default rater prompt."""
    ensure_default_rater_prompt()
    return newest_version(RaterPrompt, DEFAULT_RATER_TEMPLATE.name)


def get_rater_prompt(prompt_id: int) -> RaterPrompt | None:
    ensure_default_rater_prompt()
    return db.session.get(RaterPrompt, prompt_id)


def create_rater_version(base: RaterPrompt, *, system_text: str, user_template: str,
                         user_id: int | None = None) -> RaterPrompt:
    """Save an edit of `base` as the next version of its prompt; earlier versions stay as they were."""
    system_text = normalise_newlines(system_text).strip()
    user_template = normalise_newlines(user_template).strip()
    candidate = RaterTemplate(base.name, base.version, system_text, user_template)
    try:
        validate_template(candidate)
    except ValueError as exc:
        raise RaterPromptError(str(exc)) from None
    if candidate.fingerprint() == as_template(base).fingerprint():
        raise RaterPromptError("nothing changed: the edit is identical to the version it started from")
    prompt = add_next_version(RaterPrompt, base.name, system_text=system_text, user_template=user_template,
                              created_by_id=user_id)
    if prompt is None:
        raise RaterPromptError("someone saved another version at the same time; reload and try again")
    return prompt
