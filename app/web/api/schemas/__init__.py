"""The API's request and response shapes (pydantic): they validate requests, shape answers and make the OpenAPI
document (spectree reads them), so the document cannot drift from what the code does. One module per part of the
API; every model has a docstring (its description) and an example."""
from app.web.api.schemas.common import MAX_PER_PAGE, Deleted, DeleteQuery, FieldError, Open, Page, PageQuery, Problem
from app.web.api.schemas.data import (
    FileImported,
    JobOut,
    JobPage,
    JobsQuery,
    LeaderboardOut,
    LeaderboardQuery,
    PredictionFileOut,
    QuestionOut,
    QuestionPage,
    QuestionsQuery,
    QuestionValue,
    QuestionValuePage,
    QuestionValuesQuery,
    SystemDetail,
    SystemOut,
    SystemPage,
    SystemQuery,
    SystemRef,
    SystemsQuery,
    TaskValues,
    UploadForm,
    UploadOut,
    UploadRecord,
)
from app.web.api.schemas.runs import EvidenceOptionsIn, GenerationRunIn, JudgeRunIn, RaterRunIn, RunIn, RunOut
from app.web.api.schemas.studies import (
    AdaptiveSettings,
    AnnotatorProgressOut,
    ExportQuery,
    ResultsOut,
    ScoreRow,
    ScoreRowPage,
    ScoresForm,
    ScoresImported,
    StudiesQuery,
    StudyCreate,
    StudyDetail,
    StudyOut,
    StudyPage,
    StudySystems,
)
from app.web.api.schemas.tokens import TokenOut, TokenPage

ErrorBody = Problem  # API 1.0's name
__all__ = [
    "MAX_PER_PAGE", "AdaptiveSettings", "AnnotatorProgressOut", "Deleted", "DeleteQuery", "ErrorBody",
    "EvidenceOptionsIn", "ExportQuery", "FieldError", "FileImported", "GenerationRunIn", "JobOut", "JobPage",
    "JobsQuery", "JudgeRunIn", "LeaderboardOut", "LeaderboardQuery", "Open", "Page", "PageQuery",
    "PredictionFileOut", "Problem", "QuestionOut", "QuestionPage", "QuestionValue", "QuestionValuePage",
    "QuestionValuesQuery", "QuestionsQuery", "RaterRunIn", "ResultsOut", "RunIn", "RunOut", "ScoreRow",
    "ScoreRowPage", "ScoresForm", "ScoresImported", "StudiesQuery", "StudyCreate", "StudyDetail", "StudyOut",
    "StudyPage", "StudySystems", "SystemDetail", "SystemOut", "SystemPage", "SystemQuery", "SystemRef",
    "SystemsQuery", "TaskValues", "TokenOut", "TokenPage", "UploadForm", "UploadOut", "UploadRecord",
]
