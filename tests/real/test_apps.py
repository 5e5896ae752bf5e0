"""An MCP Apps server on the TypeScript SDK 2.x server and the official MCP Apps helpers, deployed twice
(``clock`` and ``clock-copy``): through ``/mcp`` each deployment's tool names its own copy of the view,
under both keys the helpers write, and the view reads as the server reads it; a server's own endpoint
names the view as the server wrote it."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from tests.gateway.test_views import client_at
from tests.real.conftest import BOUND, World, called_both_ways
from tests.real.references import direct_client
from toolvet.gateway.federation import namespaced

pytestmark = pytest.mark.anyio

APPS = ["clock", "clock-copy"]
VIEW = "ui://clock/view.html"
ERAS = ["2026-07-28", "legacy"]


def _contents(result: Any) -> list[dict[str, Any]]:
    contents = result.model_dump(mode="json", by_alias=True)["contents"]
    return [{k: v for k, v in c.items() if k != "uri"} for c in contents]


@pytest.mark.parametrize("mode", ERAS)
async def test_each_deployment_of_an_mcp_apps_server_shows_its_own_view_through_toolvet(
    world: World, mode: str
) -> None:
    for name in APPS:
        world.discovered(name)
    with anyio.fail_after(BOUND):
        async with direct_client(world.reference("clock").reach) as own:
            direct_tool = next(t for t in (await own.list_tools()).tools if t.name == "show-clock")
            expected = _contents(await own.read_resource(VIEW))
        async with world.toolvet.client(world.toolvet.alice, mode=mode) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            metas = {name: tools[f"{name}_show-clock"].meta for name in APPS}
            views = {name: await client.read_resource(namespaced(VIEW, name)) for name in APPS}
            with pytest.raises(MCPError, match="claimed by clock, clock-copy"):
                await client.read_resource(VIEW)
        async with client_at(world.toolvet, "/mcp/servers/clock", world.toolvet.alice, mode) as one:
            own_meta = next(t for t in (await one.list_tools()).tools if t.name == "show-clock").meta
            own_view = await one.read_resource(VIEW)
    assert direct_tool.meta == {"ui": {"resourceUri": VIEW}, "ui/resourceUri": VIEW}  # the helpers write both keys
    for name in APPS:
        assert metas[name] == {"ui": {"resourceUri": namespaced(VIEW, name)}, "ui/resourceUri": namespaced(VIEW, name)}
        assert _contents(views[name]) == expected
        assert [c.uri for c in views[name].contents] == [namespaced(VIEW, name)]
    assert expected[0]["mimeType"] == "text/html;profile=mcp-app"
    assert own_meta == direct_tool.meta and _contents(own_view) == expected


@pytest.mark.parametrize("name", ["fastmcp-stdio", "fastmcp-http", "fastmcp-sse"])
async def test_a_server_that_adapts_to_mcp_apps_hosts_gives_the_client_behind_toolvet_its_app_result(
    world: World, name: str
) -> None:
    """FastMCP's ``view_mode`` answers "ui" to a host that declared MCP Apps and "text" to any other:
    toolvet declares the extension upstream (it passes views on), so behind it the app result comes."""
    world.discovered(name)
    with anyio.fail_after(BOUND):
        async with direct_client(world.reference(name).reach, apps=False) as plain:
            text = await plain.call_tool("view_mode", {})
        async with direct_client(world.reference(name).reach) as host:
            ui = await host.call_tool("view_mode", {})
        got = {}
        for mode in ERAS:
            async with world.toolvet.client(world.toolvet.alice, mode=mode) as client:
                got[mode] = await client.call_tool(f"{name}_view_mode", {})
    assert [c.text for c in text.content] == ["text"] and [c.text for c in ui.content] == ["ui"]
    assert {mode: [c.text for c in result.content] for mode, result in got.items()} == {mode: ["ui"] for mode in ERAS}


@pytest.mark.parametrize("answer", [True, False])
@pytest.mark.parametrize("name", APPS)
async def test_a_typescript_guard_tools_question_and_answer_pass_through_toolvet_at_2026_07_28(
    world: World, name: str, answer: bool
) -> None:
    """The TypeScript SDK 2.x server's ``set-alarm`` asks the user first (an ``InputRequiredResult`` built
    with the SDK's ``inputRequired``), as the FastMCP guard tool does (tests/real/test_asking.py)."""
    world.discovered(name)
    expected, got, shown = await called_both_ways(world, name, "2026-07-28", {"ok": answer}, "set-alarm",
                                                  {"time": "07:30"})
    assert expected["content"] == [{"type": "text", "text": "alarm set for 07:30" if answer else "no alarm"}]
    assert got == expected and shown == ["Set an alarm for 07:30?"]
