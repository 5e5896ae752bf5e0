"""The import graph of ``src/toolvet`` is the one docs/architecture.md draws: no edge it does not list,
no cycle, and no function-local import of another package outside the CLI's start-up shortcuts."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).parents[1]
SRC = ROOT / "src" / "toolvet"
#: Where a function-local import of another toolvet package keeps a command's start-up short.
LAZY = ("cli/", "serving.py")


def package_of(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def imported(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The toolvet packages (or top-level modules, or ``__version__``) an import statement names."""
    if isinstance(node, ast.ImportFrom):
        if node.module is None or node.level or not node.module.startswith("toolvet"):
            return []
        if node.module == "toolvet":
            return [alias.name for alias in node.names]
        return [node.module.split(".")[1]]
    return [alias.name.split(".")[1] for alias in node.names if alias.name.startswith("toolvet.")]


def graph() -> tuple[dict[str, set[str]], list[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    local: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        me = package_of(path)
        tree = ast.parse(path.read_text())
        inside: set[int] = set()
        for function in ast.walk(tree):
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                inside.update(id(n) for n in ast.walk(function) if isinstance(n, ast.Import | ast.ImportFrom))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for other in imported(node):
                if other == me:
                    continue
                edges[me].add(other)
                if id(node) in inside:
                    local.append(f"{path.relative_to(SRC)} -> {other}")
    return edges, local


def documented() -> dict[str, set[str]]:
    text = (ROOT / "docs" / "architecture.md").read_text()
    block = re.search(r"```edges\n(.*?)```", text, re.S)
    assert block, "docs/architecture.md has no ```edges block"
    table: dict[str, set[str]] = {}
    for line in block.group(1).splitlines():
        source, _, targets = line.partition("->")
        table[source.strip()] = set(targets.split())
    return table


def test_every_import_between_packages_is_an_edge_the_architecture_doc_lists():
    edges, _ = graph()
    allowed = documented()
    strays = sorted(f"{source} -> {target}" for source, targets in edges.items() for target in targets
                    if target not in allowed.get(source, set()))
    assert strays == []


def test_the_doc_lists_no_edge_the_code_no_longer_has():
    edges, _ = graph()
    stale = sorted(f"{source} -> {target}" for source, targets in documented().items() for target in targets
                   if target not in edges.get(source, set()))
    assert stale == []


def test_the_package_graph_has_no_cycle():
    edges, _ = graph()
    done: set[str] = set()

    def visit(node: str, path: tuple[str, ...]) -> None:
        assert node not in path, " -> ".join((*path, node))
        if node in done:
            return
        for nxt in sorted(edges.get(node, ())):
            visit(nxt, (*path, node))
        done.add(node)

    for node in sorted(edges):
        visit(node, ())


def test_function_local_imports_of_other_packages_only_shorten_command_start_up():
    _, local = graph()
    assert [entry for entry in local if not entry.startswith(LAZY)] == []
