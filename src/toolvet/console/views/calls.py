"""Pending calls: the list (kept live by a small script over server-sent events), approve, deny."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import anyio
from starlette.responses import Response, StreamingResponse

from toolvet.console.paging import pager, paging
from toolvet.console.visit import PREFIX, Visit
from toolvet.errors import InvalidInput
from toolvet.schemas.calls import CallStatus
from toolvet.services import calls
from toolvet.services.auth import Permission
from toolvet.services.events import STOPPING
from toolvet.services.mcp_sessions import INTERNAL_EVENT

KEEP_ALIVE = 15.0
#: A stream ends after this long and the browser reconnects, so a revoked token stops listening soon.
STREAM_FOR = 600.0
ACTIONS = ("approve", "approve-always", "deny")
STATUSES = ("pending", "any", *(s.value for s in CallStatus if s is not CallStatus.PENDING))


async def call_list(visit: Visit) -> Response:
    """Calls waiting for a decision (or, by ``status``, any others), newest first, searched and paged."""
    status = visit.field("status") or "pending"
    if status not in STATUSES:
        raise InvalidInput(f"must be one of {', '.join(STATUSES)}", "status")
    asked = paging(visit, ("created",), "created", descending=True)
    page = await visit.run(calls.list_calls, status=None if status == "any" else status, q=asked.q,
                           descending=asked.descending, limit=asked.limit, offset=asked.offset)
    return visit.render("calls.html", title="Pending calls" if status == "pending" else "Calls", calls=page.items,
                        total=page.total, call_status=status, statuses=STATUSES, q=asked.q,
                        pg=pager(visit, page, asked))


async def decide(visit: Visit) -> Response:
    call_id, action = visit.request.path_params["call_id"], visit.field("action")
    if action not in ACTIONS:
        raise InvalidInput(f"must be one of {', '.join(ACTIONS)}", "action")
    if action == "deny":
        out = await calls.deny_call(visit.ctx, visit.principal, call_id)
    else:
        out = await calls.approve_call(
            visit.ctx, visit.principal, call_id, allow_always=action == "approve-always"
        )
    said = {"approve": "approved", "approve-always": "approved and always allowed", "deny": "denied"}[action]
    return visit.redirect(
        f"{PREFIX}/calls",
        f"Call to {out.server_type}/{out.tool_name} for {out.user} {said} ({out.status.value}).",
    )


async def call_events(visit: Visit) -> Response:
    """``text/event-stream`` of call events for the signed-in console (the session cookie authenticates)."""
    visit.principal.require(Permission.READ)
    bus = calls.service(visit.ctx).events
    request = visit.request

    async def stream() -> AsyncIterator[bytes]:
        yield b"retry: 2000\n\n"
        with anyio.move_on_after(STREAM_FOR):
            async with bus.subscribe() as inbox:
                while not await request.is_disconnected():
                    with anyio.move_on_after(KEEP_ALIVE):
                        event = await inbox.receive()
                        kind = str(event.get("type", "message"))
                        if kind == STOPPING:
                            return  # the server is stopping: the page's script reconnects
                        if kind == INTERNAL_EVENT:
                            continue  # replicas' own traffic (MCP sessions), not a call event
                        yield f"event: {kind}\ndata: {json.dumps({'type': kind})}\n\n".encode()
                        continue
                    yield b": keep-alive\n\n"

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
