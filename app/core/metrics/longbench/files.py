"""LongBench's files: their names and layouts, and their rows, each problem named by file, line and field.

- Predictions of LongBench v1 and LongBench-E, as LongBench/pred.py writes them: `pred/<model>/<dataset>.jsonl`
  and `pred_e/<model>/<dataset>.jsonl`, rows `{pred, answers, all_classes, length}` in the data file's order
  (no question text, no id). eval.py reads `pred`, every item of `answers`, `all_classes` (the last row's) and,
  with --e, `length`.
- LongBench's data files (data.zip on the Hugging Face hub): `<dataset>.jsonl` and `<dataset>_e.jsonl`, rows
  `{input, context, answers, length, dataset, language, all_classes, _id}`: the questions and their documents.
- LongBench v2's predictions, as its pred.py writes them (`results/<model>.jsonl`, `<model>_cot.jsonl`, …) and
  result.py reads them (a JSON array, else JSON lines): the data row with `response`, `pred` and `judge`.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePath, PurePosixPath
from typing import Any, BinaryIO

from app.core.json_input import JsonRefused, read_json
from app.core.metrics.files import FileFormatError, Row, iter_jsonl
from app.core.metrics.longbench import DATASETS, E, E_DATASETS, V1, V2

PRED_E_FOLDER = "pred_e"  # pred.py --e writes here; `pred/` holds LongBench v1
V2_CHOICES = ("A", "B", "C", "D")
V2_DIFFICULTIES = ("easy", "hard")
V2_LENGTHS = ("short", "medium", "long")
# The keys by which a v2 prediction row is known whatever its file's name (pred.py copies the data row and adds these).
V2_ROW_KEYS = frozenset({"_id", "difficulty", "length", "question", "answer", "judge"})
MAX_FILE_ERRORS = 20


@dataclass(frozen=True)
class FileName:
    """What a LongBench file's path says: which question set, which dataset, and whether it holds data rows."""

    variant: str  # "v1", "e" or "v2"
    dataset: str  # one of DATASETS ("" for v2)
    data: bool  # LongBench's own data rows, not a model's predictions


def stem(path: str | PurePath) -> str:
    name = PurePosixPath(str(path).replace("\\", "/")).name
    return name[:-len(".jsonl")] if name.endswith(".jsonl") else name


def describe_name(path: str | PurePath) -> FileName | None:
    """The LongBench file a `.jsonl` path names, or None. `<dataset>.jsonl` is a prediction file (of LongBench-E
    when a folder on its path is `pred_e`) or, by its rows, a data file; `<dataset>_e.jsonl` is LongBench-E's data."""
    parts = PurePosixPath(str(path).replace("\\", "/")).parts
    if not parts or not parts[-1].endswith(".jsonl"):
        return None
    name = stem(parts[-1])
    if name in DATASETS:
        return FileName(E if PRED_E_FOLDER in parts[:-1] else V1, name, False)
    if name.endswith("_e") and name[:-2] in E_DATASETS:
        return FileName(E, name[:-2], True)
    return None


def is_longbench_file_name(path: str | PurePath) -> bool:
    return describe_name(path) is not None


def is_v2_row(row: Any) -> bool:
    """A LongBench v2 prediction row (its data row with pred.py's `response`, `pred` and `judge`)."""
    return isinstance(row, dict) and V2_ROW_KEYS <= set(row) and "choice_A" in row


def is_data_row(row: Any) -> bool:
    """One of LongBench's data rows ({input, context, answers, …}), not a model's prediction."""
    return isinstance(row, dict) and {"context", "answers"} <= set(row) and "pred" not in row


def is_pred_row(row: Any) -> bool:
    """A row as LongBench's pred.py writes it: LV-Eval's rows carry `input` and `gold_ans` besides."""
    return (isinstance(row, dict) and {"pred", "answers", "all_classes"} <= set(row)
            and "input" not in row and "gold_ans" not in row)


def owns_rows(row: Any) -> bool:
    return is_v2_row(row) or is_pred_row(row)


# --- rows -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PredRow:
    """One row of a v1 or LongBench-E prediction file."""

    line: int  # the file's line (for messages)
    position: int  # 1-based position among the file's rows: the data row it answers
    pred: str
    answers: tuple[str, ...]
    all_classes: tuple[str, ...] | None
    length: int | float | None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class DataRow:
    """One of LongBench's data rows: a question, its document and its answers."""

    line: int
    position: int
    input: str
    context: str
    answers: tuple[str, ...]
    all_classes: tuple[str, ...] | None
    length: int | float | None
    item_id: str
    language: str


@dataclass(frozen=True)
class V2Row:
    """One row of a LongBench v2 results file."""

    line: int
    item_id: str
    domain: str
    sub_domain: str
    difficulty: str
    length: str
    question: str
    choices: tuple[str, str, str, str]
    answer: str
    context: str  # pred.py keeps its first 1,000 characters
    response: str
    response_cot: str | None
    pred: str | None  # the letter pred.py extracted, or None
    judge: bool


