"""Shapes of the data's side of the API: uploads, systems and their per-question values, questions, jobs, the
Leaderboard."""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, field_validator, model_serializer

from app.core.metrics import METRIC_KEYS
from app.web.api.schemas.common import (
    BenchmarkKey,
    DbId,
    JobKind,
    JobState,
    Open,
    Page,
    PageQuery,
    Profile,
    Time,
    examples,
)

UploadFile = Annotated[Any, WithJsonSchema({"type": "string", "format": "binary",
                                            "contentMediaType": "application/octet-stream"})]


class UploadForm(BaseModel):
    """A multipart upload of predictions: one file (a `.zip` may hold many) and how to import it."""

    model_config = examples({"file": "my-model.pred.jsonl", "system": "my-model", "replace": False,
                             "skip_unmatched": False})
    file: UploadFile = Field(description="A `.pred.jsonl` (or LV-Eval `.jsonl`) file or a `.zip` of them, "
                                         "as the upload page takes")
    system: str = Field("", max_length=200, description="The system these predictions are of. Given, every "
                        "prediction file of the upload is this system's, whatever its name says; an upload whose "
                        "files name several systems is then refused (422, field `system`). Left out: each file's "
                        "name or folder names its system")
    replace: bool = Field(False, description="Replace stored answers that differ (as the page's replace box and "
                          "`import-leval --replace`); without it, differing answers refuse the upload (409)")
    skip_unmatched: bool = Field(False, description="Import the rows that match a stored question and skip the "
                                 "others; without it, a row matching no question refuses the upload (422)")

    @field_validator("file")
    @classmethod
    def _is_file(cls, value):
        if not (hasattr(value, "stream") and getattr(value, "filename", None)):
            raise ValueError("send the file as a multipart part with a file name")
        return value


class SystemRef(BaseModel):
    """A system, by id and name."""

    model_config = examples({"id": 3, "name": "my-model"})
    id: int
    name: str


class FileImported(BaseModel):
    """What one file of an upload stored."""

    model_config = ConfigDict(extra="allow", json_schema_extra={"examples": [{
        "file": "my-model.pred.jsonl", "system": "my-model", "rows": 85, "matched": 85, "created": 85,
        "unchanged": 0, "replaced": 0, "conflicts": 0, "unmatched": 0}]})
    file: str = Field(description="The file (or zip member)")
    system: str | None = Field(None, description="The system it was stored for")
    rows: int | None = None
    matched: int | None = Field(None, description="Rows that matched a stored question")
    created: int = Field(0, description="Answers stored for the first time")
    unchanged: int = Field(0, description="Answers already stored with the same text")
    replaced: int = Field(0, description="Answers whose text was replaced (replace=true)")
    unmatched: int | None = Field(None, description="Rows matching no stored question (skip_unmatched=true)")


class UploadOut(BaseModel):
    """An imported upload: its files, its systems and the metric jobs that score them."""

    model_config = examples({"upload": "4f0c8a2e9b1d4c6fa3e5b7d9c1e3f5a7", "files": [FileImported.model_config[
        "json_schema_extra"]["examples"][0]], "predictions": 85, "systems": [{"id": 3, "name": "my-model"}],
        "jobs": [17]})
    upload: str = Field(description="The upload's id (GET /api/v1/uploads/{upload_id})")
    files: list[FileImported]
    predictions: int = Field(description="Predictions created or replaced (0 when everything was stored already)")
    systems: list[SystemRef]
    jobs: list[int] = Field(description="Metric jobs for the systems: new ones, or the ones already queued")


class UploadRecord(BaseModel):
    """An upload made earlier with a token of this account."""

    model_config = examples({"id": "4f0c8a2e9b1d4c6fa3e5b7d9c1e3f5a7", "files": 1, "predictions": 85,
                             "systems": ["my-model"], "created_at": "2026-12-01T09:30:00Z"})
    id: str
    files: int = Field(description="Files imported")
    predictions: int = Field(description="Predictions created or replaced")
    systems: list[str] = Field(description="The systems it imported into")
    created_at: Time


