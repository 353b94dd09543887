"""Rater prompt versions stored as RaterPrompt rows; an edit adds a version, never rewrites one."""
from __future__ import annotations

from app.core.rater import (
    DEFAULT_RATER_TEMPLATE,
    EVIDENCE_RATER_TEMPLATE,
    RaterTemplate,
    validate_template,
)
from app.core.rater.prompt import is_evidence
from app.models import RaterPrompt
from app.services.llm.prompt_versions import (
    PromptError,
    PromptVersions,
    save_message_edit,
    seed_version,
)

RaterPromptError = PromptError  # the rater's name for the one prompt error


def as_template(prompt: RaterPrompt) -> RaterTemplate:
    return RaterTemplate(prompt.name, prompt.version, prompt.system_text, prompt.user_template)


# Each profile's shipped prompt: the reference-only one (the default) and the evidence one (it shows the document).
PROFILE_TEMPLATES = {"reference": DEFAULT_RATER_TEMPLATE, "evidence": EVIDENCE_RATER_TEMPLATE}


def ensure_default_rater_prompt() -> RaterPrompt:
    """Version 1 of each profile's rater prompt, seeded on first use; returns the default's."""
    rows = [seed_version(RaterPrompt, t.name, t.version, system_text=t.system, user_template=t.user_template)
            for t in PROFILE_TEMPLATES.values()]
    return rows[0]


_versions = PromptVersions(RaterPrompt, ensure_default_rater_prompt, DEFAULT_RATER_TEMPLATE.name)


def list_rater_prompts() -> list[RaterPrompt]:
    return _versions.all()


def current_rater_prompt(profile: str = "reference") -> RaterPrompt:
    """The newest version of a profile's rater prompt (the reference-only one by default)."""
    return _versions.newest(PROFILE_TEMPLATES[profile].name)


def get_rater_prompt(prompt_id: int) -> RaterPrompt | None:
    return _versions.get(prompt_id)


def prompt_for_profile(profile: str, chosen_id: int | None) -> int | None:
    """The prompt version a run of the form rates with: the chosen one when it is of the profile's kind (only the
    evidence profile's prompts show the document), else the profile's newest, as the judge's form does; an
    unknown id or profile is returned as it is, for the run's checks to refuse."""
    chosen = get_rater_prompt(chosen_id) if chosen_id is not None else None
    if profile not in PROFILE_TEMPLATES or (chosen is None and chosen_id is not None):
        return chosen_id
    if chosen is not None and is_evidence(as_template(chosen)) == is_evidence(PROFILE_TEMPLATES[profile]):
        return chosen.id
    return current_rater_prompt(profile).id


def create_rater_version(base: RaterPrompt, *, system_text: str, user_template: str,
                         user_id: int | None = None) -> RaterPrompt:
    """Save an edit of `base` as the next version of its prompt; earlier versions stay as they were."""
    return save_message_edit(RaterPrompt, base, template_type=RaterTemplate, validate=validate_template,
                             system_text=system_text, user_template=user_template, user_id=user_id)