def _error(name: str, row: Row, field: str, message: str) -> FileFormatError:
    return FileFormatError(name, message, line=row.line, field=field)


def _text(row: Row, name: str, key: str, *, what: str = "a string") -> str:
    if key not in row.data:
        raise _error(name, row, key, "missing")
    value = row.data[key]
    if not isinstance(value, str):
        raise _error(name, row, key, f"expected {what}, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _strings(row: Row, name: str, key: str, why: str) -> tuple[str, ...]:
    if key not in row.data:
        raise _error(name, row, key, "missing")
    value = row.data[key]
    if not isinstance(value, list):
        raise _error(name, row, key, f"expected a list of strings, got {_kind(value)}{why}")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise _error(name, row, key, f"item {index} should be a string, got {_kind(item)}")
    return tuple(value)


def _classes(row: Row, name: str, dataset: str, notes: list[str]) -> tuple[str, ...] | None:
    """`all_classes`: the classes of trec and lsht (a list of strings); eval.py passes it to every metric, but only
    classification reads it, so elsewhere any value is kept out (noted) and null is what pred.py writes."""
    if "all_classes" not in row.data:
        raise _error(name, row, "all_classes", "missing (eval.py reads it from every row and stops without it)")
    value = row.data["all_classes"]
    if DATASETS[dataset].metric == "classification_score":
        return _strings(row, name, "all_classes", f": {dataset} is scored against its classes")
    if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        notes.append(f"all_classes: {_kind(value)} ignored, as {dataset}'s metric never reads it")
        return None
    return None if value is None else tuple(value)


def _length(row: Row, name: str, *, required: bool, notes: list[str]) -> int | float | None:
    value = row.data.get("length")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
        return value
    if required:
        if "length" not in row.data:
            raise _error(name, row, "length", "missing: LongBench-E scores each row in the bucket of its length, and "
                                              "eval.py would pair this row with a later row's length")
        raise _error(name, row, "length", f"expected a number of words (characters for Chinese), got {_kind(value)}")
    if "length" in row.data:
        notes.append(f"length: {_kind(value)} ignored; eval.py reads it only for LongBench-E")
    return None


def parse_pred_row(row: Row, name: str, dataset: str, variant: str, position: int) -> PredRow:
    """Validate `{pred, answers, all_classes, length}` as eval.py reads it; errors name line and field."""
    notes: list[str] = []
    pred = _text(row, name, "pred")
    answers = _strings(row, name, "answers", " (pred.py writes the data row's list; a string would be scored "
                                             "character by character)")
    all_classes = _classes(row, name, dataset, notes)
    length = _length(row, name, required=variant == E, notes=notes)
    return PredRow(line=row.line, position=position, pred=pred, answers=answers, all_classes=all_classes,
                   length=length, notes=tuple(notes))


def parse_data_row(row: Row, name: str, dataset: str, position: int) -> DataRow:
    """Validate one of LongBench's data rows."""
    notes: list[str] = []
    declared = row.data.get("dataset")
    if declared is not None and declared not in (dataset, f"{dataset}_e"):
        raise _error(name, row, "dataset", f"{declared!r} in the file of {dataset}")
    item_id = row.data.get("_id")
    if item_id is not None and not isinstance(item_id, str):
        raise _error(name, row, "_id", f"expected a string, got {_kind(item_id)}")
    language = row.data.get("language")
    return DataRow(line=row.line, position=position, input=_text(row, name, "input"),
                   context=_text(row, name, "context"),
                   answers=_strings(row, name, "answers", ""), all_classes=_classes(row, name, dataset, notes),
                   length=_length(row, name, required=False, notes=notes), item_id=item_id or "",
                   language=language if isinstance(language, str) else "")


def _choice(row: Row, name: str, key: str, allowed: tuple[str, ...], why: str) -> str:
    value = _text(row, name, key)
    if value not in allowed:
        raise _error(name, row, key, f"{value[:40]!r} is not one of {', '.join(allowed)}{why}")
    return value


def parse_v2_row(row: Row, name: str) -> V2Row:
    """Validate a v2 results row: what result.py reads (judge, difficulty, length) and the question it answers."""
    judge = row.data.get("judge")
    if not isinstance(judge, bool):
        raise _error(name, row, "judge", "missing" if "judge" not in row.data else
                     f"expected true or false (pred == answer), got {_kind(judge)}")
    pred = row.data.get("pred")
    if pred is not None and pred not in V2_CHOICES:
        raise _error(name, row, "pred", f"expected one of A, B, C, D or null, got {str(pred)[:40]!r}")
    answer = _choice(row, name, "answer", V2_CHOICES, "")
    if judge != (pred == answer):
        raise _error(name, row, "judge", f"says {str(judge).lower()}, but pred {pred!r} and answer {answer!r} "
                                         f"{'agree' if pred == answer else 'differ'} (pred.py writes pred == answer)")
    cot = row.data.get("response_cot")
    return V2Row(
        line=row.line, item_id=_text(row, name, "_id"), domain=_optional_text(row, "domain"),
        sub_domain=_optional_text(row, "sub_domain"),
        difficulty=_choice(row, name, "difficulty", V2_DIFFICULTIES, " (result.py counts anything else as hard)"),
        length=_choice(row, name, "length", V2_LENGTHS, " (result.py counts anything else as long)"),
        question=_text(row, name, "question"),
        choices=tuple(_text(row, name, f"choice_{letter}") for letter in V2_CHOICES),  # type: ignore[arg-type]
        answer=answer, context=_optional_text(row, "context"), response=_optional_text(row, "response"),
        response_cot=cot if isinstance(cot, str) else None, pred=pred, judge=judge)


def _optional_text(row: Row, key: str) -> str:
    value = row.data.get(key)
    return value if isinstance(value, str) else ""


# --- files ----------------------------------------------------------------------------------


@dataclass
class LongbenchFile:
    """One parsed file: a model's predictions of one dataset (v1 or E), a data file, or a v2 results file."""

    name: str
    variant: str
    dataset: str  # "" for v2
    data: bool = False
    rows: list = None  # type: ignore[assignment]


def _rows(raw: bytes | BinaryIO, name: str) -> Iterator[Row | FileFormatError]:
    # eval.py and result.py read in Python's text mode: a lone CR ends a line too.
    yield from iter_jsonl(raw, name, cr_ends_lines=True)


def collect_file(name: str, raw: bytes | BinaryIO, *, variant: str | None = None) -> tuple[LongbenchFile | None,
                                                                                        list[FileFormatError]]:
    """Parse a LongBench file reporting every bad line (up to MAX_FILE_ERRORS); `variant` forces LongBench-E ("e")
    or v2 ("v2") where the path does not say. The kind of file (predictions or data) is read off its first row."""
    described = describe_name(name)
    errors: list[FileFormatError] = []
    if variant == V2 or described is None:
        return _collect_v2(name, raw)
    kind = described.variant if variant is None else variant
    if kind == E and described.dataset not in E_DATASETS:
        return None, [FileFormatError(name, f"LongBench-E has no {described.dataset}: its datasets are "
                                            f"{', '.join(E_DATASETS)}")]
    rows: list = []
    data: bool | None = described.data or None
    for item in _rows(raw, name):
        try:
            if isinstance(item, FileFormatError):
                raise item
            if data is None:
                data = is_data_row(item.data)
            position = len(rows) + 1
            rows.append(parse_data_row(item, name, described.dataset, position) if data else
                        parse_pred_row(item, name, described.dataset, kind, position))
        except FileFormatError as error:
            rows.append(None)  # a bad row still holds its place: the rows after it answer the data rows after it
            if len(errors) < MAX_FILE_ERRORS:
                errors.append(error)
    if not rows and not errors:
        errors.append(FileFormatError(name, "the file has no JSON lines"))
    if errors:
        return None, errors
    return LongbenchFile(name=name, variant=kind, dataset=described.dataset, data=bool(data), rows=rows), []


def _collect_v2(name: str, raw: bytes | BinaryIO) -> tuple[LongbenchFile | None, list[FileFormatError]]:
    """result.py reads a file as one JSON document first (a list of rows), else as JSON lines."""
    data = raw if isinstance(raw, (bytes, bytearray)) else raw.read()
    items: list[Row | FileFormatError]
    whole = _whole_document(data)
    if isinstance(whole, list):
        items = [Row(index + 1, item) if isinstance(item, dict) else
                 FileFormatError(name, f"item {index} of the JSON array is not an object") for index, item in
                 enumerate(whole)]
    else:
        items = list(_rows(data, name))
    rows, errors = [], []
    for item in items:
        try:
            if isinstance(item, FileFormatError):
                raise item
            rows.append(parse_v2_row(item, name))
        except FileFormatError as error:
            if len(errors) < MAX_FILE_ERRORS:
                errors.append(error)
    seen: dict[str, int] = {}
    for row in rows:
        if row.item_id in seen:
            errors.append(FileFormatError(name, f"a second row for _id {row.item_id!r} (the first is on line "
                                                f"{seen[row.item_id]})", line=row.line, field="_id"))
        seen.setdefault(row.item_id, row.line)
    if not rows and not errors:
        errors.append(FileFormatError(name, "the file has no rows"))
    if errors:
        return None, errors[:MAX_FILE_ERRORS]
    return LongbenchFile(name=name, variant=V2, dataset="", rows=rows), []


def _whole_document(data: bytes) -> Any:
    try:
        return read_json(data)
    except JsonRefused:
        return None


def v2_model_name(path: str | PurePath) -> str:
    """result.py's name of a results file: everything before its last dot."""
    name = PurePosixPath(str(path).replace("\\", "/")).name
    return ".".join(name.split(".")[:-1]) if "." in name else name
