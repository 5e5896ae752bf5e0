"""A discovery pass over each real reference server stores what the official Python SDK lists."""

from __future__ import annotations

from typing import Any

import pytest

from tests.real.conftest import NAMES, World

pytestmark = pytest.mark.anyio

FIELDS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")


def fields(tool: dict[str, Any]) -> dict[str, Any]:
    return {key: tool[key] for key in FIELDS if key in tool}


@pytest.mark.parametrize("name", NAMES)
async def test_a_pass_succeeds_and_stores_the_tools_the_official_sdk_lists(world: World, name: str) -> None:
    world.discovered(name)
    # Like with like: toolvet's discovery client declares sampling, elicitation and roots (what its
    # gateway relays), and so does the direct SDK client, so a server that adapts its list to them
    # (server-everything) lists the same tools to both.
    listed = {tool["name"]: fields(tool) for tool in await world.direct_tools(name)}
    stored = {tool["name"]: fields(tool) for tool in world.stored(name)}
    assert listed, f"{name} listed no tools to the SDK client"
    assert sorted(stored) == sorted(listed)
    assert stored == listed


@pytest.mark.parametrize("name", ["everything-stdio", "everything-sse", "everything-http"])
async def test_server_everything_lists_the_tools_of_the_capabilities_toolvet_relays(world: World, name: str) -> None:
    world.discovered(name)
    stored = {tool["name"] for tool in world.stored(name)}
    # Its sampling, elicitation and roots tools are listed (toolvet relays them all, URL elicitation
    # included).
    assert len(stored) == 17
    assert {"echo", "get-sum", "get-structured-content", "simulate-research-query"} <= stored
    assert {"trigger-sampling-request", "trigger-elicitation-request", "trigger-url-elicitation"} <= stored
    assert "get-roots-list" in stored
