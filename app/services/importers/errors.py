"""The one error type importers raise: it names the file, the line and the field."""
from __future__ import annotations


class ImportFailure(Exception):
    def __init__(self, file: str, message: str, *, line: int | None = None, field: str | None = None):
        self.file = file
        self.line = line
        self.field = field
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        return describe(self.as_dict())

    def as_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "field": self.field, "message": self.message}


def describe(error: dict) -> str:
    """Render an error dict (ImportFailure.as_dict()) as 'file, line N, field 'x': message'."""
    where = str(error["file"])
    if error.get("line") is not None:
        where += f", line {error['line']}"
    if error.get("field"):
        where += f", field '{error['field']}'"
    return f"{where}: {error['message']}"
