"""Calls through toolvet against a real SDK-built upstream over HTTP on loopback."""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import pytest

from tests.upstreams import modern_http_server
from toolvet.api.app import create_app
from toolvet.errors import Conflict, Forbidden, NotFound
from toolvet.schemas.calls import CallCreate, CallStatus
from toolvet.schemas.tools import TokenCreate
from toolvet.services import discovery, preferences, servers, tokens, tools
from toolvet.services.auth import Principal, Role
from toolvet.services.calls import CallService

pytestmark = pytest.mark.anyio

ALICE = Principal(actor="token:alice", role=Role.CONSUMER, user="alice", scope="default")


async def registered(ctx: Any, admin: Principal, url: str) -> None:
    servers.create_server(ctx, admin, {"name": "up", "url": url})
    with anyio.fail_after(30):
        await discovery.discover(ctx, admin, ["up"])


def add(a: int = 1, b: int = 2) -> CallCreate:
    return CallCreate(server_type="up", tool_name="tool_0", arguments={"a": a, "b": b})


async def test_an_auto_allowed_call_runs_and_its_structured_result_is_checked(ctx, admin):
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        preferences.set_permission_mode(ctx, admin, "alice", "allow")
        async with CallService(ctx) as service:
            call = await service.submit(ALICE, add(2, 3))
    assert call.status is CallStatus.DONE and call.auto_allow
    assert call.result is not None and call.result["structuredContent"] == {"result": 5}


async def test_invalid_arguments_never_go_upstream_and_name_the_field(ctx, admin):
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        before = len(up.rpc_methods())
        async with CallService(ctx) as service:
            call = await service.submit(ALICE, CallCreate(server_type="up", tool_name="tool_0",
                                                          arguments={"a": "one", "b": 2}))
        assert len(up.rpc_methods()) == before
    assert call.status is CallStatus.INVALID
    assert call.result is not None and call.result["isError"] is True
    assert "arguments.a" in call.result["content"][0]["text"]


async def test_a_call_that_asks_waits_as_pending_until_approved(ctx, admin, operator):
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        async with CallService(ctx) as service:
            async with service.events.subscribe() as inbox:
                pending = await service.submit(ALICE, add())
                event = await inbox.receive()  # type: ignore[attr-defined]
            assert pending.status is CallStatus.PENDING
            assert event == {"type": "tool-call-pending", "callId": pending.id, "serverType": "up",
                             "toolName": "tool_0", "arguments": {"a": 1, "b": 2}, "autoAllow": False,
                             "serverExecuted": True, "user": "alice", "scope": "default"}
            approved = await service.approve(operator, pending.id)
            with pytest.raises(Conflict, match="already"):
                await service.approve(operator, pending.id)
            with pytest.raises(NotFound):
                await service.deny(operator, "no-such-call")
            assert service.get(ALICE, pending.id).status is CallStatus.DONE
    assert approved.status is CallStatus.DONE and approved.result["structuredContent"] == {"result": 3}


async def test_a_denied_call_never_runs(ctx, admin, operator):
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        async with CallService(ctx) as service:
            pending = await service.submit(ALICE, add())
            calls_before = up.rpc_methods().count("tools/call")
            denied = await service.deny(ALICE, pending.id)
        assert up.rpc_methods().count("tools/call") == calls_before == 0
    assert denied.status is CallStatus.DENIED


async def test_approve_always_pins_an_entry_so_the_next_call_runs(ctx, admin, operator):
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        async with CallService(ctx) as service:
            first = await service.submit(ALICE, add())
            await service.approve(ALICE, first.id, allow_always=True)
            second = await service.submit(ALICE, add())
    assert second.status is CallStatus.DONE and second.auto_allow
    fingerprint = tools.get_tool(ctx, admin, "up", "tool_0").definition_fingerprint
    entries = preferences.get_always_allow(ctx, admin, "default").entries
    assert [(e.server_type, e.tool_name, e.fingerprint) for e in entries] == [("up", "tool_0", fingerprint)]


async def test_an_expired_call_cannot_be_approved(ctx, admin, operator):
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        ctx.settings = ctx.settings.model_copy(update={"approval_ttl": 0.001})
        async with CallService(ctx) as service:
            pending = await service.submit(ALICE, add())
            await anyio.sleep(0.01)  # the ttl itself: a millisecond
            with pytest.raises(Conflict, match="expired"):
                await service.approve(operator, pending.id)


async def test_a_disabled_tool_is_refused_not_asked_about(ctx, admin):
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        tools.update_tool(ctx, admin, "up", "tool_0", {"enabled": False})
        async with CallService(ctx) as service:
            with pytest.raises(Forbidden, match="refused"):
                await service.submit(ALICE, add())
            with pytest.raises(NotFound):
                await service.submit(ALICE, CallCreate(server_type="up", tool_name="nope"))


async def test_a_consumer_calls_for_its_own_user_only(ctx, admin):
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        async with CallService(ctx) as service:
            with pytest.raises(Forbidden):
                await service.submit(ALICE, CallCreate(server_type="up", tool_name="tool_0", user="bob"))


async def test_the_rest_door_answers_202_for_pending_and_200_after_approval(ctx, admin):
    consumer = tokens.create_token(ctx, admin, TokenCreate(role="consumer", user="alice", name="app")).token
    approver = tokens.create_token(ctx, admin, TokenCreate(role="operator", name="ops")).token
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        app = create_app(ctx)
        async with CallService(ctx), httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app),
                                                         base_url="http://toolvet") as client:
            made = await client.post("/api/v1/calls", json={"server_type": "up", "tool_name": "tool_0",
                                                            "arguments": {"a": 4, "b": 4}},
                                     headers={"Authorization": f"Bearer {consumer}"})
            assert made.status_code == 202, made.text
            call_id = made.json()["id"]
            approved = await client.post(f"/api/v1/calls/{call_id}/approve", json={"allowAlways": False},
                                         headers={"Authorization": f"Bearer {approver}"})
            again = await client.post(f"/api/v1/calls/{call_id}/approve",
                                      headers={"Authorization": f"Bearer {approver}"})
    assert approved.status_code == 200 and approved.json()["result"]["structuredContent"] == {"result": 8}
    assert again.status_code == 409
