"""MCP Inspector's CLI (npm ``@modelcontextprotocol/inspector``), the client operators debug servers
with, lists every tool toolvet offers and calls reference servers through toolvet's ``/mcp``, getting
what each server answers directly.

The Inspector is a client of its own on the TypeScript SDK 2.x (it ships its own copy), run under node
22 as an operator runs it: ``mcp-inspector --cli URL --transport http --header "Authorization: ..."``,
one process per method, its answer the JSON it prints.
"""

from __future__ import annotations

import json
from typing import Any, Final

import pytest

from tests.real.conftest import NAMES, World, canonical, printed_json
from tests.real_software import node22, npm_package

pytestmark = pytest.mark.anyio


async def inspector(world: World, method: str, *arguments: str) -> dict[str, Any]:
    """Run the Inspector's CLI once against toolvet's ``/mcp`` as alice; the JSON it printed."""
    launcher = npm_package("@modelcontextprotocol/inspector") / "clients" / "launcher" / "build" / "index.js"
    command = [str(node22()), str(launcher), "--cli", world.toolvet.mcp, "--transport", "http",
               "--header", f"Authorization: Bearer {world.toolvet.alice}", "--method", method, *arguments]
    return await printed_json(command, "the Inspector")


async def test_the_inspector_lists_every_tool_toolvet_offers(world: World) -> None:
    listed = await inspector(world, "tools/list")
    names = {tool["name"] for tool in listed["tools"]}
    # Every discovered tool, less one that runs only as a task (which the Inspector's 2026-07-28 session
    # has no way to run; toolvet offers those to handshake-era clients).
    offered: set[str] = set()
    for name in NAMES:
        world.discovered(name)
        offered |= {f"{name}_{tool['name']}" for tool in world.stored(name)
                    if (tool.get("execution") or {}).get("taskSupport") != "required"}
    assert offered and offered <= names, sorted(offered - names)


# One server per kind of upstream (each transport; the TypeScript SDK 1.x and 2.x, the Python SDK and
# FastMCP): the Python and TypeScript clients call every reference server (test_calls.py).
CALLED: Final = ["everything-stdio", "everything-sse", "everything-http", "fetch", "fastmcp-http", "clock-copy"]


@pytest.mark.parametrize("name", CALLED)
async def test_inspector_calls_through_toolvet_answer_what_the_server_answers(world: World, name: str) -> None:
    reference = world.discovered(name)
    direct = await world.direct_results(name)
    assert not [r for r in direct if r.get("isError")], f"{name} answered an error directly: {direct}"
    got = []
    for tool, arguments in reference.calls:
        result = await inspector(world, "tools/call", "--tool-name", f"{name}_{tool}",
                                 "--tool-args-json", json.dumps(arguments))
        got.append(reference.normalise(canonical(result)))
    assert got == direct
