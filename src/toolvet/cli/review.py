"""``toolvet review SERVER/TOOL``: record a review of a tool's current definition (SPEC §4.3)."""

from __future__ import annotations

from typing import Annotated

import typer

from toolvet.cli import render
from toolvet.cli.render import JsonOption
from toolvet.cli.runtime import local
from toolvet.services import review as review_service
from toolvet.services.tools import split_address


def review(
    address: Annotated[str, typer.Argument(metavar="SERVER/TOOL", help="The tool, as SERVER/TOOL.")],
    note: Annotated[str | None, typer.Option("--note", help="Why it is fine, for the audit log.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Mark the tool's current definition as reviewed (enabled is left alone)."""
    server, name = split_address(address)
    with local() as (ctx, me):
        out = review_service.review_tool(ctx, me, server, name, note)
    render.show_change(
        out,
        as_json,
        f"reviewed {out.server}/{out.name} at {out.reviewed_fingerprint} (offered={out.offered})",
    )
