"""Form parts the pages share: WTForms' side of what text the database can store (the rule itself lives in
services.input_rules), the prompt-version form, and the evidence profile's options of the judge and the rater."""
from __future__ import annotations

from flask_wtf import FlaskForm
from sqlalchemy.orm import InstrumentedAttribute
from wtforms import BooleanField, IntegerField, SubmitField, TextAreaField
from wtforms.validators import DataRequired, NumberRange, ValidationError

from app.core.evidence import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_MAX_QUOTES,
    MAX_QUOTES,
    REPLY_TOKENS,
)
from app.services.input_rules import text_problem


class Storable:
    """Refuse a field's text the database cannot store (a NUL character, longer than its column or limit).

    The message names the field by its label, so it reads the same beside the field and in a flash.
    """

    def __init__(self, *, column: InstrumentedAttribute | None = None, limit: int | None = None):
        self.column, self.limit = column, limit

    def __call__(self, form, field) -> None:
        value = field.data if isinstance(field.data, str) else ""
        problem = text_problem(value, limit=self.limit, column=self.column)
        if problem:
            raise ValidationError(f"{field.label.text} {problem}.")


class PromptForm(FlaskForm):
    """A new version of an LLM prompt (the judge's or the rater's): a system message and a user template."""

    system_text = TextAreaField("System message", validators=[DataRequired(), Storable()])
    user_template = TextAreaField("User message template", validators=[DataRequired(), Storable()])
    submit = SubmitField("Save as a new version")


def evidence_fields(model: str) -> type:
    """The evidence profile's launch options, for a form of the `model` ("Judge", "Rater") to inherit."""

    class EvidenceFields:
        max_quotes = IntegerField("Quotes per answer (evidence)", default=DEFAULT_MAX_QUOTES,
                                  validators=[DataRequired(), NumberRange(1, MAX_QUOTES)])
        context_tokens = IntegerField(f"{model} context, tokens (evidence)", default=DEFAULT_CONTEXT_TOKENS,
                                      validators=[DataRequired(), NumberRange(REPLY_TOKENS + 256, 10_000_000)])
        json_schema = BooleanField("Ask for JSON through response_format (evidence)", default=True)

    return EvidenceFields
