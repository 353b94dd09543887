"""L-Eval's and LV-Eval's file conventions, owned here and nowhere else.

The task lists, how a path names its system and task, which key holds a row's
prediction, and the one hardened JSON-lines reader. The importers, the upload
preview, the judge's file sources and `eval` all call this module.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, BinaryIO, Iterator, Sequence

from app.core.json_input import JsonRefused, read_json
from app.core.text import is_valid_unicode
from app.core.metrics.lines import MAX_LINE_BYTES, numbered_lines

# L-Eval's tasks in its own order (closed-ended, then open-ended), as its leaderboard lists them.
CLOSED_TASKS = ("coursera", "quality", "tpo", "gsm100", "topic_retrieval_longchat", "codeU", "sci_fi")
OPEN_TASKS = (
    "financial_qa", "gov_report_summ", "legal_contract_qa", "meeting_summ", "multidoc_qa",
    "narrative_qa", "natural_question", "news_summ", "paper_assistant", "patent_summ",
    "review_summ", "scientific_qa", "tv_show_summ",
)
LEVAL_TASKS = CLOSED_TASKS + OPEN_TASKS
# LV-Eval's datasets; its files are `<dataset>_<level>.jsonl`, e.g. cmrc_mixup_16k.jsonl.
LVEVAL_DATASETS = (
    "hotpotwikiqa_mixup", "loogle_SD_mixup", "loogle_CR_mixup", "loogle_MIR_mixup", "multifieldqa_en_mixup",
    "multifieldqa_zh_mixup", "factrecall_en", "factrecall_zh", "cmrc_mixup", "lic_mixup", "dureader_mixup",
)
FILE_SUFFIXES = (".pred.jsonl", ".jsonl", ".json")
# L-Eval names the prediction after the model: `<model>_pred` (gpt4-32k.pred.jsonl uses gpt4-x_pred).
PRED_MARKER = "_pred"


# --- names ---------------------------------------------------------------------------


def lveval_dataset(stem: str) -> str:
    """Strip LV-Eval's length suffix: "cmrc_mixup_16k" gives "cmrc_mixup" (its own split rule)."""
    return re.split(r"_.{1,3}k", stem)[0]


def is_known_task(name: str) -> bool:
    """Tell whether a file stem names an L-Eval task or an LV-Eval dataset (with or without its level)."""
    return name in LEVAL_TASKS or lveval_dataset(name) in LVEVAL_DATASETS


def file_stem(path: str | PurePath) -> str:
    """The file name without `.pred.jsonl`, `.jsonl` or `.json`."""
    name = PurePath(path).name
    suffix = next((s for s in FILE_SUFFIXES if name.endswith(s)), PurePath(name).suffix)
    return name[: len(name) - len(suffix)] if suffix else name


def describe_file(path: str | PurePath, rows: Sequence[Any] = (), *, fallback: bool = True) -> tuple[str, str]:
    """Return (task, system) for a prediction file.

    `<system>/<task>.pred.jsonl` (and LV-Eval's `<system>/<dataset>_<level>.jsonl`) when the stem
    is a known task; otherwise the stem is the system. Without `fallback` what the path does not
    say stays "": the system of a bare `<task>.pred.jsonl`, the task of `<system>.pred.jsonl`.
    With it, the system is then the stem, and the task the rows' single `source`, "mixed" for
    several, else the folder name.
    """
    path = PurePath(path)
    stem = file_stem(path)
    folder = path.parent.name
    if is_known_task(stem):
        return stem, folder or (stem if fallback else "")
    if not fallback:
        return "", stem
    sources = {row.get("source") for row in rows if isinstance(row, dict) and row.get("source")}
    if len(sources) == 1:
        return str(sources.pop()), stem
    return ("mixed" if sources else folder or "unknown"), stem


def prediction_key(row: Any) -> str | None:
    """The first key containing `_pred`, as L-Eval's scripts find it; None when there is none."""
    if not isinstance(row, dict):
        return None
    return next((key for key in row if isinstance(key, str) and PRED_MARKER in key), None)


def is_lveval_row(row: Any) -> bool:
    """LV-Eval rows carry `answers` and `pred` (L-Eval rows carry `gt` and `<model>_pred`)."""
    return isinstance(row, dict) and "answers" in row and "pred" in row and "gt" not in row


# --- reading ---------------------------------------------------------------------------


