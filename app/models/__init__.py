"""Typed SQLAlchemy 2.0 models for the whole product."""
from .corpus import Document, LvevalItem, Prediction, PredictionFile, Question, Reference, System, UploadBatch
from .generation import AuthoredPair, GenerationAnswer, GenerationCall, GenerationPrompt, GenerationRun
from .jobs import Job
from .judging import JudgePrompt, LLMJudgment
from .metrics import MetricAggregate, MetricResult
from .queue import QueueCounter, QueueSchedule, QueueTask, QueueValue
from .rating import LLMRating, RaterPrompt
from .scoring import AnnotationRound, QuestionView, Score, ScoreRevision
from .studies import (
    Answer, Study, StudyAnnotator, StudyAnswer, StudyAssignment, StudyHiddenReference, StudyQuestion, StudySystem,
)
from .users import LoginAttempt, Setting, User
from .versions import DataVersion

__all__ = [
    "Answer", "Study", "StudyAnnotator", "StudyAnswer", "StudyAssignment", "StudyHiddenReference", "StudyQuestion",
    "StudySystem", "AnnotationRound", "AuthoredPair", "DataVersion", "Document", "GenerationAnswer", "GenerationCall",
    "GenerationPrompt", "GenerationRun", "Job", "JudgePrompt", "LLMJudgment", "LLMRating", "LoginAttempt", "LvevalItem",
    "MetricAggregate", "MetricResult", "Prediction", "QueueCounter", "QueueSchedule", "QueueTask", "QueueValue", "PredictionFile", "Question", "QuestionView", "RaterPrompt",
    "Reference",
    "Score", "ScoreRevision", "Setting", "System", "UploadBatch", "User",
]
