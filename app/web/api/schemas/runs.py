"""Shapes of the LLM runs: the launch forms' options, and their dry run."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.core.evidence import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_MAX_QUOTES,
    MAX_QUOTES,
    REPLY_TOKENS,
)
from app.core.judge.profiles import PROFILES as JUDGE_PROFILES
from app.services.generation.spec import TRUNCATIONS
from app.web.api.schemas.common import DbId, JsonBool, examples


class RunIn(BaseModel):
    """Options every run takes."""

    model_config = ConfigDict(extra="forbid")
    dry_run: JsonBool = Field(False, description="Only estimate calls, tokens and cost (nothing is queued)")
    concurrency: int = Field(8, ge=1, le=64, description="Calls at once")
    budget_usd: float | None = Field(None, gt=0, le=1_000_000, description="Stop once this much is spent")


class EvidenceOptionsIn(BaseModel):
    """The evidence profile's options, as the judge's and the rater's forms take them (ignored by other profiles)."""

    max_quotes: int = Field(DEFAULT_MAX_QUOTES, ge=1, le=MAX_QUOTES, description="The evidence profile's: quotes per answer")
    context_tokens: int = Field(DEFAULT_CONTEXT_TOKENS, ge=REPLY_TOKENS + 256, le=10_000_000,
                                description="The evidence profile's: the model's context; the document is cut to fit")
    json_schema: JsonBool = Field(True, description="The evidence profile's: ask for JSON through response_format")


class JudgeRunIn(RunIn, EvidenceOptionsIn):
    """A pairwise judge run of a system against a baseline, as the Judge page launches it."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"system": "my-model", "baseline": "turbo-16k-0613", "judge_model": "gpt-4o-mini", "dry_run": True}]})
    system: str = Field(min_length=1, max_length=200)
    baseline: str = Field(min_length=1, max_length=200)
    judge_model: str | None = Field(None, min_length=1, max_length=120, description="Default: the judge settings'")
    profile: Literal[tuple(JUDGE_PROFILES)] = Field("leval", description="The judge profile")
    prompt_id: DbId | None = Field(None, description="Default: the newest version")
    temperature: float = Field(0.0, ge=0, le=2)
    scope: Literal["human_eval", "llm", "all"] = "human_eval"


class RaterRunIn(RunIn, EvidenceOptionsIn):
    """A pointwise rater run over a study's answers, as the Rater page launches it."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"study": 12, "rater_model": "gpt-4o-mini", "dry_run": True}]})
    study: DbId = Field(description="The study's id (`GET /api/v1/studies?name=…` finds it by name)")
    rater_model: str | None = Field(None, min_length=1, max_length=120, description="Default: the judge settings'")
    profile: Literal["reference", "evidence"] = "reference"
    prompt_id: DbId | None = Field(None, description="Default: the newest version of the profile's prompt")
    temperature: float = Field(0.0, ge=0, le=2)


class GenerationRunIn(RunIn):
    """A generation run on an endpoint an admin named, as the Generate page launches it."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"endpoint": "lab", "model": "my-model", "question_set": "human_eval", "dry_run": True}]})
    endpoint: str = Field(min_length=1, max_length=32, description="An endpoint an admin named (Generate → Endpoints)")
    model: str = Field(min_length=1, max_length=120)
    question_set: str = Field("human_eval", min_length=1, max_length=120)
    system_name: str = Field("", max_length=120, description="Default: from the model and context window")
    existing_system: JsonBool = False
    length_instruction: JsonBool = False
    context_tokens: int = Field(16000, ge=1, le=10_000_000)
    max_tokens: int = Field(512, ge=1, le=1_000_000)
    temperature: float = Field(0.0001, ge=0, le=2)
    seed: int | None = Field(None, ge=-(2**31), le=2**31)
    truncation: Literal[TRUNCATIONS] = Field("leval", description="leval: L-Eval's cut; fit: cut to the context")
    prompt_id: DbId | None = Field(None, description="Default: the newest version")


class RunOut(BaseModel):
    """A queued run (201, its job), or a dry run's estimate (200)."""

    model_config = examples({"dry_run": False, "estimate": None, "job": 21, "run": None},
                            {"dry_run": True, "estimate": {"pairs": 85, "calls": 170, "cost_usd": 0.42},
                             "job": None, "run": None})
    dry_run: bool
    estimate: dict[str, Any] | None = Field(None, description="The dry run's estimate, as the launch page shows it")
    job: int | None = Field(None, description="The queued job (GET /api/v1/jobs/{job_id})")
    run: int | None = Field(None, description="The generation run's id")
