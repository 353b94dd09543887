"""What every part of the API shares: problem documents, pages of a list, enumerations, times and examples."""
from __future__ import annotations

import re
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Generic, Literal, TypeVar

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, PlainSerializer, StrictBool, WithJsonSchema

from app.core.benchmarks.registry import BENCHMARKS
from app.models.base import as_utc
from app.models.corpus import REFERENCE_KINDS
from app.models.ids import MAX_DB_ID
from app.models.jobs import JOB_STATUSES
from app.models.studies import ALLOCATIONS, REFERENCE_POLICIES, STUDY_STATUSES
from app.models.tokens import TOKEN_SCOPES

Item = TypeVar("Item")
MAX_PER_PAGE = 500


def _enum(name: str, values: tuple[str, ...], doc: str) -> type[StrEnum]:
    """An enumeration of the document (a component of its own: a generated client names it as here)."""
    made = StrEnum(name, {re.sub(r"\W", "_", value).upper(): value for value in values})
    made.__doc__ = doc
    return made


Profile = _enum("Profile", ("official", "fixed"), "A metric profile: official (L-Eval's scripts, quirks kept) or "
                "fixed (quirks corrected)")
BenchmarkKey = _enum("BenchmarkKey", tuple(b.key for b in BENCHMARKS), "A benchmark (app.core.benchmarks.registry): "
                     "leval, lveval or longbench")
JobState = _enum("JobState", JOB_STATUSES, "A job's state: queued, running, then done, failed or cancelled")
# The job kinds create_app registers (tests/web/test_api_loop.py holds the two together).
JOB_KINDS = ("generate", "judge", "metrics", "rater")
JobKind = _enum("JobKind", JOB_KINDS, "What a job does")
StudyStatus = _enum("StudyStatus", STUDY_STATUSES, "A study's state: a draft opens, an open study closes, a closed "
                    "one opens again")
ReferencePolicy = _enum("ReferencePolicy", REFERENCE_POLICIES, "An answer that repeats a reference shown beside it: "
                        "hide the reference, show it anyway, or exclude the answer")
ReferenceKind = _enum("ReferenceKind", REFERENCE_KINDS, "A reference annotators may see beside the answers")
Allocation = _enum("Allocation", ALLOCATIONS, "How a study shares out its answers: fixed overlap, or adaptive")
TokenScope = _enum("TokenScope", TOKEN_SCOPES, "read: only reads; write: may also change what the role allows")
TokenState = _enum("TokenState", ("active", "expired", "revoked"), "Whether a token still works")
Location = Literal["path", "query", "header", "body", "file"]
# An id a client sends: what an id column holds on every supported database (app.models.ids owns the range), so a
# number beyond it is refused as data, never taken to the database.
DbId = Annotated[int, Field(ge=1, le=MAX_DB_ID)]
# A JSON body's true or false: 0, 1 or "yes" are refused, not read as one (a query's or a form's text is read).
JsonBool = StrictBool
# "everyone" as a one-value enum (not a JSON Schema `const`), the union shape client generators read.
Everyone = Annotated[Literal["everyone"], WithJsonSchema({"type": "string", "enum": ["everyone"],
                                                          "description": "Every account may score"})]
# A moment in time: RFC 3339 with its offset (UTC, `Z`), whatever the database kept (SQLite drops the zone).
Time = Annotated[AwareDatetime, PlainSerializer(lambda moment: moment.isoformat().replace("+00:00", "Z"),
                                                return_type=str, when_used="json"),
                 WithJsonSchema({"type": "string", "format": "date-time", "examples": ["2026-12-01T09:30:00Z"]})]


def examples(*values: dict) -> ConfigDict:
    """A model's examples, in its schema (every schema of the document has one)."""
    return ConfigDict(json_schema_extra={"examples": list(values)})


class Open(BaseModel):
    """A JSON object passed on as the service gave it (a nested part of a typed answer)."""

    model_config = ConfigDict(extra="allow", json_schema_extra={"examples": [{"key": "value"}]})


class FieldError(BaseModel):
    """One thing at fault: a field of the body, the query or the path, a header, or a file's line and field."""

    model_config = examples({"file": "my-model.pred.jsonl", "line": 3, "field": "my-model_pred", "location": "file",
                             "message": "expected text, got 7"})
    file: str | None = Field(None, description="The uploaded file (or zip member) at fault")
    line: int | None = Field(None, description="Its line, from 1")
    field: str | None = Field(None, description="The field, query parameter, path argument or header at fault")
    location: Location | None = Field(None, description="Where the field is")
    message: str = Field(description="What is wrong, in words")


class Problem(BaseModel):
    """An error, as an RFC 9457 problem document (`application/problem+json`); every 4xx lists the fields at
    fault in `errors`."""

    model_config = examples({
        "type": "about:blank", "title": "Not Found", "status": 404, "detail": "no study with id 12",
        "instance": "/api/v1/studies/12", "error": "no study with id 12",
        "errors": [{"file": None, "line": None, "field": "study_id", "location": "path",
                    "message": "no study with id 12"}]})
    type: str = Field("about:blank", description="A URI naming the kind of problem; about:blank: the status says it")
    title: str = Field(description="The status's phrase")
    status: int = Field(description="The HTTP status", examples=[404])
    detail: str = Field(description="What happened, in words")
    instance: str | None = Field(None, description="The path that was asked for")
    error: str = Field(description="The same as `detail` (API 1.0's name for it)")
    errors: list[FieldError] | None = Field(None, description="The fields at fault (every 4xx has at least one)")
    job: int | None = Field(None, description="409 of a run: the job that is already queued or done")
    retryable: bool | None = Field(None, description="503: the storage was busy; nothing was saved, try again")


class PageQuery(BaseModel):
    """Which page of a list: `page` from 1, `per_page` up to 500."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"page": 1, "per_page": 100}]})
    page: int = Field(1, ge=1, le=1_000_000, description="The page, from 1")
    per_page: int = Field(100, ge=1, le=MAX_PER_PAGE, description="Items per page (at most 500)")


class Page(BaseModel, Generic[Item]):
    """One page of a list; the `Link` header names the first, previous, next and last pages."""

    items: list[Item]
    page: int = Field(description="This page's number, from 1")
    per_page: int = Field(description="Items per page")
    total: int = Field(description="Items in the whole list")


class Deleted(BaseModel):
    """What a delete removed; human scores it removed were first saved to a file on the server."""

    model_config = examples({"what": "system 'my-model'", "counts": {"predictions": 85, "prediction files": 1},
                             "scores": 0, "scores_saved_as": None})
    what: str = Field(description="What was deleted, in words")
    counts: dict[str, int] = Field(description="Rows removed with it, by kind")
    scores: int = Field(description="Human scores removed (only with force=true)")
    scores_saved_as: str | None = Field(None, description="The file in the instance's deleted/ folder that holds "
                                                          "them, as the jsonl export")


class DeleteQuery(BaseModel):
    """Deleting what holds human scores needs force=true (the scores are saved to a file first)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"force": False}]})
    force: bool = Field(False, description="Also when human scores go with it (they are saved to a file first)")


def utc(moment: datetime | None) -> datetime | None:
    """A stored time with its zone (SQLite returns them naive, in UTC), for a `Time` field."""
    return as_utc(moment) if moment is not None else None
