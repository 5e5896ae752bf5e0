"""What is kept of a call: results past the cap stored truncated (the caller gets them whole), arguments
past their cap refused, audit entries bounded. A real SDK upstream on loopback; SQLite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from cryptography.fernet import Fernet
from sqlalchemy import func, select

from tests.upstreams import modern_http_server
from toolvet.api.app import create_app
from toolvet.db.models import AuditEntry, PendingCall
from toolvet.jsontext import compact
from toolvet.schemas.calls import CallCreate, CallStatus
from toolvet.schemas.tools import TokenCreate
from toolvet.services import audit, discovery, preferences, servers, tokens
from toolvet.services.auth import Principal, Role
from toolvet.services.bounds import MARKER, bounded_result, bounded_value
from toolvet.services.calls import CallService
from toolvet.services.context import Context
from toolvet.settings import Settings

pytestmark = pytest.mark.anyio

ALICE = Principal(actor="token:alice", role=Role.CONSUMER, user="alice", scope="default")
RESULT_CAP = 4096
ARGUMENT_CAP = 200 * 1024


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[Context]:
    context = Context.open(Settings(home=tmp_path, database_url=f"sqlite:///{tmp_path}/t.sqlite3",
                                    secret_key=Fernet.generate_key().decode(),
                                    max_stored_result_bytes=RESULT_CAP, max_argument_bytes=ARGUMENT_CAP))
    yield context
    context.close()


async def registered(ctx: Context, admin: Principal, url: str) -> None:
    servers.create_server(ctx, admin, {"name": "up", "url": url})
    with anyio.fail_after(30):
        await discovery.discover(ctx, admin, ["up"])


def echo(text: str) -> CallCreate:
    return CallCreate(server_type="up", tool_name="tool_1", arguments={"text": text})


def stored(ctx: Context, call_id: str) -> PendingCall:
    with ctx.db.transaction() as session:
        row = session.get(PendingCall, call_id)
        assert row is not None
        return row


def size(value: Any) -> int:
    return len(compact(value).encode())


def entries(ctx: Context, action: str) -> list[AuditEntry]:
    with ctx.db.transaction() as session:
        return list(session.scalars(select(AuditEntry).where(AuditEntry.action == action)).all())


async def test_a_result_past_the_cap_reaches_the_caller_whole_and_is_stored_truncated(ctx, admin):
    text = "é" + "x" * 10_000
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        preferences.set_permission_mode(ctx, admin, "alice", "allow")
        async with CallService(ctx) as service:
            call = await service.submit(ALICE, echo(text))
    assert call.status is CallStatus.DONE
    assert call.result is not None and call.result["content"][0]["text"] == text  # whole for the caller
    kept = stored(ctx, call.id).result
    assert kept is not None and size(kept) <= RESULT_CAP
    assert kept["_meta"][MARKER]["bytes"] == size(call.result)
    block = kept["content"][0]["text"]
    assert block.startswith("[toolvet stored only the first ") and "xxxx" in block
    assert kept["isError"] is False


async def test_an_approved_calls_result_is_stored_truncated_too(ctx, admin, operator):
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        async with CallService(ctx) as service:
            pending = await service.submit(ALICE, echo("y" * 10_000))
            assert pending.status is CallStatus.PENDING
            done = await service.approve(operator, pending.id)
    assert done.result is not None and done.result["content"][0]["text"] == "y" * 10_000
    kept = stored(ctx, pending.id).result
    assert kept is not None and size(kept) <= RESULT_CAP and MARKER in kept["_meta"]


async def test_a_small_result_is_stored_as_it_came(ctx, admin):
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        preferences.set_permission_mode(ctx, admin, "alice", "allow")
        async with CallService(ctx) as service:
            call = await service.submit(ALICE, echo("short"))
    assert stored(ctx, call.id).result == call.result


async def test_the_audit_entry_of_a_call_keeps_no_huge_arguments(ctx, admin):
    text = "z" * 100_000  # under the argument cap, over the audit entry's
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        preferences.set_permission_mode(ctx, admin, "alice", "allow")
        async with CallService(ctx) as service:
            call = await service.submit(ALICE, echo(text))
    assert stored(ctx, call.id).arguments == {"text": text}  # the call's own row keeps them
    [entry] = entries(ctx, "call.run")
    assert size(entry.after) <= audit.MAX_VALUE_BYTES
    assert entry.after[MARKER]["bytes"] > 100_000 and entry.after["prefix"].startswith('{"call":')


async def test_pending_calls_audit_entry_is_bounded(ctx, admin):
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        async with CallService(ctx) as service:
            pending = await service.submit(ALICE, echo("w" * 100_000))
    [entry] = entries(ctx, "call.pending")
    assert size(entry.after) <= audit.MAX_VALUE_BYTES and MARKER in entry.after
    assert stored(ctx, pending.id).arguments == {"text": "w" * 100_000}


async def test_arguments_past_their_cap_are_refused_over_rest_and_nothing_is_stored(ctx, admin):
    consumer = tokens.create_token(ctx, admin, TokenCreate(role="consumer", user="alice", name="app")).token
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        async with CallService(ctx), httpx2.AsyncClient(transport=httpx2.ASGITransport(app=create_app(ctx)),
                                                         base_url="http://toolvet") as client:
            r = await client.post("/api/v1/calls", json={"server_type": "up", "tool_name": "tool_1",
                                                         "arguments": {"text": "a" * (ARGUMENT_CAP + 1)}},
                                  headers={"Authorization": f"Bearer {consumer}"})
            assert up.rpc_methods().count("tools/call") == 0
    assert r.status_code == 422
    error = r.json()["error"]
    assert error["field"] == "arguments" and "TOOLVET_MAX_ARGUMENT_BYTES" in error["message"]
    with ctx.db.transaction() as session:
        assert session.scalar(select(func.count()).select_from(PendingCall)) == 0


def test_bounded_values_fit_their_limit_whatever_their_text_escapes_to() -> None:
    for value in ({"a": '"' * 5000}, {"a": "\x01" * 5000}, ["ü" * 3000], {"k": list(range(3000))}):
        kept = bounded_value(value, 1000)
        assert size(kept) <= 1000 and kept[MARKER]["bytes"] == size(value)
    result = {"content": [{"type": "text", "text": "\\" * 9000}], "isError": True}
    kept_result = bounded_result(result, 2000)
    assert kept_result is not None and size(kept_result) <= 2000 and kept_result["isError"] is True
    assert bounded_value({"a": 1}, 1000) == {"a": 1}
