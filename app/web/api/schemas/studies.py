"""Shapes of studies, their scores (exported and imported) and their results."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# The adaptive settings' bounds are the service's (StudySpec's check owns them; the document states them).
from app.services.studies.setup import AMOUNT_MAX, CALIBRATION_CHOICES, COUNT_MAX
from app.web.api.schemas.common import (
    DbId,
    JsonBool,
    Allocation,
    Everyone,
    Open,
    Page,
    PageQuery,
    ReferenceKind,
    ReferencePolicy,
    StudyStatus,
    Time,
    examples,
)
from app.web.api.schemas.data import UploadFile


class StudiesQuery(PageQuery):
    """Filters of the studies list."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"name": "my-model-check"}]})
    name: str | None = Field(None, min_length=1, max_length=120,
                             description="Only the study with this name (case-insensitive): how a script finds a study's id")
    status: StudyStatus | None = Field(None, description="Only studies in this state")


class StudyCreate(BaseModel):
    """A new study, as the New study form makes it: its questions, systems, references, who scores and how
    answers are shared out (fixed overlap, or an adaptive allocation with a budget)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"name": "my-model-check", "questions": "human_eval", "systems": [3, 4], "annotators": ["ada", "ben"],
         "overlap": 1},
        {"name": "my-model-adaptive", "annotators": ["ada", "ben", "cy"], "allocation": "adaptive",
         "budget_documents": 30, "min_per_answer": 2},
    ]})
    name: str = Field(min_length=1, max_length=120, description="Unique (case-insensitive); 1 to 120 characters, "
                      "no control, invisible or text-direction characters, no / or \\, not only dots")
    description: str = Field("", max_length=5000)
    questions: str = Field("human_eval", max_length=10_000, description="A question set (GET /api/v1/questions "
                           "takes the same): human_eval, task:<name>, study:<id>, ids:<id,id,…>, …")
    systems: list[DbId] | None = Field(None, max_length=1000, description="The systems' ids (GET /api/v1/systems); "
                                      "null: every system that answers the questions")
    references: list[ReferenceKind] = Field(default_factory=list, max_length=10,
                                            description="The references annotators see beside the answers")
    policy: ReferencePolicy = Field("hide", description="An answer that repeats a shown reference: hide the "
                                    "reference, show it anyway, or exclude the answer")
    annotators: list[str] | Everyone | None = Field(None, description="Usernames who score, or \"everyone\" "
                                                    "(null: everyone)")
    merge_identical: JsonBool = Field(True, description="Identical answers of several systems shown once and scored "
                                  "once, the score recorded for each system (false: each shown on its own)")
    allocation: Allocation = Field("fixed", description="fixed: each document to `overlap` annotators; adaptive: "
                                   "a budget spent on the most reliable readers (docs/adaptive.md)")
    overlap: int | None = Field(None, ge=1, le=9999, description="Fixed: annotators per document; null: everyone")
    budget_documents: int | None = Field(None, ge=1, le=COUNT_MAX, description="Adaptive: documents read in all")
    budget_answers: int | None = Field(None, ge=1, le=COUNT_MAX, description="Adaptive: answers scored in all")
    budget_hours: float | None = Field(None, gt=0, lt=AMOUNT_MAX, description="Adaptive: annotator-hours in all")
    min_per_answer: int | None = Field(None, ge=1, le=COUNT_MAX, description="Adaptive: annotators per answer at "
                                       "least")
    tie_margin: float | None = Field(None, gt=0, lt=AMOUNT_MAX, description="Adaptive: score difference below "
                                     "which two systems tie")
    calibration_documents: Literal[CALIBRATION_CHOICES] | None = Field(  # type: ignore[valid-type]
        None, description="Adaptive: documents every annotator reads first (default 1)")
    start_window_hours: float | None = Field(None, gt=0, lt=AMOUNT_MAX, description="Adaptive: hours annotators "
                                             "have to start before the study goes on without them")
    max_documents_per_annotator: int | None = Field(None, ge=1, le=COUNT_MAX,
                                                    description="Adaptive: documents one annotator reads at most")


class AdaptiveSettings(BaseModel):
    """An adaptive study's budget and options (null where the default applies)."""

    model_config = examples({"budget_documents": 30, "budget_answers": None, "budget_hours": None,
                             "min_per_answer": 2, "tie_margin": None, "calibration_documents": 1,
                             "start_window_hours": None, "max_documents_per_annotator": None})
    budget_documents: int | None = None
    budget_answers: int | None = None
    budget_hours: float | None = None
    min_per_answer: int | None = None
    tie_margin: float | None = None
    calibration_documents: int | None = None
    start_window_hours: float | None = None
    max_documents_per_annotator: int | None = None


STUDY_EXAMPLE = {"id": 12, "name": "my-model-check", "status": "draft", "description": "", "questions": 85,
                 "systems": 2, "answers": 170, "annotators": 2, "everyone_may_score": False, "overlap": 1,
                 "scores": 0, "allocation": "fixed", "created_at": "2026-12-01T09:35:00Z"}


class StudyOut(BaseModel):
    """A study and its sizes."""

    model_config = examples(STUDY_EXAMPLE)
    id: int
    name: str
    status: StudyStatus
    description: str
    questions: int
    systems: int
    answers: int = Field(description="Answers the study shows")
    annotators: int | Everyone = Field(description="Accounts listed to score, or \"everyone\"")
    everyone_may_score: bool = Field(description="Every account may score (then `annotators` is \"everyone\")")
    overlap: int | None = Field(description="Fixed: annotators per document; null: everyone")
    scores: int = Field(description="Scores counted")
    allocation: Allocation
    created_at: Time


