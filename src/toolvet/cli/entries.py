"""``toolvet prompt list|show|enable|disable|review|diff`` and the same for ``toolvet resource`` (static
resources and resource templates): a server's entries, addressed ``SERVER/PROMPT`` or ``SERVER/URI``."""

# No ``from __future__ import annotations``: each group's argument type is made inside ``group`` (its
# metavar differs), and Typer must see it evaluated.
from collections.abc import Sequence
from typing import Annotated, Any

import typer

from toolvet.cli import diff, render
from toolvet.cli.group import command_group
from toolvet.cli.render import JsonOption, LimitOption, OffsetOption
from toolvet.cli.runtime import local
from toolvet.cli.tools import FindingSeverity
from toolvet.domain.policy import ReviewState
from toolvet.schemas.entries import EntryKind, EntryOut
from toolvet.services import entries
from toolvet.services.tools import split_address

HEADERS = ("ENTRY", "KIND", "ENABLED", "REVIEW", "HELD", "OFFERED", "FINDINGS")


def row(entry: EntryOut) -> Sequence[Any]:
    return (f"{entry.server}/{entry.key}", entry.kind, entry.enabled, entry.review_state, entry.held,
            entry.offered, render.findings_cell(entry.findings))


def group(noun: str, metavar: str, kinds: tuple[EntryKind, ...], what: str) -> typer.Typer:
    """The command group of one noun (``prompt``, ``resource``) over ``kinds``."""
    app = command_group(f"List, inspect and decide about {what}.")
    Address = Annotated[str, typer.Argument(metavar=metavar, help=f"The {noun}, as {metavar}.")]

    @app.command("list")
    def list_(
        server: Annotated[str | None, typer.Option("--server", help="Only this server's.")] = None,
        offered: Annotated[bool | None, typer.Option("--offered/--not-offered",
                                                     help="Only those (not) offered to consumers.")] = None,
        held: Annotated[bool | None, typer.Option("--held/--not-held",
                                                  help="Only those (not) held for review.")] = None,
        state: Annotated[ReviewState | None, typer.Option("--state", help="Only this review state.")] = None,
        severity: Annotated[FindingSeverity | None, typer.Option(
            "--severity", help="Only those with a finding at least this severe.")] = None,
        limit: LimitOption = 100, offset: OffsetOption = 0, as_json: JsonOption = False,
    ) -> None:
        with local() as (ctx, me):
            page = entries.list_entries(ctx, me, kinds, server=server, offered_=offered, held=held, state=state,
                                        min_severity=None if severity is None else severity.value,
                                        limit=limit, offset=offset)
        render.show_page(page, as_json, f"{noun}s", row, HEADERS)

    @app.command("show")
    def show(address: Address, as_json: JsonOption = False) -> None:
        server, key = split_address(address)
        with local() as (ctx, me):
            out = entries.get_entry(ctx, me, kinds, server, key)
        render.show_object(out, as_json, skip=("findings",))
        if not as_json:
            render.show_findings(out.findings)

    def set_enabled(address: str, enabled: bool, as_json: bool) -> None:
        server, key = split_address(address)
        with local() as (ctx, me):
            out = entries.update_entry(ctx, me, kinds, server, key, {"enabled": enabled})
        render.show_change(out, as_json, f"{'enabled' if enabled else 'disabled'} {noun} {out.server}/{out.key} "
                                         f"(offered={out.offered})")

    @app.command("enable")
    def enable(address: Address, as_json: JsonOption = False) -> None:
        set_enabled(address, True, as_json)

    @app.command("disable")
    def disable(address: Address, as_json: JsonOption = False) -> None:
        set_enabled(address, False, as_json)

    @app.command("review")
    def review(
        address: Address,
        note: Annotated[str | None, typer.Option("--note", help="Why it is fine, for the audit log.")] = None,
        as_json: JsonOption = False,
    ) -> None:
        server, key = split_address(address)
        with local() as (ctx, me):
            out = entries.review_entry(ctx, me, kinds, server, key, note)
        render.show_change(out, as_json, f"reviewed {noun} {out.server}/{out.key} at {out.reviewed_fingerprint} "
                                         f"(offered={out.offered})")

    @app.command("diff")
    def diff_(address: Address, as_json: JsonOption = False) -> None:
        server, key = split_address(address)
        with local() as (ctx, me):
            out = entries.diff_entry(ctx, me, kinds, server, key)
        if as_json:
            render.emit_json(out)
        else:
            render.print_rich(diff.view(out))

    list_.__doc__ = f"List {what} by server."
    show.__doc__ = f"Show one {noun}: the server's claim, the operator's setting, the review and its findings."
    enable.__doc__ = f"Enable the {noun} (offered unless held for review)."
    disable.__doc__ = f"Disable the {noun}: the gateway no longer lists or serves it."
    review.__doc__ = f"Mark the {noun}'s current definition as reviewed (a held one is offered again)."
    diff_.__doc__ = f"Show what changed between the reviewed definition of the {noun} and its current one."
    return app


prompt_app = group("prompt", "SERVER/PROMPT", entries.PROMPTS, "servers' prompts")
resource_app = group("resource", "SERVER/URI", entries.RESOURCES, "servers' resources and resource templates")
