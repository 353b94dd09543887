"""The API's request and response shapes (pydantic): they validate requests, shape answers and make the OpenAPI
document (spectree reads them), so the document cannot drift from what the code does."""
from __future__ import annotations

from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, field_validator

from app.core.evidence import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_MAX_QUOTES,
    MAX_QUOTES,
    REPLY_TOKENS,
)
from app.models.ids import MAX_DB_ID

Item = TypeVar("Item")
PROFILE = Literal["official", "fixed"]
MAX_PER_PAGE = 500


class Open(BaseModel):
    """A response whose extra keys are passed on as the service gave them."""

    model_config = ConfigDict(extra="allow")


class FieldError(BaseModel):
    file: str | None = None
    line: int | None = None
    field: str | None = None
    message: str


class ErrorBody(Open):
    error: str
    status: int | None = None
    errors: list[FieldError] | None = None


class PageQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")
    page: int = Field(1, ge=1, le=1_000_000)
    per_page: int = Field(100, ge=1, le=MAX_PER_PAGE)


class Page(BaseModel, Generic[Item]):
    items: list[Item]
    page: int
    per_page: int
    total: int


# -- predictions, jobs, systems, leaderboard -----------------------------------------------------------

UploadFile = Annotated[Any, WithJsonSchema({"type": "string", "format": "binary",
                                            "contentMediaType": "application/octet-stream"})]


class UploadForm(BaseModel):
    file: UploadFile = Field(description="A `.pred.jsonl` (or LV-Eval `.jsonl`) file or a `.zip` of them, "
                                         "as the upload page takes")
    system: str = Field("", max_length=200, description="The system's name (default: from the file)")

    @field_validator("file")
    @classmethod
    def _is_file(cls, value):
        if not (hasattr(value, "stream") and getattr(value, "filename", None)):
            raise ValueError("send the file as a multipart part with a file name")
        return value


class UploadOut(BaseModel):
    upload: str = Field(description="The upload batch id")
    files: list[dict[str, Any]]
    predictions: int = Field(description="Predictions created or replaced (0 when everything was stored already)")
    systems: list[dict[str, Any]]
    jobs: list[int] = Field(description="Metric jobs for the systems: new ones, or the ones already queued")


class JobOut(BaseModel):
    id: int
    kind: str
    state: str
    done: int
    total: int
    progress: float = Field(description="0 to 1")
    message: str | None = None
    error: str | None = None
    created_at: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    result: Any = None


class SystemOut(BaseModel):
    id: int
    name: str
    predictions: int
    scored: bool
    files: int


class LeaderboardQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")
    profile: PROFILE = "official"


class LeaderboardOut(Open):
    profile: PROFILE
    scale: str
    systems: list[dict[str, Any]]
    lveval: list[dict[str, Any]]


# -- studies and results -----------------------------------------------------------------------------------


class StudiesQuery(PageQuery):
    name: str | None = Field(None, min_length=1, max_length=120,
                             description="Only the study with this name (case-insensitive): how a script finds a study's id")


class StudyCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=120, description="Unique (case-insensitive); 1 to 120 characters, "
                      "no control, invisible or text-direction characters, no / or \\, not only dots")
    description: str = Field("", max_length=5000)
    questions: str = Field("human_eval", max_length=120, description="A question set's name")
    references: list[str] = Field(default_factory=list, max_length=10)
    policy: str = Field("hide", max_length=20)
    annotators: list[str] | None = Field(None, max_length=1000,
                                         description="Usernames who score; null: every account")
    overlap: int | None = Field(None, ge=1, le=9999, description="Annotators per answer; null: everyone")


class StudyOut(BaseModel):
    id: int
    name: str
    status: str
    description: str
    questions: int
    systems: int
    answers: int
    annotators: int | Literal["everyone"]
    overlap: int | None
    scores: int


class AnnotatorProgressOut(BaseModel):
    username: str
    round: int | None
    done: int
    total: int


class StudyDetail(StudyOut):
    progress: list[AnnotatorProgressOut]


class ExportQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: Literal["jsonl", "csv", "results"] = "jsonl"
    rounds: Literal["all", "current"] = "all"


# -- LLM runs: the launch forms' options, and their dry run --------------------------------------------------


class RunIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    dry_run: bool = Field(False, description="Only estimate calls, tokens and cost (nothing is queued)")
    concurrency: int = Field(8, ge=1, le=64)
    budget_usd: float | None = Field(None, gt=0, le=1_000_000)


class EvidenceOptionsIn(BaseModel):
    """The evidence profile's options, as the judge's and the rater's forms take them (ignored by other profiles)."""

    max_quotes: int = Field(DEFAULT_MAX_QUOTES, ge=1, le=MAX_QUOTES, description="The evidence profile's: quotes per answer")
    context_tokens: int = Field(DEFAULT_CONTEXT_TOKENS, ge=REPLY_TOKENS + 256, le=10_000_000,
                                description="The evidence profile's: the model's context; the document is cut to fit")
    json_schema: bool = Field(True, description="The evidence profile's: ask for JSON through response_format")


class JudgeRunIn(RunIn, EvidenceOptionsIn):
    system: str = Field(min_length=1, max_length=200)
    baseline: str = Field(min_length=1, max_length=200)
    judge_model: str | None = Field(None, min_length=1, max_length=120, description="Default: the judge settings'")
    profile: str = Field("leval", max_length=40)
    prompt_id: int | None = Field(None, ge=1, le=2**31, description="Default: the newest version")
    temperature: float = Field(0.0, ge=0, le=2)
    scope: Literal["human_eval", "llm", "all"] = "human_eval"


class RaterRunIn(RunIn, EvidenceOptionsIn):
    study: int = Field(ge=1, le=MAX_DB_ID, description="The study's id (`GET /api/v1/studies?name=…` finds it by name)")
    rater_model: str | None = Field(None, min_length=1, max_length=120, description="Default: the judge settings'")
    profile: Literal["reference", "evidence"] = "reference"
    prompt_id: int | None = Field(None, ge=1, le=2**31, description="Default: the newest version of the profile's prompt")
    temperature: float = Field(0.0, ge=0, le=2)


class GenerationRunIn(RunIn):
    endpoint: str = Field(min_length=1, max_length=32, description="An endpoint an admin named (Generate → Endpoints)")
    model: str = Field(min_length=1, max_length=120)
    question_set: str = Field("human_eval", min_length=1, max_length=120)
    system_name: str = Field("", max_length=120, description="Default: from the model and context window")
    existing_system: bool = False
    length_instruction: bool = False
    context_tokens: int = Field(16000, ge=1, le=10_000_000)
    max_tokens: int = Field(512, ge=1, le=1_000_000)
    temperature: float = Field(0.0001, ge=0, le=2)
    seed: int | None = Field(None, ge=-(2**31), le=2**31)
    truncation: str = Field("leval", max_length=20)
    prompt_id: int | None = Field(None, ge=1, le=2**31, description="Default: the newest version")


class RunOut(BaseModel):
    dry_run: bool
    estimate: dict[str, Any] | None = Field(None, description="The dry run's estimate, as the launch page shows it")
    job: int | None = Field(None, description="The queued job (GET /api/v1/jobs/{id})")
    run: int | None = Field(None, description="The generation run's id")
