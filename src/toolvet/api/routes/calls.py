"""Calls: make one, read it, approve or deny it, and follow events live."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated

import anyio
from fastapi import APIRouter, Header, Request, Response
from fastapi.responses import StreamingResponse

from toolvet.api.deps import CallerDep, ContextDep, Limit, Offset, PrincipalDep
from toolvet.schemas.calls import ApproveIn, CallCreate, CallOut, CallStatus
from toolvet.schemas.common import Page
from toolvet.services import calls
from toolvet.services.auth import Permission, Role
from toolvet.services.events import STOPPING
from toolvet.services.mcp_sessions import INTERNAL_EVENT

router = APIRouter(tags=["calls"])
#: Routes a caller without a token may use at a ``noauth`` tool (mounted without the token check).
open_router = APIRouter(tags=["calls"])


@open_router.post("/calls", responses={202: {"description": "Pending: an approver must decide"}})
async def create_call(
    ctx: ContextDep, principal: CallerDep, data: CallCreate, response: Response,
    idempotency_key: Annotated[str | None, Header(max_length=200, description=(
        "Makes a retry resume the call it repeats: a call with the same key, token, tool and arguments "
        "as one still pending (or one that finished unseen) is that call, not another."))] = None,
) -> CallOut:
    """Call a tool. 200 with the result when it ran (or its arguments were invalid: ``status``
    ``invalid``, the result an error result naming the field); 202 when it waits for an approver.
    The tool's ``securitySchemes`` are enforced as on ``/mcp``: 401 without a token (unless the tool
    is ``noauth``), 403 naming the OAuth scopes the token lacks."""
    caller = f"key:{idempotency_key}" if idempotency_key else ""
    call = await calls.service(ctx).submit(principal, data, caller=caller)
    if call.status is CallStatus.PENDING:
        response.status_code = 202
    return call


@router.get("/calls")
def list_calls(ctx: ContextDep, principal: PrincipalDep, status: str | None = "pending",
               server: str | None = None, tool: str | None = None,
               limit: Limit = 100, offset: Offset = 0) -> Page[CallOut]:
    """Calls, newest first (pending ones by default, ``status=`` for all), of one server (``server``,
    the call's ``server_type``) and tool (``tool``) when given; a consumer sees its own user's only."""
    return calls.list_calls(ctx, principal, status=status or None, server=server or None, tool=tool or None,
                            limit=limit, offset=offset)


@router.get("/calls/{call_id}")
def get_call(ctx: ContextDep, principal: PrincipalDep, call_id: str) -> CallOut:
    """One call, with its result once it ran."""
    return calls.service(ctx).get(principal, call_id)


@router.post("/calls/{call_id}/approve")
async def approve_call(ctx: ContextDep, principal: PrincipalDep, call_id: str,
                       body: ApproveIn | None = None) -> CallOut:
    """Approve a pending call (``allowAlways`` also pins an always-allow entry to the approved
    fingerprint); it runs now and the answer carries its result. Unknown 404, expired or decided 409."""
    return await calls.approve_call(ctx, principal, call_id, allow_always=bool(body and body.allow_always))


@router.post("/calls/{call_id}/deny")
async def deny_call(ctx: ContextDep, principal: PrincipalDep, call_id: str) -> CallOut:
    """Deny a pending call. Unknown 404, expired or decided 409."""
    return await calls.deny_call(ctx, principal, call_id)


@router.get("/events", response_class=StreamingResponse)
async def events(ctx: ContextDep, principal: PrincipalDep, request: Request) -> StreamingResponse:
    """Server-sent events: ``tool-call-pending`` and ``tool-call-decided``. A consumer receives only
    its own user's and scope's events; operators and readers receive all."""
    if principal.role is not Role.CONSUMER:
        principal.require(Permission.READ)
    service = calls.service(ctx)

    async def stream() -> AsyncIterator[bytes]:
        async with service.events.subscribe() as inbox:  # before the first byte: nothing after it is missed
            yield b": toolvet events\n\n"
            while not await request.is_disconnected():
                with anyio.move_on_after(15):
                    event = await inbox.receive()
                    if event.get("type") == STOPPING:
                        return  # the server is stopping: the client reconnects to another replica
                    if event.get("type") == INTERNAL_EVENT:
                        continue  # replicas' own traffic (MCP sessions), not a call event
                    if principal.role is Role.CONSUMER and event.get("user") not in (None, principal.user):
                        continue
                    yield f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
                    continue
                yield b": keep-alive\n\n"

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
