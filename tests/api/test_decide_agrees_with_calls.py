"""The decision ``POST /api/v1/decide`` explains is the decision a call obeys: for every (user, scope,
tool) of a varied registry, a real ``POST /api/v1/calls`` through the running app (its lifespan on:
the call service and the gateway's host tools) runs, waits as pending, or is refused exactly as
``/decide`` said, with the same reasons; and the catalog lists as enabled exactly what is not refused.

The registry: two manual servers reached at one real SDK upstream on loopback (``plain`` holds changed
tools and does not trust annotations, ``trusty`` trusts them and holds nothing) and a disabled one;
tools reviewed, unreviewed and changed after review, writable or not, annotated read-only, destructive
or not at all, one disabled; the host tools; users in each permission mode; scopes with their own
disabled maps and always-allow entries (current and stale fingerprints), and one reading ``default``;
a server under the approval floor ``always`` with one of its tools raised to ``operator``.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import httpx2
import mcp.types as types
import pytest
from fastapi import FastAPI
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server

from tests.api.conftest import Headers, bearer
from tests.gateway.lab import free_port, serve_at
from toolvet.services import preferences, review, servers, tools
from toolvet.services.auth import Principal
from toolvet.services.context import Context

pytestmark = pytest.mark.anyio

BOUND = 120.0
OBJECT: dict[str, Any] = {"type": "object"}
STALE = "sha256:" + "0" * 64

#: name -> (annotations, writable, reviewed, changed after review, enabled)
TOOLS: dict[str, tuple[dict[str, Any] | None, bool, bool, bool, bool]] = {
    "read": ({"readOnlyHint": True, "destructiveHint": False}, False, True, False, True),
    "readish": ({"readOnlyHint": True}, True, False, False, True),
    "wipe": ({"readOnlyHint": False, "destructiveHint": True}, True, True, False, True),
    "bare": (None, False, False, False, True),
    "moved": ({"readOnlyHint": True, "destructiveHint": False}, False, True, True, True),
    "gone": (None, False, True, False, False),
}
HOST_ARGUMENTS: dict[str, dict[str, Any]] = {
    "list_servers": {},
    "list_tools": {},
    "tool_diff": {"server": "plain", "tool": "read"},
    "discover_server": {"server": "nowhere"},  # runs, and answers that there is no such server
}
ADDRESSES = [
    *((server, name) for server in ("plain", "trusty") for name in TOOLS),
    ("off", "read"),
    *(("floored", name) for name in ("read", "wipe")),
    *(("toolvet", name) for name in HOST_ARGUMENTS),
]
USERS = {"asker": "ask", "allower": "allow", "auto-user": None}  # auto-user never chose: auto
SCOPES = ("default", "room", "lobby")  # lobby has no entry of its own: it reads default


@contextmanager
def agreeing_upstream() -> Iterator[tuple[str, list[str]]]:
    """A real SDK server on loopback that advertises every tool above and answers any call; its URL
    and the names it was called with."""
    called: list[str] = []

    async def list_tools(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[types.Tool(name=name, description=name, input_schema=OBJECT) for name in TOOLS]
        )

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        called.append(params.name)
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"{params.name} ran")])

    server = Server("agree", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)
    with serve_at(server, free_port()) as up:
        yield up.url, called


def build_registry(ctx: Context, admin: Principal, url: str) -> None:
    """The registry of the module docstring, its servers reached at ``url``."""
    for name, flags in (("plain", {"hold_changed_tools": True, "trust_annotations": False}),
                        ("trusty", {"hold_changed_tools": False, "trust_annotations": True}),
                        ("off", {})):
        servers.create_server(ctx, admin, {"name": name, "url": url, "discovery": "manual", **flags})
    for server in ("plain", "trusty"):
        for name, (annotated, writable, reviewed, changed, enabled) in TOOLS.items():
            tools.register_tool(ctx, admin, server, {"name": name, "description": name, "input_schema": OBJECT,
                                                     "annotations": annotated, "writable": writable,
                                                     "enabled": enabled})
            if reviewed:
                review.review_tool(ctx, admin, server, name)
            if changed:
                tools.update_tool(ctx, admin, server, name, {"description": f"{name}, changed after review"})
    tools.register_tool(ctx, admin, "off", {"name": "read", "input_schema": OBJECT, "writable": False,
                                            "annotations": TOOLS["read"][0]})
    review.review_tool(ctx, admin, "off", "read")
    servers.update_server(ctx, admin, "off", {"enabled": False})
    servers.create_server(ctx, admin, {"name": "floored", "url": url, "discovery": "manual", "approval": "always"})
    for name in ("read", "wipe"):
        annotated, writable = TOOLS[name][:2]
        tools.register_tool(ctx, admin, "floored", {"name": name, "description": name, "input_schema": OBJECT,
                                                    "annotations": annotated, "writable": writable})
        review.review_tool(ctx, admin, "floored", name)
        preferences.add_always_allow(ctx, admin, "room", "floored", name)  # no entry lowers a floor
    tools.update_tool(ctx, admin, "floored", "wipe", {"approval": "operator"})
    for user, mode in USERS.items():
        if mode is not None:
            preferences.set_permission_mode(ctx, admin, user, mode)
    preferences.set_disabled(ctx, admin, "default", "plain", ["readish"])
    preferences.set_disabled(ctx, admin, "room", "trusty", ["bare"])
    preferences.set_disabled(ctx, admin, "room", "toolvet", ["discover_server"])
    preferences.set_disabled(ctx, admin, "room", "plain", [])  # copied from default, then emptied
    for server, name in (("plain", "wipe"), ("plain", "bare"), ("plain", "moved"), ("trusty", "wipe")):
        preferences.add_always_allow(ctx, admin, "room", server, name)  # pinned to the current definition
    preferences.add_always_allow(ctx, admin, "room", "trusty", "moved", STALE)  # an older definition


def arguments_for(server: str, tool: str) -> dict[str, Any]:
    return HOST_ARGUMENTS[tool] if server == "toolvet" else {}


@pytest.fixture
def upstream() -> Iterator[tuple[str, list[str]]]:
    with agreeing_upstream() as up:
        yield up


@pytest.fixture
def registry(ctx: Context, admin: Principal, upstream: tuple[str, list[str]]) -> Context:
    build_registry(ctx, admin, upstream[0])
    return ctx


@pytest.fixture
async def served(app: FastAPI, registry: Context) -> AsyncIterator[httpx2.AsyncClient]:
    """The app with its lifespan running (the call service, the gateway and its host tools)."""
    async with app.router.lifespan_context(app), httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=app), base_url="http://toolvet", timeout=BOUND
    ) as client:
        yield client


async def decide(client: httpx2.AsyncClient, headers: Headers, user: str, scope: str, server: str,
                 tool: str) -> dict[str, Any]:
    body = {"user": user, "scope": scope, "serverType": server, "toolName": tool}
    response = await client.post("/api/v1/decide", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def call(client: httpx2.AsyncClient, headers: Headers, user: str, scope: str, server: str,
               tool: str) -> tuple[str, dict[str, Any]]:
    """What a real call did: ``ran``, ``pending`` or ``refused``, and the answer's body."""
    body = {"server_type": server, "tool_name": tool, "arguments": arguments_for(server, tool), "user": user,
            "scope": scope}
    response = await client.post("/api/v1/calls", json=body, headers=headers)
    answer = dict(response.json())
    if response.status_code == 403:
        return "refused", answer
    if response.status_code == 202:
        assert answer["status"] == "pending"
        return "pending", answer
    assert response.status_code == 200 and answer["status"] == "done", response.text
    return "ran", answer


