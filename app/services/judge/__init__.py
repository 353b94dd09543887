"""The LLM judge wired into the app: DB cache, prompt versions, pairs, jobs, reports and settings.

`app.core.judge` stays pure (no Flask, no database); this package is the glue.
"""
from app.services.judge.db_cache import DBJudgeCache
from app.services.judge.job import JudgeRunError, dry_run, launch, prepare_run
from app.services.judge.pairs import (
    DEFAULT_SCOPE,
    SCOPES,
    JudgePair,
    PairError,
    build_pairs,
    default_baseline,
)
from app.services.judge.prompt_versions import (
    PromptError,
    as_template,
    create_version,
    current_prompt,
    ensure_default_prompt,
    list_prompts,
)
from app.services.judge.reports import (
    JOB_KIND,
    RunReport,
    RunSpec,
    judge_jobs,
    run_report,
    win_rates,
)
from app.services.judge.settings import (
    JudgeSettings,
    SettingsError,
    load_settings,
    save_settings,
)

__all__ = [
    "DBJudgeCache", "DEFAULT_SCOPE", "JOB_KIND", "JudgePair", "JudgeRunError", "JudgeSettings", "PairError",
    "PromptError", "RunReport", "RunSpec", "SCOPES", "SettingsError", "as_template", "build_pairs",
    "create_version", "current_prompt", "default_baseline", "dry_run", "ensure_default_prompt", "judge_jobs",
    "launch", "list_prompts", "load_settings", "prepare_run", "run_report", "save_settings", "win_rates",
]
