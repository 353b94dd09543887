"""The layout's promises, readable from the paths.

- app/core is pure: it imports nothing of app outside app/core, and no Flask, SQLAlchemy or Werkzeug;
- app/services reads and writes the database and never imports the pages (app/web) or the commands (app/cli);
- app/models imports neither services, pages nor commands;
- no module cycle (type-checking imports included) and no cycle between service packages
  (function-level imports included);
- app/ holds a handful of entries, and no feature goes by two nouns;
- one module (app/web/downloads.py) writes every Content-Disposition header.
"""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.shared import REPO_ROOT

pytestmark = pytest.mark.database_free  # a pure core: the PostgreSQL pass leaves it out

APP = REPO_ROOT / "app"
# Pure: importable and testable without Flask, SQLAlchemy or the app's database layer.
PURE = ("app/core",)
FRAMEWORKS = ("flask", "flask_sqlalchemy", "flask_login", "flask_wtf", "flask_migrate", "sqlalchemy", "werkzeug",
              "wtforms", "alembic")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, *, type_checking: bool = False) -> set[str]:
    """Every module this file imports, anywhere in it (type-checking-only imports too when asked)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    class Visitor(ast.NodeVisitor):
        def visit_If(self, node: ast.If) -> None:
            if not type_checking and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
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


def _under(name: str, prefixes) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


@pytest.mark.parametrize("path", pure_files(), ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_the_core_is_pure(path):
    """app/core imports no framework, no database and nothing of app outside app/core."""
    names = imports_of(path, type_checking=True)
    bad = sorted(n for n in names if _under(n, FRAMEWORKS) or (_under(n, ("app",)) and not _under(n, ("app.core",))))
    assert not bad, f"{path.relative_to(REPO_ROOT)} imports {bad}"


def _layer_files(folder: str) -> list[Path]:
    return sorted((APP / folder).rglob("*.py"))


@pytest.mark.parametrize("layer, forbidden", [
    ("services", ("app.web", "app.cli")),
    ("models", ("app.web", "app.cli", "app.services")),
])
def test_lower_layers_never_import_higher_ones(layer, forbidden):
    bad = {str(path.relative_to(REPO_ROOT)): sorted(n for n in imports_of(path, type_checking=True) if _under(n, forbidden))
           for path in _layer_files(layer)}
    assert not {k: v for k, v in bad.items() if v}


def test_service_packages_form_no_cycle():
    """The graph of app/services/* (a package, or a module on its own) has no cycle, every import counted."""
    def package_of(name: str) -> str | None:
        parts = name.split(".")
        return ".".join(parts[:3]) if parts[:2] == ["app", "services"] and len(parts) > 2 else None

    modules = app_modules()
    packages = {package_of(name) for name in modules} - {None}
    graph: dict[str, set[str]] = {package: set() for package in packages}
    for name, path in modules.items():
        source = package_of(name)
        if source is not None:
            graph[source] |= {t for t in map(package_of, imports_of(path, type_checking=True)) if t in packages} - {source}
    cycles = strongly_connected(graph)
    assert not cycles, f"service packages that reach each other: {cycles}"


def test_app_has_few_entries_and_no_twin_nouns():
    entries = sorted(p.name for p in APP.iterdir() if p.name != "__pycache__")
    assert len(entries) <= 10 and {"core", "services", "web", "cli", "models"} <= set(entries), entries
    twins = ("judging", "judge_runs", "rater_runs", "metric_scores", "generate", "views_rater")
    found = sorted(str(p.relative_to(REPO_ROOT)) for p in APP.rglob("*")
                   if p.name != "__pycache__" and (p.stem in twins))
    assert not found, f"a feature under a second noun: {found}"



# The tests follow the app's kinds; only whole-project checks stay at the top of tests/.
TEST_LAYERS = {"core", "services", "web", "cli", "e2e", "benchmarks", "support"}
TOP_LEVEL_TESTS = {"test_architecture.py", "test_docs.py", "test_benchmarks.py", "test_portable_sql.py"}


def test_tests_sit_in_the_folder_of_their_kind():
    tests = REPO_ROOT / "tests"
    folders = {p.name for p in tests.iterdir() if p.is_dir() and p.name not in ("__pycache__",) and (p / "__init__.py").exists()}
    assert folders == TEST_LAYERS, folders
    loose = sorted(p.name for p in tests.glob("*.py") if p.name not in {"__init__.py", "conftest.py"} | TOP_LEVEL_TESTS)
    assert not loose, f"tests outside a layer folder: {loose}"

# Ways to write a download's Content-Disposition: by name, or through Flask/Werkzeug's file senders.
DOWNLOAD_HEADER_WRITERS = ("content-disposition", "download_name", "as_attachment", "send_file", "send_from_directory")
DOWNLOADS_OWNER = APP / "web" / "downloads.py"


def download_header_writers(root: Path) -> list[str]:
    """path:line of every mention of a download header writer under root, the owner's own excepted."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.resolve() == DOWNLOADS_OWNER.resolve():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if any(writer in line.lower() for writer in DOWNLOAD_HEADER_WRITERS):
                found.append(f"{path.relative_to(root.parent)}:{number}: {line.strip()}")
    return found


def test_one_module_writes_every_content_disposition():
    """A download's file name is user text (a document's source, a study's name): only app.web.downloads
    sanitises it into the header. Anywhere else, a quote or a line break in a name is a header injection."""
    assert DOWNLOADS_OWNER.exists()
    assert not download_header_writers(APP), "write downloads with app.web.downloads.attachment"


def test_the_download_header_guard_finds_a_planted_writer(tmp_path):
    planted = tmp_path / "app" / "web" / "planted.py"
    planted.parent.mkdir(parents=True)
    planted.write_text('headers = {"Content-Disposition": f\'attachment; filename="{name}"\'}\n', encoding="utf-8")
    assert download_header_writers(tmp_path / "app") == [
        'app/web/planted.py:1: headers = {"Content-Disposition": f\'attachment; filename="{name}"\'}']


def test_app_has_no_import_cycle():
    """No module cycle, type-checking imports included (a cycle hidden from the interpreter is still a knot)."""
    modules = app_modules()
    graph = {name: {target for target in imports_of(path, type_checking=True) if target in modules and target != name}
             for name, path in modules.items()}
    cycles = strongly_connected(graph)
    assert not cycles, f"import cycles: {cycles}"


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The cycles of a graph: its strongly connected components of more than one node."""
    graph = {node: set(targets) for node, targets in graph.items()}
    for targets in list(graph.values()):
        for target in targets:
            graph.setdefault(target, set())
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
    return cycles


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


def test_every_command_is_found_in_the_module_that_defines_it():
    """The lazy command table names each command's module; a command missing from it would never load."""
    import importlib

    from app.cli import COMMAND_MODULES

    defined = {}
    for module_name in sorted(set(COMMAND_MODULES.values())):
        for command in importlib.import_module(f"app.cli.{module_name}").COMMANDS:
            defined[command.name] = module_name
    files = {p.stem for p in (APP / "cli").glob("*.py")} - {"__init__", "database", "processes", "wsgi", "connections"}
    assert defined == COMMAND_MODULES
    assert files <= set(COMMAND_MODULES.values()), f"command modules not in the table: {files - set(COMMAND_MODULES.values())}"


def test_a_quick_command_loads_no_queue_driver_and_no_pages(tmp_path):
    """`summary` starts on the models alone: no huey, no database driver for the queue, no sign-in or forms."""
    code = ("import sys, run; run._command[:] = ['summary']; "
            "run.cli.main(['summary', '--json'], standalone_mode=False); "
            "heavy = [m for m in ('huey', 'psycopg', 'flask_login', 'flask_wtf', 'openai', 'numpy', 'scipy', "
            "'tiktoken', 'jieba', 'app.services.importers', 'app.web') if m in sys.modules]; print(heavy)")
    env = {**os.environ, "LEVAL_INSTANCE": str(tmp_path / "instance")}
    env.pop("LEVAL_DATABASE_URL", None)
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"
