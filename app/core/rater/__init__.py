"""Pointwise LLM rater core: a versioned prompt, the score rule, the content-addressed cache and the runner.

Pure Python over the `openai` client (through app.core.llm); no web framework or database imports.
The rater scores one answer at a time on the annotators' 1–5 rubric, from the question and the
references the annotators see; never the document, except in the `evidence` profile (app.core.evidence),
where it reads the document and backs its rating with quotes that are checked against it.
"""
from app.core.rater.prompt import (
    DEFAULT_RATER_TEMPLATE,
    EVIDENCE_RATER_TEMPLATE,
    RaterTemplate,
    RatingItem,
    is_evidence,
    render,
    validate_template,
)
from app.core.rater.runner import (
    EvidenceOptions,
    InMemoryRatingCache,
    RatingResult,
    RatingSummary,
    messages_and_key,
    parse_score,
    rating_key,
    run_ratings,
)

__all__ = [
    "DEFAULT_RATER_TEMPLATE", "EVIDENCE_RATER_TEMPLATE", "EvidenceOptions", "InMemoryRatingCache", "RaterTemplate", "RatingItem", "RatingResult", "RatingSummary",
    "is_evidence", "messages_and_key", "parse_score", "rating_key", "render", "run_ratings", "validate_template",
]
