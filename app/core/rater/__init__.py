"""Pointwise LLM rater core: a versioned prompt, the score rule, the content-addressed cache and the runner.

Pure Python over the `openai` client (through app.core.llm); no web framework or database imports.
The rater scores one answer at a time on the annotators' 1–5 rubric, from the question and the
references the annotators see: never the document, as the pairwise judge never sees it.
"""
from app.core.rater.prompt import DEFAULT_RATER_TEMPLATE, RaterTemplate, RatingItem, render, validate_template
from app.core.rater.runner import RatingResult, RatingSummary, InMemoryRatingCache, parse_score, rating_key, run_ratings

__all__ = [
    "DEFAULT_RATER_TEMPLATE", "InMemoryRatingCache", "RaterTemplate", "RatingItem", "RatingResult", "RatingSummary",
    "parse_score", "rating_key", "render", "run_ratings", "validate_template",
]