class SystemsQuery(PageQuery):
    """Filters of the systems list."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"name": "my-model"}]})
    name: str | None = Field(None, min_length=1, max_length=200, description="Only the system of this name")
    scored: bool | None = Field(None, description="Only systems with (true) or without (false) metrics")


class SystemOut(BaseModel):
    """A system: its predictions and whether its metrics are computed."""

    model_config = examples({"id": 3, "name": "my-model", "predictions": 85, "scored": True, "files": 1})
    id: int
    name: str
    predictions: int
    scored: bool = Field(description="Its metrics are computed")
    files: int = Field(description="Prediction files uploaded for it")


class PredictionFileOut(BaseModel):
    """One uploaded prediction file of a system (DELETE /api/v1/prediction-files/{file_id} removes it)."""

    model_config = examples({"id": 5, "filename": "my-model.pred.jsonl", "task": "", "rows": 85, "matched": 85,
                             "unmatched": 0, "created_at": "2026-12-01T09:30:00Z"})
    id: int
    filename: str
    task: str
    rows: int
    matched: int
    unmatched: int
    created_at: Time


class TaskValues(BaseModel):
    """One task's aggregate metric values of a system (`*`: every task)."""

    model_config = examples({"task": "*", "metrics": {"f1": 0.31, "rougeL": 0.28}, "counts": {"f1": 85,
                                                                                           "rougeL": 85}})
    task: str
    metrics: dict[str, float] = Field(description="Each metric's value")
    counts: dict[str, int] = Field(description="The questions each value is over")


class SystemDetail(SystemOut):
    """A system with its aggregates per task (one profile) and its prediction files."""

    model_config = examples({**SystemOut.model_config["json_schema_extra"]["examples"][0], "profile": "official",
                             "tasks": [TaskValues.model_config["json_schema_extra"]["examples"][0]],
                             "prediction_files": [PredictionFileOut.model_config["json_schema_extra"]["examples"][0]]})
    profile: Profile
    tasks: list[TaskValues]
    prediction_files: list[PredictionFileOut]


class SystemQuery(BaseModel):
    """The metric profile of a system's values."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"profile": "official"}]})
    profile: Profile = "official"


class QuestionValuesQuery(PageQuery):
    """Which per-question values: one metric of one task (`*`: every task; `human_eval`: the subset)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"metric": "f1", "task": "*"}]})
    metric: Literal[METRIC_KEYS] = Field("f1", description="A metric (GET /api/v1/systems/{id} lists a system's)")
    task: str = Field("*", min_length=1, max_length=80, description="A task, `*` for every task")
    profile: Profile = "official"
    sort: Literal["file", "low", "high"] = Field("file", description="File order, or the lowest or highest value "
                                                                     "first")
    search: str = Field("", max_length=200, description="Only those whose question, prediction or document title "
                        "has every word of it (the page's search box)")
    document: DbId | None = Field(None, description="Only this document's questions (its id)")


class QuestionValue(BaseModel):
    """One question's metric value for a system, with its answer and references."""

    model_config = examples({"question_id": 41, "task": "human_eval", "document_title": "Meeting 1",
                             "file": "my-model.pred.jsonl", "line": 1,
                             "question": "What was decided?", "prediction": "They agreed to ship.", "value": 0.5,
                             "others": {"f1": 0.5, "rougeL": 0.4}, "references": [
                                 {"label": "Reference used for scoring (gt)", "text": "They shipped."}]})
    question_id: int
    task: str
    document_title: str
    file: str = Field(description="The prediction file it came from (empty: not from an uploaded file)")
    line: int = Field(description="The prediction's line in its file")
    question: str
    prediction: str
    value: float
    others: dict[str, float] = Field(description="The answer's other metric values")
    references: list[dict[str, str]] = Field(description="{label, text} of each reference")


