"""Every CLI command and option is in docs/cli.md, every setting in docs/settings.md."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.main import get_command

from toolvet.cli import app
from toolvet.settings import Settings

DOCS = Path(__file__).resolve().parent.parent / "docs"


def commands(command: Any, path: tuple[str, ...] = ("toolvet",)) -> Iterator[tuple[str, Any]]:
    """Every command in the tree as ('toolvet server add', command), groups included (asked for by
    name, as the parser does: the root imports its groups only then)."""
    yield " ".join(path), command
    if not hasattr(command, "list_commands"):
        return
    ctx = typer.Context(command, info_name=path[-1])
    for name in sorted(command.list_commands(ctx)):
        yield from commands(command.get_command(ctx, name), (*path, name))


COMMANDS = dict(commands(get_command(app)))


def sections(text: str) -> dict[str, str]:
    """docs/cli.md split at its ``## `toolvet ...` `` headings: heading -> body."""
    parts = re.split(r"^##+ `(toolvet[^`]*)`\s*$", text, flags=re.MULTILINE)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


@pytest.fixture(scope="module")
def cli_doc() -> dict[str, str]:
    return sections((DOCS / "cli.md").read_text(encoding="utf-8"))


def option_names(command: object) -> list[str]:
    names: list[str] = []
    for param in getattr(command, "params", []):
        if getattr(param, "param_type_name", "") == "option":
            names += [n for n in (*param.opts, *param.secondary_opts) if n.startswith("--") and n != "--help"]
    return names


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_cli_command_has_a_section_in_docs_cli_md(path: str, cli_doc: dict[str, str]) -> None:
    assert path in cli_doc, f"docs/cli.md has no '## `{path}`' section"


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_cli_option_is_documented_in_its_commands_section(path: str, cli_doc: dict[str, str]) -> None:
    body = cli_doc.get(path, "")
    missing = [
        name for name in option_names(COMMANDS[path]) if not re.search(rf"`{re.escape(name)}[`= /\]]", body)
    ]
    assert not missing, f"docs/cli.md section '{path}' does not mention {missing}"


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_leaf_command_shows_an_example(path: str, cli_doc: dict[str, str]) -> None:
    if getattr(COMMANDS[path], "commands", None):
        return
    assert "```" in cli_doc.get(path, ""), f"docs/cli.md section '{path}' has no example"


def test_docs_cli_md_documents_no_command_that_does_not_exist(cli_doc: dict[str, str]) -> None:
    assert sorted(set(cli_doc) - set(COMMANDS)) == []


@pytest.mark.parametrize("field", sorted(Settings.model_fields))
def test_every_setting_is_documented_with_its_environment_variable(field: str) -> None:
    text = (DOCS / "settings.md").read_text(encoding="utf-8")
    assert f"`TOOLVET_{field.upper()}`" in text, f"docs/settings.md does not document TOOLVET_{field.upper()}"


ROOT = DOCS.parent
DOC_FILES = sorted([*DOCS.glob("*.md"), ROOT / "README.md", ROOT / "CHANGELOG.md"])
#: Citations of files that are not in the repository: the docs and the code say what toolvet decided
#: themselves. A section sign may be escaped in JSON; ``SPECS`` or ``SPEC = ...`` as names cite nothing.
OUTSIDE = re.compile(
    r"\bSPEC\s*(?:§|\\u00a7|\d)|\bSPEC\.md\b|MCP-FACTS|\bSTYLE\.md\b|\bSTYLE\s+rule|/work/|\bshared/"
    r"|\bseeds/|\bseed(?:'s)?\s+(?:mcp-tool|ai-mcp-item|tool-definition)\b|\bthe\s+seed(?:'s|\b)"
)


def citations(text: str, name: str) -> list[str]:
    return [f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}" for m in OUTSIDE.finditer(text)]


@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: p.name)
def test_the_docs_cite_no_file_outside_the_repository(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert citations(text, path.name) == []


#: Where the code lives. This file is left out: it holds the patterns and the examples below.
CODE_ROOTS = ("src", "tests", "bench", "scripts")
NOT_CODE = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", "node_modules"}


def code_files(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        parts = path.relative_to(ROOT).parts
        if path.is_file() and path != Path(__file__).resolve() and not any(
            part in NOT_CODE or part.endswith(".egg-info") for part in parts
        ):
            yield path


@pytest.mark.parametrize("root", CODE_ROOTS)
def test_the_code_cites_no_file_outside_the_repository(root: str) -> None:
    cited = []
    for path in code_files(ROOT / root):
        data = path.read_bytes()
        if b"\0" not in data:  # binary files hold no prose
            cited += citations(data.decode("utf-8", errors="replace"), str(path.relative_to(ROOT)))
    assert cited == []


@pytest.mark.parametrize(
    "text",
    [
        "(SPEC §4.2)",
        "SPEC \\u00a75",
        "SPEC 3.1",
        "see SPEC.md",
        "MCP-FACTS",
        "(STYLE rule 3)",
        "STYLE.md",
        "seed tool-definition.txt",
        "seed ai-mcp-item",
        "seeds/mcp-tool.txt",
        "with the seed's fields",
        "/work/shared/x",
    ],
)
def test_a_citation_of_an_outside_file_is_found(text: str) -> None:
    assert OUTSIDE.search(text)


@pytest.mark.parametrize("text", ["SPECS: Final = (", "SPEC = openapi_document()", "a seeded graph", "def seed(env"])
def test_names_and_words_that_cite_nothing_are_not_taken_for_citations(text: str) -> None:
    assert OUTSIDE.search(text) is None


@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: p.name)
def test_every_relative_link_in_the_docs_stays_in_the_repository_and_exists(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    bad = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target) or not re.search(r"(\.[A-Za-z]+|/)$", target.partition("#")[0]):
            continue  # a URL, an anchor in the same page, or a pattern in prose that only looks like a link
        resolved = (path.parent / target.partition("#")[0]).resolve()
        if not resolved.is_relative_to(ROOT) or not resolved.exists():
            bad.append(target)
    assert bad == []
