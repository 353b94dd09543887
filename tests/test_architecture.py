"""The layout's promises: pure cores know nothing of Flask or the database, and app/ has no import cycle."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from tests.support.shared import REPO_ROOT

pytestmark = pytest.mark.database_free  # a pure core: the PostgreSQL pass leaves it out

APP = REPO_ROOT / "app"
# Pure cores: importable and testable without Flask, SQLAlchemy or the app's database layer.
PURE = ("app/metrics", "app/judge", "app/stats", "app/charts", "app/llm", "app/text.py", "app/version.py",
        "app/core/quotes.py")
FORBIDDEN = ("flask", "flask_sqlalchemy", "flask_login", "flask_wtf", "flask_migrate", "sqlalchemy", "werkzeug",
             "app.models", "app.extensions", "app.services", "app.security")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every module this file imports, anywhere in it (type-checking-only imports aside)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    class Visitor(ast.NodeVisitor):
        def visit_If(self, node: ast.If) -> None:
            if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
                return
            self.generic_visit(node)

        def visit_Import(self, node: ast.Import) -> None:
            found.update(alias.name for alias in node.names)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)

    Visitor().visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def app_modules() -> dict[str, Path]:
    return {module_name(path): path for path in APP.rglob("*.py")}


def pure_files() -> list[Path]:
    files = []
    for entry in PURE:
        path = REPO_ROOT / entry
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return files


@pytest.mark.parametrize("path", pure_files(), ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_pure_cores_import_no_web_framework_and_no_database(path):
    bad = sorted(name for name in imports_of(path)
                 if any(name == f or name.startswith(f + ".") for f in FORBIDDEN))
    assert not bad, f"{path.relative_to(REPO_ROOT)} imports {bad}"


def test_app_has_no_import_cycle():
    modules = app_modules()
    graph = {name: {target for target in imports_of(path) if target in modules and target != name}
             for name, path in modules.items()}
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    assert not cycles, f"import cycles: {cycles}"


def test_the_cycle_check_finds_a_planted_cycle(tmp_path, monkeypatch):
    """The check itself works: two modules that import each other are reported."""
    package = tmp_path / "app"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from . import b\n")
    (package / "b.py").write_text("def f():\n    from .a import g\n")
    monkeypatch.setattr(sys.modules[__name__], "REPO_ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "APP", package)
    with pytest.raises(AssertionError, match="import cycles"):
        test_app_has_no_import_cycle()
