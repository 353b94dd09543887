"""Typed SQLAlchemy 2.0 models for the whole product."""
from app.models.corpus import Document, LvevalItem, Prediction, PredictionFile, Question, Reference, System, UploadBatch
from app.models.generation import AuthoredPair, GenerationAnswer, GenerationCall, GenerationPrompt, GenerationRun
from app.models.jobs import Job
from app.models.judge import JudgePrompt, LLMJudgment
from app.models.longbench import LongbenchAnswer, LongbenchItem
from app.models.metrics import MetricAggregate, MetricResult
from app.models.queue import QueueCounter, QueueSchedule, QueueTask, QueueValue
from app.models.rating import LLMRating, RaterPrompt
from app.models.scoring import COUNTED, AnnotationRound, QuestionView, Score, ScoreRevision
from app.models.studies import (
    Answer, Study, StudyAllocation, StudyAnnotator, StudyAnswer, StudyAssignment, StudyHiddenReference, StudyQuestion, StudySystem,
    TextRepeat,
)
from app.models.tokens import ApiToken, IdempotentRequest
from app.models.users import LoginAttempt, Setting, User
from app.models.versions import DataVersion

__all__ = [
    "COUNTED", "ApiToken", "IdempotentRequest",
    "Answer", "Study", "StudyAllocation", "StudyAnnotator", "StudyAnswer", "StudyAssignment", "StudyHiddenReference", "StudyQuestion",
    "StudySystem", "AnnotationRound", "AuthoredPair", "DataVersion", "Document", "GenerationAnswer", "GenerationCall",
    "GenerationPrompt", "GenerationRun", "Job", "JudgePrompt", "LLMJudgment", "LLMRating", "LoginAttempt", "LongbenchAnswer", "LongbenchItem", "LvevalItem",
    "MetricAggregate", "MetricResult", "Prediction", "QueueCounter", "QueueSchedule", "QueueTask", "QueueValue", "PredictionFile", "Question", "QuestionView", "RaterPrompt",
    "Reference",
    "Score", "ScoreRevision", "Setting", "System", "TextRepeat", "UploadBatch", "User",
]
