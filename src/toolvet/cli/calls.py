"""``toolvet call list|show|approve|deny``: calls made through toolvet and the pending ones waiting
for an approver.

Listing and showing read the call records (``services.call_store``) without starting the call
service, so they stay fast. Approving runs the call, so ``approve`` and ``deny`` go through the call
service (``services.calls``) as REST and the console do: the same checks of who may approve
(docs/policy.md; the CLI acts as a local admin), the same audit entries, and the approved call runs
from this process against its upstream.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import anyio
import typer

from toolvet.cli import render
from toolvet.cli.group import command_group, exclusive
from toolvet.cli.render import JsonOption, LimitOption, OffsetOption
from toolvet.cli.runtime import local
from toolvet.schemas.calls import CallOut, CallStatus
from toolvet.services import call_store

call_app = command_group("List, show, approve and deny calls.")

CallArg = Annotated[str, typer.Argument(metavar="ID", help="The call's id (see call list).")]

CALL_HEADERS = ("ID", "CREATED", "STATUS", "TOOL", "USER", "SCOPE", "APPROVAL", "EXPIRES", "DECIDED BY")


def call_row(call: CallOut) -> Sequence[Any]:
    return (call.id, call.created_at, call.status, f"{call.server_type}/{call.tool_name}", call.user, call.scope,
            call.approval, call.expires_at, call.decided_by)


@call_app.command("list")
def list_(
    status: Annotated[
        CallStatus | None, typer.Option("--status", help="Only calls in this state (default: pending).")
    ] = None,
    every: Annotated[bool, typer.Option("--all", help="Calls in every state.")] = False,
    server: Annotated[str | None, typer.Option("--server", help="Only calls to this server.")] = None,
    tool: Annotated[str | None, typer.Option("--tool", help="Only calls of this tool (its name).")] = None,
    limit: LimitOption = 100,
    offset: OffsetOption = 0,
    as_json: JsonOption = False,
) -> None:
    """List calls, newest first: the pending ones unless --status or --all says otherwise."""
    exclusive(("--all", every), ("--status", status is not None))
    wanted = None if every else (status or CallStatus.PENDING).value
    with local() as (ctx, me):
        page = call_store.list_calls(ctx, me, status=wanted, server=server, tool=tool, limit=limit, offset=offset)
    render.show_page(page, as_json, "calls", call_row, CALL_HEADERS)


@call_app.command("show")
def show(call_id: CallArg, as_json: JsonOption = False) -> None:
    """Show one call: who made it for whom, its arguments, the reasons it asks, and its result."""
    with local() as (ctx, me):
        out = call_store.get(ctx, me, call_id)
    render.show_object(out, as_json)


def _decided(call: CallOut, as_json: bool, verb: str) -> None:
    tail = f": {call.error}" if call.error else ""
    render.show_change(call, as_json, f"{verb} call {call.id} ({call.server_type}/{call.tool_name}): "
                                      f"{call.status.value}{tail}")
    if call.status in (CallStatus.FAILED, CallStatus.CANCELLED):
        raise typer.Exit(1)


@call_app.command("approve")
def approve(
    call_id: CallArg,
    always: Annotated[
        bool,
        typer.Option("--always", help="Also let later calls of this tool in the call's scope run without "
                     "asking, for as long as its definition stays the one approved."),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Approve a pending call and run it now; exit 1 when it could not run."""
    from toolvet.services import calls  # the call service imports the MCP SDK: only here

    with local() as (ctx, me):

        async def decide() -> CallOut:
            async with calls.CallService(ctx):
                return await calls.approve_call(ctx, me, call_id, allow_always=always)

        out = anyio.run(decide)
    _decided(out, as_json, "approved")


@call_app.command("deny")
def deny(call_id: CallArg, as_json: JsonOption = False) -> None:
    """Deny a pending call: it never runs, and its caller is told so."""
    from toolvet.services import calls

    with local() as (ctx, me):

        async def decide() -> CallOut:
            async with calls.CallService(ctx):
                return await calls.deny_call(ctx, me, call_id)

        out = anyio.run(decide)
    _decided(out, as_json, "denied")
