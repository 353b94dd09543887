"""A save of the question page as it arrives: the JSON body checked field by field, and the answer labels.

`parse_score_payload` is the one reading of a save's body (scoring.save_from_request stores it); `answer_label`
and `label_index` are the one mapping between a place in an annotator's order and its label ("A", "B", …, "AA").
"""
from __future__ import annotations

import string
from dataclasses import dataclass

from app.core.rubric import is_score
from app.models.ids import MAX_DB_ID
from app.services.input_rules import text_problem

MAX_COMMENT = 4000
LETTERS = string.ascii_uppercase
SHA256_HEX = frozenset("0123456789abcdef")
# Active seconds the page reports with a save: a whole number, at most a day (no one scores one
# question for longer; anything above is a broken or forged client).
MAX_ACTIVE_SECONDS = 24 * 3600

class ScoreError(ValueError):
    """A save that cannot be accepted; `status` is the HTTP status to answer with, `reload` asks the page to reload."""

    def __init__(self, message: str, *, status: int = 400, field: str | None = None, reload: bool = False):
        super().__init__(message)
        self.message, self.status, self.field, self.reload = message, status, field, reload

    def as_json(self) -> dict:
        body: dict = {"error": self.message}
        if self.field:
            body["field"] = self.field
        if self.reload:
            body["reload"] = True
        return body


def answer_label(index: int) -> str:
    """0 → "A", 25 → "Z", 26 → "AA": spreadsheet-style column names."""
    label = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        label = LETTERS[rest] + label
    return label


def label_index(label: str) -> int | None:
    """Inverse of answer_label: "A" → 0, "AA" → 26; None for anything else."""
    if not isinstance(label, str) or not 1 <= len(label) <= 3 or not all(c in LETTERS for c in label):
        return None
    index = 0
    for char in label:
        index = index * 26 + LETTERS.index(char) + 1
    return index - 1


@dataclass(frozen=True)
class ScoreInput:
    study_id: int
    question_id: int
    label: str
    value: int | None  # None clears the score
    comment: str
    round_number: int | None
    answer_sha256: str
    seconds: int | None = None


def _strict_int(value: object) -> bool:
    # bool is an int subclass in Python: true/false must not pass as 1/0.
    return isinstance(value, int) and not isinstance(value, bool)


def _positive_id(data: dict, key: str) -> int:
    value = data.get(key)
    # Beyond MAX_DB_ID no id column holds the id: refuse it here, not with a 500 deeper down.
    if not _strict_int(value) or not 1 <= value <= MAX_DB_ID:
        raise ScoreError(f"{key} must be a positive integer.", field=key)
    return value


def parse_score_payload(data: object) -> ScoreInput:
    """Validate the JSON body {study, question_id, label, value | clear, answer, comment?, round?, seconds?}.

    `value` is a whole number from 1 to 5; with `clear: true` (and no value) the answer's score is
    cleared: it is "Not scored" again. An accidental null is not a clear: it is refused.
    """
    if not isinstance(data, dict):
        raise ScoreError("Send a JSON object.")
    study_id = _positive_id(data, "study")
    question_id = _positive_id(data, "question_id")
    label = data.get("label")
    if not isinstance(label, str) or label_index(label) is None:
        raise ScoreError("label must name an answer, such as \"A\".", field="label")
    clear = data.get("clear", False)
    if not isinstance(clear, bool):
        raise ScoreError("clear must be true or false.", field="clear")
    value = data.get("value")
    if clear:
        if value is not None:
            raise ScoreError("A clear carries no score: leave value out (or null).", field="value")
    elif not is_score(value):
        raise ScoreError("Score must be a whole number from 1 to 5.", field="value")
    answer = data.get("answer")
    if not isinstance(answer, str) or len(answer) != 64 or not set(answer) <= SHA256_HEX:
        raise ScoreError("answer must be the sha256 of the answer text the page showed.", field="answer")
    comment = data.get("comment", "")
    if comment is None:
        comment = ""
    if not isinstance(comment, str):
        raise ScoreError("comment must be text.", field="comment")
    comment = comment.replace("\r\n", "\n").strip()
    problem = text_problem(comment)  # a NUL, or half a surrogate pair (JSON can carry one)
    if problem:
        raise ScoreError(f"comment {problem}.", field="comment")
    if len(comment) > MAX_COMMENT:
        raise ScoreError(f"Comment is too long ({len(comment)} characters; at most {MAX_COMMENT}).", field="comment")
    round_number = data.get("round")
    if round_number is not None and not _strict_int(round_number):
        raise ScoreError("round must be an integer.", field="round")
    seconds = data.get("seconds")
    if seconds is not None and (not _strict_int(seconds) or not 0 <= seconds <= MAX_ACTIVE_SECONDS):
        raise ScoreError(f"seconds must be a whole number from 0 to {MAX_ACTIVE_SECONDS}.", field="seconds")
    return ScoreInput(study_id, question_id, label, value, comment, round_number, answer, seconds)
