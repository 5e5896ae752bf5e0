"""``toolvet review SERVER/TOOL``: record a review of a tool's current definition (docs/review.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from toolvet.cli import render
from toolvet.cli.render import JsonOption
from toolvet.cli.runtime import local
from toolvet.errors import InvalidInput
from toolvet.services import review as review_service
from toolvet.services.tools import split_address

CHOICE = "--writable/--read-only"


def review(
    address: Annotated[str, typer.Argument(metavar="SERVER/TOOL", help="The tool, as SERVER/TOOL.")],
    note: Annotated[str | None, typer.Option("--note", help="Why it is fine, for the audit log.")] = None,
    writable: Annotated[
        bool | None,
        typer.Option("--writable/--read-only",
                     help="Decide again whether the tool may change things; required when its read-only "
                     "claim, annotations or required parameters moved since its last review."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Mark the tool's current definition as reviewed (enabled is left alone)."""
    server, name = split_address(address)
    with local() as (ctx, me):
        try:
            out = review_service.review_tool(ctx, me, server, name, note, writable)
        except InvalidInput as exc:
            if exc.field != "writable":
                raise
            raise InvalidInput(exc.reason, CHOICE) from None
    render.show_change(
        out,
        as_json,
        f"reviewed {out.server}/{out.name} at {out.reviewed_fingerprint} "
        f"({'' if writable is None else f'writable={out.writable}, '}offered={out.offered})",
    )