class AnnotatorProgressOut(BaseModel):
    """One annotator's progress in the study (their current round)."""

    model_config = examples({"username": "ada", "round": 1, "done": 40, "total": 85})
    username: str
    round: int | None
    done: int
    total: int


class StudyDetail(StudyOut):
    """A study with its systems, settings and each annotator's progress."""

    model_config = examples({**STUDY_EXAMPLE, "system_ids": [3, 4], "references": [], "policy": "hide",
                             "merge_identical": True,
                             "adaptive": None, "progress": [{"username": "ada", "round": 1, "done": 40,
                                                             "total": 85}]})
    system_ids: list[int]
    references: list[ReferenceKind]
    policy: ReferencePolicy
    merge_identical: bool = Field(description="Identical answers of several systems shown once and scored once")
    adaptive: AdaptiveSettings | None = Field(description="An adaptive study's settings (null: a fixed study)")
    progress: list[AnnotatorProgressOut]


class StudySystems(BaseModel):
    """Exactly these systems are the study's (their current answers pinned); scores of systems left out are
    kept, not counted."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"systems": [3, 4]}]})
    systems: list[DbId] = Field(min_length=1, max_length=1000, description="The systems' ids")


class ExportQuery(BaseModel):
    """Which export: the scores as JSON lines or CSV (every round or each annotator's current one), or the
    results JSON."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"format": "csv", "rounds": "all"}]})
    format: Literal["jsonl", "csv", "results"] = "jsonl"
    rounds: Literal["all", "current"] = "all"


class ScoresForm(BaseModel):
    """A score file to import: a study's `jsonl` export or L-Eval's per-annotator layout."""

    model_config = examples({"file": "my-model-check-scores-all.jsonl", "format": "auto", "replace": False})
    file: UploadFile = Field(description="The export's JSON lines (or `files_from_<annotator>.jsonl` in L-Eval's layout)")
    format: Literal["auto", "jsonl", "leval"] = Field("auto", description="auto: told by the first line")
    annotator: str | None = Field(None, min_length=1, max_length=80, description="leval: whose scores (default: "
                                  "from the file's name, files_from_<name>.jsonl)")
    replace: bool = Field(False, description="Overwrite stored scores that differ; without it a differing score "
                          "refuses the file (409) and nothing is imported")


class ScoresImported(BaseModel):
    """What a score file imported (in one transaction: all of it, or nothing)."""

    model_config = examples({"file": "scores.jsonl", "format": "jsonl", "rows": 170, "scores": 170, "created": 170,
                             "unchanged": 0, "replaced": 0, "conflicts": 0, "conflict_examples": [],
                             "annotators_created": [], "annotators_created_inactive": [], "rounds_created": 2,
                             "ignored_reference_scores": 0})
    file: str
    format: Literal["jsonl", "leval"]
    rows: int
    scores: int
    created: int
    unchanged: int
    replaced: int
    conflicts: int
    conflict_examples: list[str]
    annotators_created: list[str] = Field(description="Accounts made for unknown annotators (admins' imports only)")
    annotators_created_inactive: list[str]
    rounds_created: int
    ignored_reference_scores: int = Field(description="Scores L-Eval's files give the GPT-4/Claude references: "
                                          "references here, not scored answers")


class ScoreRow(BaseModel):
    """One human score, as the scores export has it."""

    model_config = ConfigDict(extra="allow", json_schema_extra={"examples": [{
        "annotator": "ada", "system": "my-model", "document_id": 7, "question_id": 41, "query": "What was decided?",
        "answer_label": "B", "score": 4, "comment": "", "scored_at": "2026-12-02T10:00:00.000000+00:00",
        "seconds_spent": 35, "round": 1, "round_status": "open", "first_scored_at": "2026-12-02T10:00:00.000000+00:00",
        "task": "meeting_summ", "answer_sha256": "9f…", "answer_version": 1, "stale": False, "study": "my-model-check",
        "allocation": "fixed", "allocation_step": ""}]})
    annotator: str
    system: str
    document_id: int
    question_id: int
    query: str
    answer_label: str
    score: int | None = Field(description="1 to 5 (null: cleared)")
    comment: str
    scored_at: str = Field(description="RFC 3339, UTC")
    seconds_spent: int
    round: int
    round_status: str
    first_scored_at: str = Field(description="RFC 3339, UTC")
    answer_sha256: str
    answer_version: int
    stale: bool = Field(description="The study no longer shows this answer version: results leave it out")
    study: str
    allocation: Allocation


class ResultsOut(BaseModel):
    """The study's results: human scores, metrics against humans (τ) and agreement (α), for both views and both
    metric profiles (the Results page's `results` export)."""

    model_config = ConfigDict(extra="allow", json_schema_extra={"examples": [{
        "app_version": "1.1.0", "generated_at": "2026-12-02T11:00:00+00:00",
        "study": {"id": 12, "name": "my-model-check", "status": "closed"}, "n_included_answers": 170,
        "annotators": [], "systems": [{"system": "my-model", "length_instruction": False}], "views": {},
        "table2": {}}]})
    app_version: str
    generated_at: str = Field(description="RFC 3339")
    study: dict[str, Any] | None
    n_included_answers: int
    annotators: list[Open]
    systems: list[Open]
    views: dict[str, Any] = Field(description="Per view (all answers, or by document), the human results and "
                                  "per profile the metrics against them")
    table2: dict[str, Any] = Field(description="L-Eval's Table 2 per metric profile and judge profile")


StudyPage = Page[StudyOut]
ScoreRowPage = Page[ScoreRow]