class QuestionsQuery(PageQuery):
    """Which questions: a question set (any value of the commands' --questions) filtered by task or document."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"set": "human_eval"}]})
    set: str = Field("human_eval", min_length=1, max_length=10_000, description="human_eval, demo, gpt4, gpt35, "
                     "authored, task:<name>, auto:<name>, study:<id> or ids:<id,id,…>")
    task: str | None = Field(None, min_length=1, max_length=80, description="Only this task's questions")
    document: DbId | None = Field(None, description="Only this document's questions (its id)")


class QuestionOut(BaseModel):
    """A question (its id is what `ids:` and the scores export name)."""

    model_config = examples({"id": 41, "document_id": 7, "task": "meeting_summ", "evaluation": "human",
                             "instruction": "What was decided?", "reference": "They shipped."})
    id: int
    document_id: int
    task: str
    evaluation: str = Field(description="The line's evaluation: human, LLM, f1, rouge, exam, …")
    instruction: str
    reference: str = Field(description="The reference answer (gt)")


class JobsQuery(PageQuery):
    """Filters of the jobs list, newest first."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"kind": "metrics",
                                                                               "state": "running"}]})
    kind: JobKind | None = None
    state: JobState | None = None
    system: str | None = Field(None, min_length=1, max_length=200, description="Jobs about this system (a judge "
                               "run's system or baseline)")


class JobOut(BaseModel):
    """A background job: queued, running, then done, failed or cancelled (a poll loop ends on any of those)."""

    model_config = examples({"id": 17, "kind": "metrics", "state": "done", "done": 85, "total": 85, "progress": 1.0,
                             "message": "Done", "error": None, "cancel_requested": False,
                             "created_at": "2026-12-01T09:30:00Z", "started_at": "2026-12-01T09:30:01Z",
                             "finished_at": "2026-12-01T09:30:09Z", "result": {"predictions": 85}})
    id: int
    kind: JobKind
    state: JobState
    done: int = Field(description="Items done")
    total: int = Field(description="Items in all")
    progress: float = Field(ge=0, le=1, description="0 to 1")
    message: str | None = None
    error: str | None = Field(None, description="Why it failed (an LLM call's detail only for admins)")
    cancel_requested: bool = Field(False, description="A running job was asked to stop")
    created_at: Time | None = None
    started_at: Time | None = None
    finished_at: Time | None = None
    result: dict[str, Any] | None = Field(None, description="What the job reports when it ends")


class LeaderboardQuery(BaseModel):
    """The metric profile of the Leaderboard, and one benchmark's table alone."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"profile": "official"},
                                                                          {"benchmark": "longbench"}]})
    profile: Profile = "official"
    benchmark: BenchmarkKey | None = Field(None, description="Only this benchmark's table, as `systems` (without "
                                           "it: L-Eval's as `systems`, every other benchmark's under its key)")


class LeaderboardOut(BaseModel):
    """Per system every metric the Leaderboard shows, with its profile and row counts; every other benchmark's
    table under its key (`lveval`, `longbench`), or with `benchmark` that benchmark's table alone as `systems`."""

    model_config = ConfigDict(extra="allow", json_schema_extra={"examples": [{
        "profile": "official", "scale": "0-100 (lengths in words)",
        "systems": [{"system": "my-model", "profile": "official", "predictions": 85, "metrics": {"f1": 31.2}}],
        "lveval": [], "longbench": []}]})
    profile: Profile
    scale: str
    systems: list[Open]
    benchmark: BenchmarkKey | None = Field(None, description="The benchmark asked for (absent: every one)")

    @model_serializer(mode="wrap")
    def _as_the_page(self, handler):
        """The page's /leaderboard/json, key for key: `benchmark` only when one was asked for."""
        data = handler(self)
        if data.get("benchmark") is None:
            data.pop("benchmark", None)
        return data


SystemPage = Page[SystemOut]
QuestionPage = Page[QuestionOut]
QuestionValuePage = Page[QuestionValue]
JobPage = Page[JobOut]
