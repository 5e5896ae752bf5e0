"""A pass reads each prompts/resources list a server declares page by page, and a list that fails
leaves the pass (and the stored entries) as they were, saying which list failed."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp.types.version import LATEST_MODERN_VERSION
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.upstreams import serve
from toolvet.discovery import Limits, Target, fetch_listing
from toolvet.services import discovery, entries, servers
from toolvet.services.entries import PROMPTS, RESOURCES

pytestmark = pytest.mark.anyio

TOOL = {"name": "t", "inputSchema": {"type": "object"}}
#: method -> {cursor: result}; a method or cursor not here answers -32601.
Answers = dict[str, dict[str | None, Any]]


def lists_app(answers: Answers) -> Starlette:
    """A 2026-07-28 server declaring tools, prompts and resources, answering each list from ``answers``."""

    async def rpc(request: Request) -> Response:
        body = await request.json()
        if "id" not in body:
            return Response(status_code=202)
        method, params = body["method"], body.get("params") or {}
        if method == "server/discover":
            result: Any = {"supportedVersions": [LATEST_MODERN_VERSION], "resultType": "complete",
                           "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
                           "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "lists", "version": "0"}}}
        else:
            result = answers.get(method, {}).get(params.get("cursor"))
        if result is None:
            return JSONResponse({"jsonrpc": "2.0", "id": body["id"],
                                 "error": {"code": -32601, "message": f"Method not found: {method}"}})
        return JSONResponse({"jsonrpc": "2.0", "id": body["id"], "result": result})

    return Starlette(routes=[Route("/mcp", rpc, methods=["POST"])])


def prompt(name: str) -> dict[str, Any]:
    return {"name": name, "description": f"The {name} prompt."}


PAGED: Answers = {
    "tools/list": {None: {"tools": [TOOL]}},
    "prompts/list": {None: {"prompts": [prompt("a"), prompt("b")], "nextCursor": "2"},
                     "2": {"prompts": [prompt("c")], "nextCursor": ""}, "": {"prompts": [prompt("d")]}},
    "resources/list": {None: {"resources": [{"uri": "x://1", "name": "one"}], "nextCursor": "p2"},
                       "p2": {"resources": [{"uri": "x://2", "name": "two"}]}},
    "resources/templates/list": {None: {"resourceTemplates": [{"uriTemplate": "x://{n}", "name": "n"}]}},
}


async def test_every_page_of_each_declared_list_is_read() -> None:
    with serve(lists_app(PAGED)) as up:
        with anyio.fail_after(30):
            listing = await fetch_listing(Target("streamable-http", up.url), Limits())
    assert listing.status == "ok" and listing.entry_errors == []
    assert [p["name"] for p in listing.entries["prompt"]] == ["a", "b", "c", "d"]  # "" is a real cursor
    assert [r["uri"] for r in listing.entries["resource"]] == ["x://1", "x://2"]
    assert [t["uriTemplate"] for t in listing.entries["template"]] == ["x://{n}"]


async def test_a_list_over_the_page_bound_or_failing_is_reported_and_the_others_still_read() -> None:
    looping: Answers = {**PAGED, "prompts/list": {None: {"prompts": [prompt("a")], "nextCursor": "again"},
                                                  "again": {"prompts": [], "nextCursor": "again"}}}
    del looping["resources/templates/list"]
    with serve(lists_app(looping)) as up:
        with anyio.fail_after(30):
            listing = await fetch_listing(Target("streamable-http", up.url), Limits())
    assert listing.status == "ok" and [t["name"] for t in listing.tools] == ["t"]
    assert sorted(listing.entries) == ["resource"]
    assert len(listing.entry_errors) == 2
    assert "prompts/list page 2: a bad or repeated nextCursor" in listing.entry_errors[0]
    assert listing.entry_errors[1].startswith("resources/templates/list:")


async def test_a_list_that_fails_later_leaves_its_stored_entries_and_the_run_says_which(ctx, admin) -> None:
    answers: Answers = {key: dict(value) for key, value in PAGED.items()}
    with serve(lists_app(answers)) as up:
        servers.create_server(ctx, admin, {"name": "lists", "url": up.url})
        with anyio.fail_after(30):
            await discovery.discover(ctx, admin, ["lists"])
            answers["prompts/list"] = {}  # the server now fails prompts/list
            [run] = await discovery.discover(ctx, admin, ["lists"])
    assert run.status == "ok" and run.error is not None and run.error.startswith("prompts/list:")
    kept = entries.list_entries(ctx, admin, PROMPTS).items
    assert [(p.key, p.retired_at) for p in kept] == [("a", None), ("b", None), ("c", None), ("d", None)]
    assert entries.list_entries(ctx, admin, RESOURCES).total == 3
