"""The raw SQL written in the project: every string literal in app/, migrations/ and tests/ that is a whole
SQL statement, with where it is, for the portability guards (tests/test_portable_sql.py).

SQLAlchemy writes the app's own queries for each database; raw SQL (text(), exec_driver_sql, the tests'
sqlite3-style `?` reads through tests/support/live.py) is passed on as written, so SQLite's leniency can hide
what PostgreSQL refuses. A literal that only SQLite is meant to run is one inside a test marked sqlite_only
(a test of SQLite itself) or one that names SQLite's own tables and pragmas.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from tests.support.shared import REPO_ROOT

ROOTS = ("app", "migrations", "tests")
EXAMPLES = ("tests/test_portable_sql.py",)  # the guards' own examples, some wrong on purpose
# What a statement starts with, in capitals as the project writes SQL (a sentence starting "Delete a study" is
# not one); DDL is left to the migrations, which run on both databases.
STATEMENT = re.compile(r"^\s*(SELECT\s|INSERT\s+INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|WITH\s)")
SQLITE_OWN = re.compile(r"\b(sqlite_\w+|pragma_\w+)\b|^\s*PRAGMA\b", re.IGNORECASE)
# Quoted text and identifiers, skipped by the scans below: a '?' or '(' inside them is not SQL.
QUOTED = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"")
PLACEHOLDER = re.compile(r"%\((\w+)\)s|%s|\?|(?<![:\w]):(\w+)\b(?!:)")


@dataclass(frozen=True)
class Statement:
    path: str  # relative to the repository
    line: int
    sql: str
    sqlite_only: bool  # in a test of SQLite itself, or about SQLite's own tables

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def _marked_sqlite_only(decorators: list[ast.expr]) -> bool:
    return any("sqlite_only" in ast.unparse(decorator) for decorator in decorators)


def _module_sqlite_only(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in node.targets):
            if "sqlite_only" in ast.unparse(node.value):
                return True
    return False


def statements_in(path: Path) -> list[Statement]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    relative = path.relative_to(REPO_ROOT).as_posix()
    found: list[Statement] = []

    def visit(node: ast.AST, sqlite_only: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            sqlite_only = sqlite_only or _marked_sqlite_only(node.decorator_list)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and STATEMENT.match(node.value):
            found.append(Statement(relative, node.lineno, node.value,
                                   sqlite_only or bool(SQLITE_OWN.search(node.value))))
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.JoinedStr):  # an f-string's pieces are not statements
                continue
            if _compared_with(node, child):
                continue
            visit(child, sqlite_only)

    visit(tree, _module_sqlite_only(tree))
    return found


def _compared_with(parent: ast.AST, child: ast.AST) -> bool:
    """A literal a statement is compared with (`sql.startswith("UPDATE users SET")`), not one that is run."""
    return (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute)
            and parent.func.attr in ("startswith", "endswith") and child in parent.args)


def is_template(sql: str) -> bool:
    """A statement with str.format fields ({evaluation}), completed where it is used: not a statement yet."""
    return re.search(r"\{\w*\}", blank_quoted(sql)) is not None


def project_statements() -> list[Statement]:
    statements: list[Statement] = []
    for root in ROOTS:
        for path in sorted((REPO_ROOT / root).rglob("*.py")):
            if path.relative_to(REPO_ROOT).as_posix() not in EXAMPLES:
                statements.extend(statements_in(path))
    return statements


def blank_quoted(sql: str) -> str:
    """The statement with its quoted text and identifiers blanked (same length), for scanning its syntax."""
    return QUOTED.sub(lambda match: match.group(0)[0] + " " * (len(match.group(0)) - 2) + match.group(0)[-1], sql)


def derived_tables_without_alias(sql: str) -> list[str]:
    """Each subquery in FROM or JOIN that has no alias after it (SQLite and PostgreSQL 16+ accept one;
    PostgreSQL up to 15 refuses it: "subquery in FROM must have an alias")."""
    scan = blank_quoted(sql)
    missing = []
    for match in re.finditer(r"\b(FROM|JOIN)\s*\(\s*(SELECT|WITH|VALUES)\b", scan, re.IGNORECASE):
        start = scan.index("(", match.start())
        depth, end = 0, None
        for index in range(start, len(scan)):
            if scan[index] == "(":
                depth += 1
            elif scan[index] == ")":
                depth -= 1
                if depth == 0:
                    end = index
                    break
        if end is None:
            continue  # not closed in this literal: a fragment, joined elsewhere
        following = re.match(r"\s*(AS\s+)?([A-Za-z_]\w*)?", scan[end + 1:], re.IGNORECASE)
        alias = following.group(2) if following else None
        if following.group(1) is None and (alias is None or alias.upper() in NOT_AN_ALIAS):
            missing.append(" ".join(sql[match.start():end + 1].split()))
    return missing


NOT_AN_ALIAS = frozenset({
    "WHERE", "GROUP", "ORDER", "LIMIT", "OFFSET", "HAVING", "UNION", "INTERSECT", "EXCEPT", "JOIN", "INNER",
    "LEFT", "RIGHT", "FULL", "CROSS", "NATURAL", "ON", "USING", "WINDOW", "RETURNING", "FOR", "AND", "OR",
})


def numbered(sql: str) -> tuple[str, int]:
    """The statement with its placeholders (sqlite3's ?, :name, %s and %(name)s) as PostgreSQL's $1, $2, …,
    and how many there are; a name used twice is one parameter."""
    # SQLAlchemy's expanding parameter (`IN :names`) becomes a parenthesised list when it is run.
    sql = re.sub(r"\bIN\s+(:\w+)", r"IN (\1)", sql, flags=re.IGNORECASE)
    scan = blank_quoted(sql)
    names: dict[str, int] = {}
    pieces, last, count = [], 0, 0
    for match in PLACEHOLDER.finditer(scan):
        name = match.group(1) or match.group(2)
        if name is not None and name in names:
            number = names[name]
        else:
            count += 1
            number = count
            if name is not None:
                names[name] = number
        pieces += [sql[last:match.start()], f"${number}"]
        last = match.end()
    pieces.append(sql[last:])
    return "".join(pieces), count
