"""A retry of a call resumes the call it repeats: one pending call per intent, and an outcome nobody
was given is collected by the retry instead of the tool running again."""

from __future__ import annotations

import pytest

from tests.services.test_calls import ALICE, add, registered
from tests.upstreams import modern_http_server
from toolvet.schemas.calls import CallStatus
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
                announced = [inbox.receive_nowait()["callId"] for _ in range(2)]  # type: ignore[attr-defined]
            pending = first.list(operator).items
    assert made.status is CallStatus.PENDING
    assert retried.id == made.id
    assert len({made.id, other_session.id, other_arguments.id}) == 3
    assert sorted(c.id for c in pending) == sorted({made.id, other_session.id, other_arguments.id})
    assert announced == [other_session.id, other_arguments.id]  # the retry raised no second event


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
