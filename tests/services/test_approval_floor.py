"""The operator's approval floor over REST and through the call service: set and shown, obeyed by
every call whatever the user's mode or always-allow list, and, under ``operator``, approved only by an
operator or an admin (never by the call's own consumer token)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest

from tests.upstreams import modern_http_server
from toolvet.api.app import create_app
from toolvet.errors import Forbidden
from toolvet.schemas.calls import CallCreate, CallStatus
from toolvet.schemas.tools import TokenCreate
from toolvet.services import discovery, preferences, servers, tokens, tools
from toolvet.services.auth import Principal, Role
from toolvet.services.calls import CallService

pytestmark = pytest.mark.anyio

ALICE = Principal(actor="token:alice", role=Role.CONSUMER, user="alice", scope="default")
CALL = {"server_type": "up", "tool_name": "tool_0", "arguments": {"a": 2, "b": 5}}


async def registered(ctx: Any, admin: Principal, url: str) -> None:
    servers.create_server(ctx, admin, {"name": "up", "url": url})
    with anyio.fail_after(30):
        await discovery.discover(ctx, admin, ["up"])


def lenient(ctx: Any, admin: Principal) -> None:
    """Everything the user controls says "run it": mode allow and an always-allow entry."""
    preferences.set_permission_mode(ctx, admin, "alice", "allow")
    tool = tools.get_tool(ctx, admin, "up", "tool_0")
    preferences.add_always_allow(ctx, admin, "default", "up", "tool_0", tool.definition_fingerprint)


@asynccontextmanager
async def rest(ctx: Any, token: str) -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=create_app(ctx)), base_url="http://toolvet",
                                  headers={"Authorization": f"Bearer {token}"}) as client:
        yield client


def token(ctx: Any, admin: Principal, **fields: Any) -> str:
    return tokens.create_token(ctx, admin, TokenCreate(**fields)).token


async def test_the_floors_are_set_and_shown_over_rest_and_a_consumer_cannot_lower_them(ctx, admin):
    ops = token(ctx, admin, role="operator", name="ops")
    app = token(ctx, admin, role="consumer", user="alice", name="app")
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        async with rest(ctx, ops) as operator, rest(ctx, app) as consumer:
            assert (await operator.get("/api/v1/servers/up")).json()["approval"] == "user"
            server = await operator.patch("/api/v1/servers/up", json={"approval": "always"})
            tool = await operator.patch("/api/v1/servers/up/tools/tool_0", json={"approval": "operator"})
            assert server.status_code == 200 and server.json()["approval"] == "always"
            assert tool.status_code == 200
            assert (tool.json()["approval"], tool.json()["effective_approval"]) == ("operator", "operator")
            bad = await operator.patch("/api/v1/servers/up/tools/tool_0", json={"approval": "lenient"})
            null = await operator.patch("/api/v1/servers/up", json={"approval": None})
            assert bad.status_code == 422 and null.status_code == 422
            lowered = [await consumer.patch("/api/v1/servers/up/tools/tool_0", json={"approval": "user"}),
                       await consumer.patch("/api/v1/servers/up", json={"approval": "user"})]
            assert [r.status_code for r in lowered] == [403, 403]
            # The mode a consumer may set for its own user does not lower it either.
            mode = await consumer.put("/api/v1/users/alice/permission-mode", json={"mode": "allow"})
            assert mode.status_code == 200, mode.text
            decided = await consumer.post("/api/v1/decide", json={"user": "alice", "scope": "default",
                                                                  "serverType": "up", "toolName": "tool_0"})
    assert decided.status_code == 200, decided.text
    body = decided.json()
    assert (body["autoAllow"], body["refused"], body["approval"]) == (False, False, "operator")
    assert any("approval floor operator" in r for r in body["reasons"])
    shown = tools.get_tool(ctx, admin, "up", "tool_0")
    assert (shown.approval, shown.effective_approval) == ("operator", "operator")


async def test_floor_always_asks_despite_mode_allow_and_an_always_allow_entry(ctx, admin, operator):
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        lenient(ctx, admin)
        async with CallService(ctx) as service:
            before = await service.submit(ALICE, CallCreate(**CALL))
            servers.update_server(ctx, admin, "up", {"approval": "always"})
            service.forget()
            asked = await service.submit(ALICE, CallCreate(**CALL))
            # Its own consumer may approve it: the floor says every call asks, not who answers.
            approved = await service.approve(ALICE, asked.id)
    assert before.status is CallStatus.DONE and before.auto_allow
    assert asked.status is CallStatus.PENDING and asked.approval == "always"
    assert asked.reasons[0].startswith("approval floor always")
    assert approved.status is CallStatus.DONE and approved.decided_by == ALICE.actor


async def test_floor_operator_is_approved_by_an_operator_and_never_by_the_calls_own_consumer(ctx, admin):
    ops = token(ctx, admin, role="operator", name="ops")
    app = token(ctx, admin, role="consumer", user="alice", name="app")
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        lenient(ctx, admin)
        tools.update_tool(ctx, admin, "up", "tool_0", {"approval": "operator"})
        async with CallService(ctx), rest(ctx, ops) as operator, rest(ctx, app) as consumer:
            made = await consumer.post("/api/v1/calls", json=CALL)
            assert made.status_code == 202, made.text
            call_id = made.json()["id"]
            refused = await consumer.post(f"/api/v1/calls/{call_id}/approve", json={"allowAlways": True})
            still = await consumer.get(f"/api/v1/calls/{call_id}")
            approved = await operator.post(f"/api/v1/calls/{call_id}/approve", json={})
            second = await consumer.post("/api/v1/calls", json=CALL)
            denied = await consumer.post(f"/api/v1/calls/{second.json()['id']}/deny")
    assert made.json()["approval"] == "operator" and not made.json()["auto_allow"]
    assert refused.status_code == 403
    assert "only an operator or an admin may approve" in refused.text
    assert still.json()["status"] == "pending"
    assert approved.status_code == 200 and approved.json()["status"] == "done"
    assert approved.json()["result"]["structuredContent"] == {"result": 7}
    # Denying runs nothing, so the call's own consumer may still say no.
    assert denied.status_code == 200 and denied.json()["status"] == "denied"
    # The refused allowAlways pinned nothing new: the one entry is the test's own.
    assert len(preferences.get_always_allow(ctx, admin, "default").entries) == 1


async def test_an_operator_floor_call_never_asks_its_user_by_elicitation(ctx, admin, operator):
    asked: list[str] = []

    async def elicit(call: Any) -> str:
        asked.append(call.id)
        return "allow"

    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        servers.update_server(ctx, admin, "up", {"approval": "operator"})
        async with CallService(ctx) as service:
            pending = await service.submit(ALICE, CallCreate(**CALL), elicit=elicit)
            with pytest.raises(Forbidden, match="approval floor is operator"):
                await service.approve(ALICE, pending.id)
            servers.update_server(ctx, admin, "up", {"approval": "always"})
            service.forget()
            answered = await service.submit(ALICE, CallCreate(**CALL), elicit=elicit)
    assert pending.status is CallStatus.PENDING and asked == [answered.id]
    assert answered.status is CallStatus.DONE and answered.decided_by == "user:alice"


async def test_raising_the_floor_to_operator_holds_calls_already_pending(ctx, admin, operator):
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        async with CallService(ctx) as service:
            pending = await service.submit(ALICE, CallCreate(**CALL))
            assert pending.approval == "user"
            servers.update_server(ctx, admin, "up", {"approval": "operator"})
            with pytest.raises(Forbidden, match="approval floor is operator"):
                await service.approve(ALICE, pending.id)
            approved = await service.approve(operator, pending.id)
    assert approved.status is CallStatus.DONE and approved.decided_by == operator.actor
