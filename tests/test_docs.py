"""The README and docs/ hold together: links and anchors resolve, the set-up commands come first,
the README stays short, and every `python run.py …` they name is a real command with real options."""
from __future__ import annotations

import importlib
import re
import unicodedata
from pathlib import Path

import click
import pytest

from app.cli import COMMAND_MODULES

pytestmark = pytest.mark.database_free

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
SETUP_COMMANDS = [
    "pip install -r requirements.txt && python run.py",
    "pip install -r requirements-dev.txt && python -m pytest",
]
README_MAX_LINES = 200
# Flask's own commands beside the app's (run.py adds `help`).
BUILTIN_COMMANDS = {"routes", "shell", "db", "help"}

FENCE = re.compile(r"^```.*?^```[ \t]*$", re.S | re.M)
INLINE_CODE = re.compile(r"(`+)(.+?)\1", re.S)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.M)
RUN_COMMAND = re.compile(r"python run\.py((?:[ \t]+[^\s`|]+)*)")


def _prose(text: str) -> str:
    """The text with fenced blocks and inline code blanked out: links inside code are not links."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return INLINE_CODE.sub(lambda m: " " * len(m.group(0)), text)


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text, lower-cased, without punctuation, spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading: its text
    text = text.strip().lower()
    kept = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LMN")
    return kept.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    slugs: set[str] = set()
    seen: dict[str, int] = {}
    for match in HEADING.finditer(FENCE.sub("", page.read_text(encoding="utf-8"))):
        slug = github_slug(match.group(2))
        # GitHub numbers repeated headings: x, x-1, x-2, …
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        slugs.add(slug if count == 0 else f"{slug}-{count}")
    return slugs


def relative_links(page: Path) -> list[str]:
    targets = [m.group(1) for m in LINK.finditer(_prose(page.read_text(encoding="utf-8")))]
    return [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", t, re.I)]


def test_the_pages_exist_and_link_to_something():
    assert (ROOT / "docs").is_dir()
    assert len(PAGES) > 10
    # The checker finds links at all: the README lists the docs pages.
    assert any(link.startswith("docs/") for link in relative_links(README))


def test_github_slug_matches_githubs_rule():
    assert github_slug("Authoring question/answer pairs") == "authoring-questionanswer-pairs"
    assert github_slug("Limits of uploaded and typed text") == "limits-of-uploaded-and-typed-text"
    assert github_slug("LV-Eval") == "lv-eval"
    assert github_slug("`jsonl` and the *CSV* export") == "jsonl-and-the-csv-export"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(page: Path):
    broken = []
    for link in relative_links(page):
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"{link}: no file {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}")
        elif anchor and target.suffix == ".md" and anchor not in anchors(target):
            broken.append(f"{link}: no heading with anchor #{anchor} in {target.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_readme_starts_with_the_two_setup_commands():
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", README.read_text(encoding="utf-8"), re.S | re.M)
    assert [block.strip() for block in blocks[:2]] == SETUP_COMMANDS
    # Nothing but the title and a short description comes before them.
    before = README.read_text(encoding="utf-8").split("```", 1)[0]
    assert before.count("\n#") == 0 and len(before.splitlines()) <= 12


def test_readme_stays_short():
    assert len(README.read_text(encoding="utf-8").splitlines()) < README_MAX_LINES


def test_readme_links_every_docs_page():
    linked = {(README.parent / link.partition("#")[0]).resolve() for link in relative_links(README)}
    assert not [page.name for page in PAGES[1:] if page.resolve() not in linked]


def _command(name: str) -> click.Command:
    for command in importlib.import_module(f"app.cli.{COMMAND_MODULES[name]}").COMMANDS:
        if command.name == name:
            return command
    raise AssertionError(f"{name} is in COMMAND_MODULES but not in its module's COMMANDS")


def _named_commands() -> list[tuple[Path, str, list[str]]]:
    """Every `python run.py …` in the README and docs: (page, command, the words after it)."""
    found = []
    for page in PAGES:
        for match in RUN_COMMAND.finditer(page.read_text(encoding="utf-8")):
            words = match.group(1).split()
            if not words or words[0].startswith("-"):
                words = ["serve", *words]  # `python run.py [--option]` serves
            if re.fullmatch(r"[a-z][a-z-]*", words[0]):  # not a placeholder (COMMAND, …)
                found.append((page, words[0], words[1:]))
    return found


def test_every_named_command_is_a_real_command():
    named = _named_commands()
    assert {"serve", "import-leval", "study", "export", "create-user"} <= {name for _, name, _ in named}
    known = set(COMMAND_MODULES) | BUILTIN_COMMANDS
    unknown = sorted({f"{page.relative_to(ROOT)}: python run.py {name}" for page, name, _ in named if name not in known})
    assert not unknown


def test_every_option_written_after_a_command_is_one_of_its_options():
    wrong = []
    for page, name, words in _named_commands():
        if name not in COMMAND_MODULES:
            continue
        command = _command(name)
        if isinstance(command, click.Group) and words and re.fullmatch(r"[a-z][a-z-]*", words[0]):
            subcommand = command.commands.get(words[0])
            if subcommand is None:
                wrong.append(f"{page.relative_to(ROOT)}: python run.py {name} {words[0]}: no such subcommand")
                continue
            command, words = subcommand, words[1:]
        options = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)} | {"--help", "-h"}
        for word in words:
            option = word.split("=", 1)[0].rstrip(".,;:)]")
            if option.startswith("--") and len(option) > 2 and option not in options:
                wrong.append(f"{page.relative_to(ROOT)}: python run.py {command.name} {option}: no such option")
    assert not wrong
