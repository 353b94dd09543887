"""Form parts the pages share: WTForms' side of what text the database can store (the rule itself lives in
services.input_rules), and the prompt-version form."""
from __future__ import annotations

from flask_wtf import FlaskForm
from sqlalchemy.orm import InstrumentedAttribute
from wtforms import SubmitField, TextAreaField
from wtforms.validators import DataRequired, ValidationError

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
