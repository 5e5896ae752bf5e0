"""A retry of a call resumes the call it repeats: one pending call per intent, and an outcome nobody
was given is collected by the retry instead of the tool running again."""

from __future__ import annotations

from datetime import timedelta

import anyio
import httpx2
import pytest
from sqlalchemy import update

from tests.services.test_calls import ALICE, add, registered
from tests.upstreams import modern_http_server
from toolvet.api.app import create_app
from toolvet.db.models import PendingCall
from toolvet.db.types import utcnow
from toolvet.schemas.calls import CallStatus
from toolvet.schemas.tools import TokenCreate
from toolvet.services import call_intents, tokens
from toolvet.services.calls import CallService

pytestmark = pytest.mark.anyio


async def test_a_retry_of_a_pending_call_is_that_call(ctx, admin, operator):
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        async with CallService(ctx) as first, CallService(ctx) as second:  # two replicas, one database
            async with second.events.subscribe() as inbox:
                made = await first.submit(ALICE, add(), caller="session-1")
                retried = await second.submit(ALICE, add(), caller="session-1")
                other_session = await second.submit(ALICE, add(), caller="session-2")
                other_arguments = await second.submit(ALICE, add(5, 6), caller="session-1")
                # One bus for both (as replicas share one over PostgreSQL): every new call is announced once.
                announced = [inbox.receive_nowait()["callId"] for _ in range(3)]  # type: ignore[attr-defined]
                with pytest.raises(anyio.WouldBlock):
                    inbox.receive_nowait()  # type: ignore[attr-defined]
            pending = first.list(operator).items
    assert made.status is CallStatus.PENDING
    assert retried.id == made.id
    assert len({made.id, other_session.id, other_arguments.id}) == 3
    assert sorted(c.id for c in pending) == sorted({made.id, other_session.id, other_arguments.id})
    assert announced == [made.id, other_session.id, other_arguments.id]  # the retry raised no second event


async def test_an_approved_call_nobody_waited_for_is_collected_by_the_retry_and_runs_once(ctx, admin, operator):
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        async with CallService(ctx) as first, CallService(ctx) as second:
            made = await first.submit(ALICE, add(2, 3), caller="session-1")  # its waiter gave up (or died)
            approved = await second.approve(operator, made.id)
            ran = up.rpc_methods().count("tools/call")
            collected = await second.submit(ALICE, add(2, 3), caller="session-1", wait=5.0)
            again = await second.submit(ALICE, add(2, 3), caller="session-1")
        assert up.rpc_methods().count("tools/call") == ran == 1
    assert approved.status is CallStatus.DONE
    assert collected.id == made.id and collected.status is CallStatus.DONE
    assert collected.result is not None and collected.result["structuredContent"] == {"result": 5}
    assert again.id != made.id and again.status is CallStatus.PENDING  # the outcome was delivered: a new call


async def test_over_rest_an_idempotency_key_makes_the_retry_that_call(ctx, admin):
    consumer = tokens.create_token(ctx, admin, TokenCreate(role="consumer", user="alice", name="app")).token
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        app = create_app(ctx)
        body = {"server_type": "up", "tool_name": "tool_0", "arguments": {"a": 4, "b": 4}}
        async with CallService(ctx), httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app),
                                                         base_url="http://toolvet") as client:
            auth = {"Authorization": f"Bearer {consumer}"}
            keyed = [(await client.post("/api/v1/calls", json=body, headers={**auth, "Idempotency-Key": "k1"}))
                     for _ in range(2)]
            unkeyed = [(await client.post("/api/v1/calls", json=body, headers=auth)) for _ in range(2)]
    assert [r.status_code for r in keyed + unkeyed] == [202] * 4
    assert keyed[0].json()["id"] == keyed[1].json()["id"]
    assert len({r.json()["id"] for r in unkeyed} | {keyed[0].json()["id"]}) == 3  # no key: each is a call


async def test_a_pending_call_whose_waiter_went_silent_is_marked_orphaned(ctx, admin, operator):
    with modern_http_server() as up:
        await registered(ctx, admin, up.url)
        async with CallService(ctx) as service:
            with anyio.move_on_after(1.0):  # the client waits a moment, then its replica "dies"
                await service.submit(ALICE, add(1, 1), caller="session-1", wait=30.0)
            unwaited = await service.submit(ALICE, add(2, 2), caller="session-1")  # nobody waits on it
            (waited,) = [c for c in service.list(operator).items if c.arguments == {"a": 1, "b": 1}]
            fresh = waited.orphaned
            silent = utcnow() - timedelta(seconds=call_intents.ORPHANED_SECONDS + 1)
            with ctx.db.transaction() as session:
                session.execute(update(PendingCall).where(PendingCall.id == waited.id).values(waited_at=silent))
            later = service.get(operator, waited.id)
    assert not fresh and later.orphaned
    assert not service.get(operator, unwaited.id).orphaned