class FileFormatError(ValueError):
    """A problem in an input file, located by file, line and field."""

    def __init__(self, file: str, message: str, *, line: int | None = None, field: str | None = None):
        self.file, self.line, self.field, self.message = file, line, field, message
        super().__init__(str(self))

    def __str__(self) -> str:
        return describe(self.as_dict())

    def as_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "field": self.field, "message": self.message}


def describe(error: dict) -> str:
    """Render an error dict (FileFormatError.as_dict()) as 'file, line N, field 'x': message'."""
    where = str(error["file"])
    if error.get("line") is not None:
        where += f", line {error['line']}"
    if error.get("field"):
        where += f", field '{error['field']}'"
    return f"{where}: {error['message']}"


@dataclass(frozen=True)
class Row:
    line: int
    data: dict[str, Any]


# A \uD800-\uDFFF escape: only a lone one (not half of a pair) decodes to a string no database can store.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def iter_jsonl(source: bytes | BinaryIO, name: str, *, cr_ends_lines: bool = False,
               max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[Row | FileFormatError]:
    """Yield each non-blank line as a Row, or as the FileFormatError that locates its problem.

    `source` is bytes or a binary file, read as a stream. A UTF-8 BOM and CRLF endings are
    accepted (`cr_ends_lines`: a lone CR ends a line too, as Python's text mode reads it). A line
    over `max_line_bytes`, what the JSON reader refuses (core/json_input.py: nesting, long numbers)
    and lone surrogate escapes are errors on their line (and field), never exceptions.
    """
    for number, line in numbered_lines(source, cr_ends_lines=cr_ends_lines, max_line_bytes=max_line_bytes):
        if line is None:
            yield FileFormatError(name, f"the line is longer than the limit of {max_line_bytes // (1024 * 1024)} MB "
                                        "for one JSON line", line=number)
            continue
        line = line.rstrip(b"\r")
        if not line.strip():
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield FileFormatError(name, f"not valid UTF-8 (byte {exc.start})", line=number)
            continue
        try:
            data = read_json(text)
        except JsonRefused as exc:
            yield FileFormatError(name, f"{exc.reason} at column {exc.column}", line=number, field=exc.field)
            continue
        if not isinstance(data, dict):
            yield FileFormatError(name, f"expected a JSON object, got {type(data).__name__}", line=number)
            continue
        if _SURROGATE_ESCAPE.search(text) and not is_valid_unicode(data):
            yield FileFormatError(name, "a \\u escape names half of a surrogate pair: not valid Unicode", line=number)
            continue
        yield Row(number, data)


def parse_jsonl(raw: bytes | BinaryIO, name: str, *, cr_ends_lines: bool = False) -> list[Row]:
    """Parse JSON lines from bytes or a binary file; raise FileFormatError naming the first bad line."""
    rows = list(stream_jsonl(raw, name, cr_ends_lines=cr_ends_lines))
    if not rows:
        raise FileFormatError(name, "the file has no JSON lines")
    return rows


def stream_jsonl(raw: bytes | BinaryIO, name: str, *, cr_ends_lines: bool = False) -> Iterator[Row]:
    """parse_jsonl one row at a time (a streamed import): raises FileFormatError at the first bad line."""
    for item in iter_jsonl(raw, name, cr_ends_lines=cr_ends_lines):
        if isinstance(item, FileFormatError):
            raise item
        yield item


def read_rows(path: str | Path) -> list[dict]:
    """Read a prediction file's rows with the hardened reader; an empty file gives no rows."""
    path = Path(path)
    raw = path.read_bytes()
    rows = []
    for item in iter_jsonl(lveval_text(raw) if is_lveval_file_name(path) else raw, str(path)):
        if isinstance(item, FileFormatError):
            reason = item.message.removeprefix("invalid JSON: ")
            raise FileFormatError(str(path), f"line {item.line} is not valid JSON: {reason}")
        rows.append(item.data)
    return rows


# --- how L-Eval's judge (Evaluation/llm_eval.py) reads a file -------------------------------------

# When a file holds rows with these evaluations (exact spelling), llm_eval.py judges only those.
LLM_EVAL_NGRAM_EVALUATIONS = ("f1", "rouge")


@dataclass(frozen=True)
class JudgeFileRows:
    """The rows llm_eval.py judges, the lines it drops without a word (here with the reason), and
    how many readable rows its f1/rouge rule leaves out."""

    rows: list[Row]
    dropped: list[FileFormatError]
    not_judged: int


