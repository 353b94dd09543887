"""Document titles: the title line a text states, else its task and number, not its first line

Revision ID: 050d3a358bfb
Revises: f87bdea9abc2
Create Date: 2026-11-23 18:50:00.000000

"""
from alembic import op
import sqlalchemy as sa

from app.core.text import document_title, normalize_ws

# revision identifiers, used by Alembic.
revision = '050d3a358bfb'
down_revision = 'f87bdea9abc2'
branch_labels = None
depends_on = None

# Titles are read from the opening of a text; the whole text (up to 255K characters) is not needed.
HEAD_CHARS = 20000
SKIPPED = ("lveval",)  # LV-Eval's documents are named "LV-Eval <dataset>, <level>" on import, not from text
AUTHORED = "authored"


def first_line_title(text: str, limit: int = 90) -> str:
    """The rule this revision replaces: the first non-empty line, shortened on a word boundary."""
    for line in text.splitlines():
        line = normalize_ws(line)
        if line:
            if len(line) <= limit:
                return line
            cut = line[:limit].rsplit(" ", 1)[0]
            return (cut or line[:limit]) + "…"
    return "Untitled document"


def _documents(bind):
    return bind.execute(sa.text(
        "SELECT id, collection, task, sha256, title, substr(text, 1, :head), is_demo FROM documents "
        "WHERE collection NOT IN :skipped ORDER BY id"
    ).bindparams(sa.bindparam("skipped", expanding=True)), {"head": HEAD_CHARS, "skipped": list(SKIPPED)}).all()


def _both_titles(bind):
    """(id, current title, the old rule's title, this revision's title) for every document concerned.

    A document's number is its place among its collection's documents of the same task (the demo's
    apart), by id, as the importers number new ones; a researcher's copy (authored) takes its
    source's title, as copying does from now on.
    """
    numbers: dict[tuple[str, str], int] = {}
    by_text: dict[tuple[str, str], str] = {}
    for id_, collection, task, sha256, title, head, demo in sorted(_documents(bind), key=lambda r: (r[1] == AUTHORED, r[0])):
        key = (collection, task, bool(demo))
        numbers[key] = numbers.get(key, 0) + 1
        if collection == AUTHORED and (task, sha256) in by_text:
            new = by_text[(task, sha256)]
        else:
            new = document_title(head, task, numbers[key])[:200]
        by_text.setdefault((task, sha256), new)
        yield id_, title, first_line_title(head), new


def upgrade():
    # Only titles the old rule made change: a title set any other way stays.
    bind = op.get_bind()
    update = sa.text("UPDATE documents SET title = :title WHERE id = :id")
    for id_, title, old, new in list(_both_titles(bind)):
        if title == old and new != old:
            bind.execute(update, {"title": new, "id": id_})


def downgrade():
    bind = op.get_bind()
    update = sa.text("UPDATE documents SET title = :title WHERE id = :id")
    for id_, title, old, new in list(_both_titles(bind)):
        if title == new and new != old:
            bind.execute(update, {"title": old, "id": id_})
