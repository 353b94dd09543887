"""Judge prompt versions stored as JudgePrompt rows; an edit adds a version, never rewrites one."""
from __future__ import annotations

from app.core.judge import DEFAULT_TEMPLATE, PromptTemplate, validate_template
from app.core.judge.profiles import LEVAL, PROFILES, get_profile
from app.models import JudgePrompt
from app.services.llm.prompt_versions import (
    PromptError,
    PromptVersions,
    save_message_edit,
    seed_version,
)


def as_template(prompt: JudgePrompt) -> PromptTemplate:
    """Return the pure template of a stored prompt version."""
    return PromptTemplate(name=prompt.name, version=prompt.version, system=prompt.system_text,
                          user_template=prompt.user_template)


def _ensure(template: PromptTemplate) -> JudgePrompt:
    return seed_version(JudgePrompt, template.name, template.version, system_text=template.system,
                        user_template=template.user_template)


def ensure_default_prompt() -> JudgePrompt:
    """Return version 1 of the default prompt, seeding it (and L-Eval's fixed prompt) on first use."""
    default = _ensure(DEFAULT_TEMPLATE)
    _ensure(get_profile(LEVAL).template)
    return default


def ensure_profile_prompt(profile: str) -> JudgePrompt:
    """Return the prompt a profile judges with: its fixed one (seeded on first use), else the newest default."""
    fixed = get_profile(profile).template
    if fixed is None:
        return current_prompt()
    ensure_default_prompt()
    return _ensure(fixed)


def prompt_for_run(profile: str, chosen_id: int | None) -> int:
    """The prompt version a run judges with: a profile with its own prompt (leval: L-Eval's, verbatim) uses it
    whatever version was chosen; otherwise the chosen version, or the newest when none was."""
    if get_profile(profile).template is not None:
        return ensure_profile_prompt(profile).id
    return chosen_id if chosen_id is not None else current_prompt().id


def is_fixed(prompt: JudgePrompt) -> bool:
    """True for a profile's fixed prompt (L-Eval's), which is never edited."""
    return any(p.template is not None and p.template.name == prompt.name for p in PROFILES.values())


_versions = PromptVersions(JudgePrompt, ensure_default_prompt, DEFAULT_TEMPLATE.name)


def list_prompts() -> list[JudgePrompt]:
    """Return every prompt version, newest first within each name."""
    return _versions.all()


def current_prompt(name: str = DEFAULT_TEMPLATE.name) -> JudgePrompt:
    """Return the newest version of a prompt (the default one unless named)."""
    return _versions.newest(name)


def get_prompt(prompt_id: int) -> JudgePrompt | None:
    return _versions.get(prompt_id)


def prompt_by_version(version: int, name: str = DEFAULT_TEMPLATE.name) -> JudgePrompt:
    """Return one version of a prompt, or raise PromptError."""
    return _versions.by_version(version, name)


def create_version(base: JudgePrompt, *, system_text: str, user_template: str,
                   user_id: int | None = None) -> JudgePrompt:
    """Save an edit of `base` as the next version of its prompt; earlier versions stay as they were."""
    if is_fixed(base):
        raise PromptError(f"{base.name} is L-Eval's prompt, used verbatim by the leval profile; "
                          "edit the default prompt instead")
    return save_message_edit(JudgePrompt, base, template_type=PromptTemplate, validate=validate_template,
                             system_text=system_text, user_template=user_template, user_id=user_id)
