"""``toolvet call list|show|approve|deny`` on calls made through the real call service against a real
upstream: a pending call is listed and shown, approved (it runs from the CLI's process and its result
is recorded, with the same audit entries REST writes), or denied; ``--always`` pins an always-allow
entry; decided or unknown calls are refused in one line."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from tests.cli.conftest import Toolvet
from tests.upstreams import modern_http_server
from toolvet.schemas.calls import CallCreate, CallOut, CallStatus
from toolvet.services import audit, discovery, preferences, servers
from toolvet.services.auth import Principal, Role
from toolvet.services.calls import CallService
from toolvet.services.context import Context

ALICE = Principal(actor="token:alice", role=Role.CONSUMER, user="alice", scope="default")
CALL = {"server_type": "up", "tool_name": "tool_0", "arguments": {"a": 2, "b": 5}}


@pytest.fixture
def upstream(service: Context, admin: Principal) -> Iterator[str]:
    """A real MCP server registered and discovered as ``up``, whose tools ask before each call (its
    approval floor is operator)."""
    with modern_http_server() as up:
        servers.create_server(service, admin, {"name": "up", "url": up.url})
        [run] = anyio.run(discovery.discover, service, admin, ["up"])
        assert run.status == "ok", run.error
        servers.update_server(service, admin, "up", {"approval": "operator"})
        yield up.url


def pending(ctx: Context, **overrides: Any) -> CallOut:
    async def make() -> CallOut:
        async with CallService(ctx) as calls:
            return await calls.submit(ALICE, CallCreate(**{**CALL, **overrides}))

    call = anyio.run(make)
    assert call.status is CallStatus.PENDING, call
    return call


def test_a_pending_call_is_listed_shown_and_approved_and_runs(
    toolvet: Toolvet, service: Context, admin: Principal, upstream: str
) -> None:
    call = pending(service)
    listed = toolvet.json("call", "list")
    assert [c["id"] for c in listed["items"]] == [call.id] and listed["items"][0]["approval"] == "operator"
    table = toolvet.ok("call", "list").stdout
    assert call.id in table and "up/tool_0" in table and "1-1 of 1 calls" in table
    assert toolvet.json("call", "show", call.id)["arguments"] == {"a": 2, "b": 5}
    approved = toolvet.ok("call", "approve", call.id)
    assert approved.stdout == f"approved call {call.id} (up/tool_0): done\n"
    done = toolvet.json("call", "show", call.id)
    assert (done["status"], done["decided_by"]) == ("done", f"cli:{_login()}")
    assert done["result"]["structuredContent"] == {"result": 7}
    assert toolvet.json("call", "list")["total"] == 0
    actions = [e.action for e in audit.list_entries(service, admin, object_id="tool:up/tool_0").items]
    assert {"call.pending", "call.approve", "call.run"} <= set(actions)


def test_approve_always_pins_an_always_allow_entry_to_the_approved_definition(
    toolvet: Toolvet, service: Context, admin: Principal, upstream: str
) -> None:
    call = pending(service)
    out = toolvet.json("call", "approve", call.id, "--always")
    assert (out["status"], out["allow_always"]) == ("done", True)
    entries = preferences.get_always_allow(service, admin, "default").entries
    assert [(e.server_type, e.tool_name, e.fingerprint) for e in entries] == [("up", "tool_0", call.fingerprint)]


def test_deny_runs_nothing_and_a_decided_call_cannot_be_decided_again(
    toolvet: Toolvet, service: Context, upstream: str
) -> None:
    call = pending(service)
    assert toolvet.ok("call", "deny", call.id).stdout == f"denied call {call.id} (up/tool_0): denied\n"
    shown = toolvet.json("call", "show", call.id)
    assert (shown["status"], shown["result"]) == ("denied", None)
    assert toolvet.fails("call", "approve", call.id) == f"error: call {call.id} is already denied"
    assert toolvet.fails("call", "deny", "no-such-call") == "error: call no-such-call not found"


def test_calls_are_filtered_by_status_server_and_tool(
    toolvet: Toolvet, service: Context, upstream: str
) -> None:
    first, second = pending(service), pending(service, tool_name="tool_1", arguments={"text": "hi"})
    toolvet.ok("call", "deny", first.id)
    assert [c["id"] for c in toolvet.json("call", "list")["items"]] == [second.id]
    assert [c["id"] for c in toolvet.json("call", "list", "--status", "denied")["items"]] == [first.id]
    assert {c["id"] for c in toolvet.json("call", "list", "--all")["items"]} == {first.id, second.id}
    assert [c["id"] for c in toolvet.json("call", "list", "--all", "--tool", "tool_0")["items"]] == [first.id]
    assert toolvet.json("call", "list", "--all", "--server", "other")["total"] == 0


def _login() -> str:
    import getpass

    return getpass.getuser()


def test_a_call_of_a_host_tool_is_left_pending_for_the_running_server(
    toolvet: Toolvet, service: Context, admin: Principal
) -> None:
    from toolvet.gateway.host_tools import register_host_tools

    async def make() -> CallOut:
        async with CallService(service) as calls:
            register_host_tools(calls)
            return await calls.submit(admin, CallCreate(server_type="toolvet", tool_name="discover_server",
                                                        arguments={"server": "up"}, user="alice"))

    call = anyio.run(make)
    assert call.status is CallStatus.PENDING
    refused = toolvet.fails("call", "approve", call.id)
    assert refused.startswith(f"error: call {call.id} is of one of toolvet's own tools: approve it on the running")
    assert toolvet.json("call", "show", call.id)["status"] == "pending"
