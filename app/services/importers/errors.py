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
        where = self.file
        if self.line is not None:
            where += f", line {self.line}"
        if self.field:
            where += f", field '{self.field}'"
        return f"{where}: {self.message}"

    def as_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "field": self.field, "message": self.message}