def llm_eval_rows(raw: bytes, name: str) -> JudgeFileRows:
    """Read a prediction file as llm_eval.py's read_jsonl does.

    A line that is not a JSON object, or has no (hashable) `evaluation`, is dropped; when any
    kept row's evaluation is exactly "f1" or "rouge", only those rows are judged.
    """
    kept: list[Row] = []
    dropped: list[FileFormatError] = []
    for item in iter_jsonl(raw, name):
        if isinstance(item, FileFormatError):
            dropped.append(item)
        elif "evaluation" not in item.data:
            dropped.append(FileFormatError(name, "no evaluation (llm_eval.py drops the row)", line=item.line,
                                           field="evaluation"))
        elif isinstance(item.data["evaluation"], (list, dict)):
            dropped.append(FileFormatError(name, "evaluation is not a name (llm_eval.py drops the row)",
                                           line=item.line, field="evaluation"))
        else:
            kept.append(item)
    if any(row.data["evaluation"] in LLM_EVAL_NGRAM_EVALUATIONS for row in kept):
        judged = [row for row in kept if row.data["evaluation"] in LLM_EVAL_NGRAM_EVALUATIONS]
        return JudgeFileRows(judged, dropped, len(kept) - len(judged))
    return JudgeFileRows(kept, dropped, 0)


def last_prediction_key(row: Any) -> str | None:
    """The LAST key containing `_pred`: how llm_eval.py finds the battle file's key (its loop has no break)."""
    if not isinstance(row, dict):
        return None
    keys = [key for key in row if isinstance(key, str) and PRED_MARKER in key]
    return keys[-1] if keys else None


# --- LV-Eval ---------------------------------------------------------------------------------

# LV-Eval's length levels (config.DATASET_LENGTH_LEVEL), shortest first.
LVEVAL_LEVELS = ("16k", "32k", "64k", "128k", "256k")
# Our extension: a factrecall row may say where its needle sits, as a share of the context (0 = start).
DEPTH_FIELD = "depth"


def lveval_file_key(path: str | PurePath) -> str:
    """`<dataset>_<level>` as evaluation.py reads it: the file name up to its first dot."""
    return PurePath(path).name.split(".")[0]


def is_lveval_file_name(path: str | PurePath) -> bool:
    """Tell whether evaluation.py would score this file as one of LV-Eval's datasets."""
    name = PurePath(path).name
    return name.endswith("jsonl") and lveval_dataset(lveval_file_key(name)) in LVEVAL_DATASETS


def lveval_name(path: str | PurePath) -> tuple[str, str]:
    """Return (dataset, level) of `<dataset>_<level>.jsonl`; raise FileFormatError for anything else."""
    name = PurePath(path).name
    key = lveval_file_key(name)
    dataset, level = lveval_dataset(key), key.split("_")[-1]
    if dataset not in LVEVAL_DATASETS and key.rsplit("_", 1)[0] in LVEVAL_DATASETS:
        dataset = key.rsplit("_", 1)[0]  # e.g. cmrc_mixup_1024k: LV-Eval's pattern keeps 1-3 characters before "k"
    if dataset not in LVEVAL_DATASETS:
        raise FileFormatError(name, f"unknown LV-Eval dataset in {key!r}; expected <dataset>_<level>.jsonl with "
                                    f"a dataset among {', '.join(LVEVAL_DATASETS)}")
    if level not in LVEVAL_LEVELS or key != f"{dataset}_{level}":
        raise FileFormatError(name, f"unknown LV-Eval length level in {key!r}; expected one of "
                                    f"{', '.join(LVEVAL_LEVELS)}")
    return dataset, level


def lveval_sort_key(path: str | PurePath) -> tuple:
    """evaluation.py's `custom_sort`: the name's letter runs, then its first number."""
    name = PurePath(path).name
    numbers = re.findall(r"\d+", name)
    return re.findall("[a-zA-Z]+", name), int(numbers[0]) if numbers else 0


@dataclass(frozen=True)
class LvevalRow:
    """One row of an LV-Eval prediction file, as prediction.py writes it."""

    line: int
    pred: str
    answers: tuple[Any, ...] | str  # a list in LV-Eval's files (only its first item, a string, is scored)
    gold_ans: str | None
    input: str
    length: int | None
    depth: float | None
    notes: tuple[str, ...] = ()  # fields LV-Eval never reads that were ignored, and why


# Datasets whose metric never reads gold_ans (config.py: factrecall's plain F1, dureader's ROUGE-L).
LVEVAL_NO_GOLD = frozenset({"factrecall_en", "factrecall_zh", "dureader_mixup"})


