"""``toolvet audit``: the append-only log of operator actions, newest first."""

from __future__ import annotations

from typing import Annotated

import typer

from toolvet.cli import render
from toolvet.cli.render import JsonOption, LimitOption, OffsetOption
from toolvet.cli.runtime import local
from toolvet.services import audit as audit_service


def audit(
    actor: Annotated[str | None, typer.Option("--actor", help="Only this actor, e.g. cli:alice.")] = None,
    object_id: Annotated[
        str | None, typer.Option("--object", help="Only this object: server:NAME or tool:SERVER/TOOL.")
    ] = None,
    action: Annotated[
        str | None, typer.Option("--action", help="Only this action, e.g. tool.update.")
    ] = None,
    limit: LimitOption = 100,
    offset: OffsetOption = 0,
    as_json: JsonOption = False,
) -> None:
    """Show who did what to which object, and when."""
    with local() as (ctx, me):
        page = audit_service.list_entries(
            ctx, me, actor=actor, object_id=object_id, action=action, limit=limit, offset=offset
        )
    render.show_page(page, as_json, "entries", render.audit_row, render.AUDIT_HEADERS)