def verdict(decision: dict[str, Any]) -> str:
    return "refused" if decision["refused"] else "ran" if decision["autoAllow"] else "pending"


async def test_every_decision_is_what_the_call_does(
    served: httpx2.AsyncClient, mint: Callable[..., str], upstream: tuple[str, list[str]]
) -> None:
    ops = bearer(mint("operator"))
    outcomes: dict[tuple[str, str, str, str], str] = {}
    ran_upstream = 0
    with anyio.fail_after(BOUND):
        for user, scope, (server, tool) in itertools.product(USERS, SCOPES, ADDRESSES):
            decision = await decide(served, ops, user, scope, server, tool)
            did, answer = await call(served, ops, user, scope, server, tool)
            where = f"{user} in {scope}: {server}/{tool}"
            assert did == verdict(decision), (where, decision["reasons"], answer)
            # A refusal's message is "call to S/T refused: " and the reasons joined by "; ".
            reasons = answer["reasons"] if did != "refused" else answer["error"]["message"].split(
                " refused: ", 1)[1].split("; ")
            assert decision["reasons"][-len(reasons):] == reasons, where
            if did != "refused":
                assert answer["auto_allow"] is decision["autoAllow"], where
                assert answer["approval"] == decision["approval"], where
            if did == "ran" and server != "toolvet":
                ran_upstream += 1
            outcomes[user, scope, server, tool] = did
    # What ran went upstream, and nothing else did.
    assert len(upstream[1]) == ran_upstream
    # The registry is varied enough for the comparison to mean something: every outcome for every mode,
    # and a few decisions whose rule is known.
    for user in USERS:
        assert {did for (u, *_), did in outcomes.items() if u == user} == {"ran", "pending", "refused"}, user
    # Mode allow asks only under an approval floor.
    assert {(s, t) for (u, _, s, t), did in outcomes.items() if u == "allower" and did == "pending"} == {
        ("floored", "read"), ("floored", "wipe")}
    expected = {
        ("auto-user", "lobby", "plain", "readish"): "refused",  # lobby reads default's disabled map
        ("auto-user", "room", "plain", "readish"): "pending",  # room's own map does not list it
        ("auto-user", "default", "plain", "moved"): "refused",  # changed after review, held
        ("auto-user", "default", "trusty", "moved"): "ran",  # changed, not held, trusted annotations
        ("auto-user", "default", "trusty", "readish"): "pending",  # destructiveHint absent
        ("auto-user", "default", "plain", "read"): "ran",  # reviewed read-only
        ("auto-user", "default", "plain", "bare"): "pending",  # writable false but unreviewed
        ("asker", "room", "plain", "wipe"): "ran",  # an always-allow entry at the current fingerprint
        ("asker", "room", "trusty", "moved"): "pending",  # only a stale entry
        ("asker", "default", "plain", "read"): "pending",  # ask: reviewed read-only does not count
        ("allower", "default", "plain", "gone"): "refused",  # the tool is disabled
        ("allower", "default", "off", "read"): "refused",  # its server is disabled
        ("auto-user", "default", "toolvet", "list_tools"): "ran",  # requireApproval false
        ("auto-user", "default", "toolvet", "discover_server"): "pending",
        ("allower", "room", "toolvet", "discover_server"): "refused",  # room disables it
        ("allower", "room", "floored", "read"): "pending",  # floor always: mode and entry do not skip it
        ("auto-user", "default", "floored", "read"): "pending",  # even reviewed read-only
        ("asker", "room", "floored", "wipe"): "pending",  # the tool's own floor, operator
    }
    assert {key: outcomes[key] for key in expected} == expected


async def test_the_catalog_enables_exactly_what_decide_does_not_refuse(
    served: httpx2.AsyncClient, mint: Callable[..., str]
) -> None:
    ops = bearer(mint("operator"))
    with anyio.fail_after(BOUND):
        for scope in SCOPES:
            response = await served.get("/api/v1/catalog", params={"scope": scope}, headers=ops)
            assert response.status_code == 200, response.text
            listed = {(item["serverType"], item["name"]): item for item in response.json()}
            for server, tool in ADDRESSES:
                decision = await decide(served, ops, "allower", scope, server, tool)
                enabled = (server, tool) in listed and listed[server, tool]["enabled"]
                assert enabled is not decision["refused"], (scope, server, tool)
