"""WTForms' side of what text the database can store: the rule itself lives in services.input_rules."""
from __future__ import annotations

from sqlalchemy.orm import InstrumentedAttribute
from wtforms.validators import ValidationError

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
