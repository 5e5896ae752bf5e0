"""An MCP server that sends what a gateway must pass on outside any call, built on the SDK's low-level Server.

It serves one resource, ``memo://note``, subscribable in both eras (``resources/subscribe`` in the
handshake era, ``subscriptions/listen`` at 2026-07-28), and one prompt. Its tools:

- ``touch(uri)``: announces that ``uri`` changed, to the sessions subscribed to it (on their
  standalone stream, not the call's) and to the listen streams that asked for it;
- ``change_lists()``: announces that its resource and prompt lists changed, to every session;
- ``roots_changes()``: how many ``notifications/roots/list_changed`` it has received, and the roots it
  asked for (with a ``roots/list`` of its own, outside any call) after the last one.

Run ``python notices_server.py`` for stdio; :func:`build` serves it over streamable HTTP in tests.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import anyio
import mcp.types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
)
from mcp.shared.exceptions import MCPDeprecationWarning

NOTE = "memo://note"
TOOLS = [
    types.Tool(name="touch", description="Announces a resource update.",
               input_schema={"type": "object", "properties": {"uri": {"type": "string"}}, "required": ["uri"]}),
    types.Tool(name="change_lists", description="Announces resource and prompt list changes.",
               input_schema={"type": "object"}),
    types.Tool(name="roots_changes", description="Roots list changes heard, and the roots asked after.",
               input_schema={"type": "object"}),
]


class _Announcing(Server[Any]):
    def create_initialization_options(self, notification_options: NotificationOptions | None = None,
                                      *args: Any, **kwargs: Any) -> InitializationOptions:
        options = notification_options or NotificationOptions(prompts_changed=True, resources_changed=True)
        return super().create_initialization_options(options, *args, **kwargs)


def build() -> Server[Any]:
    bus = InMemorySubscriptionBus()
    subscribed: dict[str, list[Any]] = {}
    sessions: list[Any] = []
    heard: dict[str, Any] = {"changes": 0, "roots": None}
    tasks: list[anyio.abc.TaskGroup] = []

    async def list_tools(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name == "touch":
            uri = str((params.arguments or {}).get("uri"))
            for session in subscribed.get(uri, []):
                await session.send_resource_updated(uri)
            await bus.publish(ResourceUpdated(uri=uri))
            text = "touched"
        elif params.name == "change_lists":
            for session in sessions:
                await session.send_resource_list_changed()
                await session.send_prompt_list_changed()
            await bus.publish(ResourcesListChanged())
            await bus.publish(PromptsListChanged())
            text = "changed"
        else:
            roots = heard["roots"]
            text = f"{heard['changes']} " + (" ".join(str(r.uri) for r in roots) if roots is not None else "-")
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    async def list_resources(ctx: ServerRequestContext[Any], params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[types.Resource(uri=NOTE, name="note")])

    async def read_resource(ctx: ServerRequestContext[Any],
                            params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=str(params.uri), text="hello")])

    async def list_prompts(ctx: ServerRequestContext[Any], params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[types.Prompt(name="greet")])

    async def subscribe(ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams) -> types.EmptyResult:
        subscribed.setdefault(str(params.uri), []).append(ctx.session)
        return types.EmptyResult()

    async def unsubscribe(ctx: ServerRequestContext[Any],
                          params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        subscribed[str(params.uri)] = [s for s in subscribed.get(str(params.uri), []) if s is not ctx.session]
        return types.EmptyResult()

    async def ask_roots(session: Any) -> None:
        listed = await session.send_request(types.ListRootsRequest(), types.ListRootsResult)
        heard["roots"] = listed.roots

    async def roots_changed(ctx: ServerRequestContext[Any], params: Any) -> None:
        heard["changes"] += 1
        heard["roots"] = None
        if tasks:  # asked outside the notification's handler, whose answer would wait on this very reader
            tasks[0].start_soon(ask_roots, ctx.session)

    async def remember(ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.method == "notifications/initialized":
            sessions.append(ctx.session)
        return result

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        server = _Announcing(
            "notices-lab", version="0.0.1", on_list_tools=list_tools, on_call_tool=call_tool,
            on_list_resources=list_resources, on_read_resource=read_resource, on_list_prompts=list_prompts,
            on_subscribe_resource=subscribe, on_unsubscribe_resource=unsubscribe,
            on_subscriptions_listen=ListenHandler(bus), on_roots_list_changed=roots_changed,
        )
    server.middleware.append(remember)
    server.tasks = tasks  # type: ignore[attr-defined]
    return server


async def _stdio() -> None:
    server = build()
    async with stdio_server() as (read, write), anyio.create_task_group() as tg:
        server.tasks.append(tg)  # type: ignore[attr-defined]
        await server.run(read, write, server.create_initialization_options())
        tg.cancel_scope.cancel()


if __name__ == "__main__":
    if sys.argv[1:] not in ([], ["stdio"]):
        raise SystemExit("usage: notices_server.py [stdio]")
    anyio.run(_stdio)
