"""`verify-quotes`: check a judge's quotes against a document (a text file or a stored question's)."""
from __future__ import annotations

import json
from pathlib import Path

import click
from flask.cli import with_appcontext

QUESTION_PREFIX = "question:"
STATUSES = ("exact", "close", "unsupported")
QUOTE_WIDTH = 48  # characters of a quote shown in the table; --json has it whole


def read_document(document: str) -> str:
    """The text quotes are checked against, exactly as stored (no newline translation: offsets count \\r)."""
    if document.startswith(QUESTION_PREFIX):
        return question_document(document[len(QUESTION_PREFIX):])
    path = Path(document)
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except FileNotFoundError:
        raise click.ClickException(f"DOCUMENT {path}: no such file (or give question:<id>)") from None
    except IsADirectoryError:
        raise click.ClickException(f"DOCUMENT {path}: is a folder, not a text file") from None
    except UnicodeDecodeError as exc:
        raise click.ClickException(f"DOCUMENT {path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise click.ClickException(f"DOCUMENT {path}: {exc.strerror}") from None


def question_document(raw_id: str) -> str:
    from ..extensions import db
    from ..models import Question
    from ..models.ids import parse_db_id
    from .database import upgrade_database

    question_id = parse_db_id(raw_id)
    if question_id is None:
        raise click.ClickException(f"DOCUMENT {QUESTION_PREFIX}{raw_id}: the id must be a number, as in question:12")
    upgrade_database()
    question = db.session.get(Question, question_id)
    if question is None:
        raise click.ClickException(f"DOCUMENT {QUESTION_PREFIX}{raw_id}: no question with id {raw_id}")
    return question.document.text


def read_quotes(path: Path) -> list[tuple[int, str]]:
    """(line number, quote) for each non-blank line; the first bad line stops with file, line and field."""
    from ..core.json_input import JsonRefused, read_json

    try:
        with open(path, "rb") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        raise click.ClickException(f"QUOTES {path}: no such file") from None
    except IsADirectoryError:
        raise click.ClickException(f"QUOTES {path}: is a folder, not a .jsonl file") from None
    except OSError as exc:
        raise click.ClickException(f"QUOTES {path}: {exc.strerror}") from None
    quotes = []
    for number, raw in enumerate(lines, start=1):
        where = f"{path}, line {number}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise click.ClickException(f"{where}: not UTF-8 text") from None
        if not line.strip():
            continue
        try:
            row = read_json(line)
        except JsonRefused as exc:
            field = f' field "{exc.field}"' if exc.field else ""
            raise click.ClickException(f"{where}:{field} not valid JSON ({exc.reason}, column {exc.column})") from None
        if not isinstance(row, dict):
            raise click.ClickException(f'{where}: expected an object like {{"quote": "..."}}, '
                                       f"got {json_type(row)}")
        if "quote" not in row:
            raise click.ClickException(f'{where}: field "quote" is missing')
        quote = row["quote"]
        if not isinstance(quote, str):
            raise click.ClickException(f'{where}: field "quote" must be a string, got {json_type(quote)}')
        if not quote.strip():
            raise click.ClickException(f'{where}: field "quote" is empty')
        quotes.append((number, quote))
    return quotes


def json_type(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null"}
    return names.get(type(value), "a number")


def shorten(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[:width - 1] + "…"


def print_table(rows: list[dict]) -> None:
    click.echo(f"{'line':>5}  {'status':<11}  {'span':<15}  {'quote':<{QUOTE_WIDTH}}  reason")
    for row in rows:
        span = "-" if row["start"] is None else f"{row['start']}-{row['end']}"
        click.echo(f"{row['line']:>5}  {row['status']:<11}  {span:<15}  "
                   f"{shorten(row['quote'], QUOTE_WIDTH):<{QUOTE_WIDTH}}  {row['reason']}")


@click.command("verify-quotes")
@with_appcontext
@click.argument("document")
@click.argument("quotes_path", metavar="QUOTES.jsonl", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object per quote {line, quote, status, start, end, reason, too_short}, then "
                   "{summary}.")
def verify_quotes_command(document: str, quotes_path: Path, as_json: bool) -> None:
    """Check a judge's quotes against a text file or a stored question's document.

    QUOTES.jsonl holds one {"quote": "..."} per line; DOCUMENT is a UTF-8 text file or
    question:<id>. Each quote is exact (in the text once whitespace, curly quotes and dashes are folded), close
    (only case, punctuation or spacing differ) or unsupported (with the nearest passage's difference), and a
    quote under the minimum (4 words, 6 Han, Kana or Hangul characters, 10 Thai) is unsupported and too_short;
    start and end are character offsets into the document.
    """
    from ..core.quotes import DocumentIndex

    quotes = read_quotes(quotes_path)  # a bad line fails before the document is read or indexed
    index = DocumentIndex(read_document(document))
    rows = []
    for number, quote in quotes:
        check = index.verify(quote)
        rows.append({"line": number, "quote": quote, "status": check.status, "start": check.start,
                     "end": check.end, "reason": check.reason, "too_short": check.too_short})
    summary = {status: sum(row["status"] == status for row in rows) for status in STATUSES}
    summary["too_short"] = sum(row["too_short"] for row in rows)  # of the unsupported
    summary["total"] = len(rows)
    if as_json:
        for row in rows:
            click.echo(json.dumps(row, ensure_ascii=False))
        click.echo(json.dumps({"summary": summary}))
        return
    print_table(rows)
    shorts = f" ({summary['too_short']} too short)" if summary["too_short"] else ""
    click.echo(f"{summary['total']} quotes: {summary['exact']} exact, {summary['close']} close, "
               f"{summary['unsupported']} unsupported{shorts}")


COMMANDS = [verify_quotes_command]