def lveval_text(raw: bytes) -> bytes:
    """Line ends as evaluation.py's text-mode `open` reads them: CRLF, a lone CR and LF each end a line."""
    return raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n") if b"\r" in raw else raw


def _typed(row: Row, name: str, key: str, kinds: tuple[type, ...], what: str, *, required: bool) -> Any:
    value = row.data.get(key)
    if value is None:
        if required:
            raise FileFormatError(name, "missing" if key not in row.data else "is null", line=row.line, field=key)
        return None
    if not isinstance(value, kinds) or isinstance(value, bool):
        raise FileFormatError(name, f"expected {what}, got {type(value).__name__}", line=row.line, field=key)
    return value


def _unread(row: Row, name: str, key: str, kinds: tuple[type, ...], what: str, notes: list[str]) -> Any:
    """A field evaluation.py never reads: a value of the wrong type is ignored (noted), never an error."""
    try:
        return _typed(row, name, key, kinds, what, required=False)
    except FileFormatError as error:
        notes.append(f"{key}: {error.message}; LV-Eval does not read it, so it is ignored")
        return None


def _answers(row: Row, name: str, notes: list[str]) -> tuple[Any, ...] | str:
    """`answers` as evaluation.py iterates it: only the first item is scored, so only it must be a string."""
    answers = _typed(row, name, "answers", (list, str, dict), "a list of strings", required=True)
    if isinstance(answers, dict):  # iterating a dict gives its keys
        notes.append("answers is an object: LV-Eval iterates its keys, so its first key is the answer")
        answers = list(answers)
    if isinstance(answers, list):
        if answers and not isinstance(answers[0], str):
            raise FileFormatError(name, f"item 0 should be a string, got {type(answers[0]).__name__}",
                                  line=row.line, field="answers")
        answers = tuple(answers)
    return answers


def _gold_ans(row: Row, name: str, dataset: str | None, notes: list[str]) -> str | None:
    """gold_ans as LV-Eval's metrics read it: a string, or empty (None); ignored where the metric never reads it."""
    value = row.data.get("gold_ans")
    if value is None or isinstance(value, str):
        return value
    if dataset in LVEVAL_NO_GOLD:
        notes.append(f"gold_ans: {type(value).__name__} ignored, as {dataset}'s metric never reads it")
        return None
    if not value:  # 0, false, [], {}: the gate's `if gold_ans` treats them as absent
        notes.append(f"gold_ans: an empty {type(value).__name__}, read as no keywords, as LV-Eval does")
        return None
    raise FileFormatError(name, f"expected a string or null, got {type(value).__name__}", line=row.line,
                          field="gold_ans")


def parse_lveval_row(row: Row, name: str, dataset: str | None = None) -> LvevalRow:
    """Validate `{pred, answers, gold_ans?, input?, all_classes?, length?, depth?}`; errors name line and field.

    evaluation.py reads only pred, answers (its first item) and gold_ans, so only what would make it stop is an
    error; a bad value in a field it never reads is ignored with a note. `input` (the question) identifies the
    row across models when present.
    """
    notes: list[str] = []
    pred = _typed(row, name, "pred", (str,), "a string", required=True)
    answers = _answers(row, name, notes)
    gold_ans = _gold_ans(row, name, dataset, notes)
    question = _unread(row, name, "input", (str,), "a string", notes) or ""
    length = _unread(row, name, "length", (int,), "a whole number of words", notes)
    if length is not None and length < 0:
        notes.append("length: negative; LV-Eval does not read it, so it is ignored")
        length = None
    depth = _unread(row, name, DEPTH_FIELD, (int, float), "a number from 0 to 1", notes)
    if depth is not None and not 0.0 <= float(depth) <= 1.0:
        notes.append(f"{DEPTH_FIELD}: not between 0 (start of the context) and 1 (end); ignored")
        depth = None
    if depth is None and isinstance(row.data.get("context"), str):
        depth = needle_depth(row.data["context"], answers)
    return LvevalRow(line=row.line, pred=pred, answers=answers, gold_ans=gold_ans, input=question, length=length,
                     depth=None if depth is None else float(depth), notes=tuple(notes))


def needle_depth(context: str, answers: tuple[str, ...] | str) -> float | None:
    """Where the first answer first appears in the context, as a share of its length; None if it does not."""
    answer = answers if isinstance(answers, str) else (answers[0] if answers else "")
    if not answer or not context:
        return None
    position = context.find(answer)
    return None if position < 0 else position / len(context)
