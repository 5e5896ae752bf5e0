"""``toolvet tool list|show|history|diff|set|add|remove``: tools, addressed ``SERVER/TOOL``.

``tool_app`` is public so a later module can add a command to the group; ``tool diff`` lives in
``toolvet.cli.diff`` and is added here, after ``history``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer

from toolvet.cli import diff, parsing, render
from toolvet.cli.group import command_group, exclusive
from toolvet.cli.render import JsonOption, LimitOption, OffsetOption
from toolvet.cli.runtime import confirm_or_refuse, local
from toolvet.domain.policy import ApprovalFloor, ReviewState
from toolvet.errors import InvalidInput
from toolvet.services import review, tools
from toolvet.services.tools import split_address

tool_app = command_group("List, inspect and decide about tools.")

AddressArg = Annotated[str, typer.Argument(metavar="SERVER/TOOL", help="The tool, as SERVER/TOOL.")]


class FindingSeverity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    HIGH = "high"


APPROVAL_HELP = ("Approval floor for this tool: user (the user's mode and lists decide), always (every call "
                 "asks), operator (every call asks; only an operator or admin approves). Its server's floor "
                 "applies when stricter.")

YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]



@tool_app.command("list")
def list_(
    server: Annotated[str | None, typer.Option("--server", help="Only this server's tools.")] = None,
    available: Annotated[
        bool | None,
        typer.Option(
            "--available/--unavailable", help="Only tools that are (not) enabled on an enabled server."
        ),
    ] = None,
    offered: Annotated[
        bool | None,
        typer.Option("--offered/--not-offered", help="Only tools that are (not) offered to consumers."),
    ] = None,
    state: Annotated[
        ReviewState | None, typer.Option("--state", help="Only tools in this review state.")
    ] = None,
    findings: Annotated[
        bool | None, typer.Option("--findings/--no-findings", help="Only tools with (without) findings.")
    ] = None,
    severity: Annotated[
        FindingSeverity | None,
        typer.Option("--severity", help="Only tools with a finding at least this severe."),
    ] = None,
    limit: LimitOption = 100,
    offset: OffsetOption = 0,
    as_json: JsonOption = False,
) -> None:
    """List tools by server and name."""
    exclusive(("--no-findings", findings is False), ("--severity", severity is not None))
    with local() as (ctx, me):
        page = tools.list_tools(
            ctx,
            me,
            server=server,
            available=available,
            offered_=offered,
            state=state,
            has_findings=findings,
            min_severity=None if severity is None else severity.value,
            limit=limit,
            offset=offset,
        )
    render.show_page(page, as_json, "tools", render.tool_row, render.TOOL_HEADERS)


@tool_app.command("show")
def show(address: AddressArg, as_json: JsonOption = False) -> None:
    """Show one tool: the server's claims, the operator's flags, the review and what follows."""
    server, name = split_address(address)
    with local() as (ctx, me):
        out = tools.get_tool(ctx, me, server, name)
    render.show_object(out, as_json, skip=("definition", "findings"))
    if not as_json:
        render.show_findings(out.findings)


@tool_app.command("history")
def history(
    address: AddressArg, limit: LimitOption = 100, offset: OffsetOption = 0, as_json: JsonOption = False
) -> None:
    """Every distinct definition the tool has had, oldest first."""
    server, name = split_address(address)
    with local() as (ctx, me):
        page = review.history(ctx, me, server, name, limit=limit, offset=offset)
    render.show_page(page, as_json, "definitions", render.history_row, render.HISTORY_HEADERS)


tool_app.command("diff")(diff.diff)


@tool_app.command("set")
def set_(
    address: AddressArg,
    enabled: Annotated[
        bool | None, typer.Option("--enabled/--disabled", help="Enable or disable the tool.")
    ] = None,
    writable: Annotated[
        bool | None,
        typer.Option(
            "--writable/--read-only", help="Whether the tool may change things (an operator's decision)."
        ),
    ] = None,
    approval: Annotated[ApprovalFloor | None, typer.Option("--approval", help=APPROVAL_HELP)] = None,
    as_json: JsonOption = False,
) -> None:
    """Set the operator's flags on a tool."""
    server, name = split_address(address)
    patch: dict[str, Any] = {}
    if enabled is not None:
        patch["enabled"] = enabled
    if writable is not None:
        patch["writable"] = writable
    if approval is not None:
        patch["approval"] = approval.value
    if not patch:
        raise InvalidInput(
            "nothing to change: give --enabled/--disabled, --writable/--read-only or --approval", "options"
        )
    with local() as (ctx, me):
        out = tools.update_tool(ctx, me, server, name, patch)
    render.show_change(
        out,
        as_json,
        f"updated tool {out.server}/{out.name}: enabled={out.enabled} "
        f"writable={out.writable} approval={out.approval.value} (effective {out.effective_approval.value}) "
        f"offered={out.offered}",
    )


@tool_app.command("add")
def add(
    server: Annotated[str, typer.Argument(help="A manual server's name.")],
    name: Annotated[str, typer.Option("--name", help="The tool's name (case sensitive).")],
    input_schema: Annotated[
        str,
        typer.Option(
            "--input-schema", help='JSON Schema with "type": "object" at its root, inline or @file.'
        ),
    ],
    title: Annotated[str | None, typer.Option("--title", help="A human-readable title.")] = None,
    description: Annotated[str | None, typer.Option("--description", help="What the tool does.")] = None,
    output_schema: Annotated[
        str | None,
        typer.Option("--output-schema", help="JSON Schema of the structured result, inline or @file."),
    ] = None,
    annotations: Annotated[
        str | None,
        typer.Option("--annotations", help="MCP annotations as JSON, e.g. '{\"readOnlyHint\": true}'."),
    ] = None,
    enabled: Annotated[
        bool | None, typer.Option("--enabled/--disabled", help="Default: the server's new-tools setting.")
    ] = None,
    read_only: Annotated[bool, typer.Option("--read-only", help="Register it as not writable.")] = False,
    approval: Annotated[ApprovalFloor, typer.Option("--approval", help=APPROVAL_HELP)] = ApprovalFloor.USER,
    as_json: JsonOption = False,
) -> None:
    """Register a tool by hand on a manual server."""
    data: dict[str, Any] = {
        "name": name,
        "title": title,
        "description": description,
        "input_schema": parsing.json_document(input_schema, "--input-schema"),
        "output_schema": parsing.json_document(output_schema, "--output-schema"),
        "annotations": parsing.json_document(annotations, "--annotations"),
        "enabled": enabled,
        "writable": not read_only,
        "approval": approval.value,
    }
    with local() as (ctx, me):
        out = tools.register_tool(ctx, me, server, data)
    render.show_change(out, as_json, f"added tool {out.server}/{out.name} ({out.definition_fingerprint})")


@tool_app.command("remove")
def remove(address: AddressArg, yes: YesOpt = False) -> None:
    """Remove a tool (on an auto server, discovery lists it again if the server still has it)."""
    server, name = split_address(address)
    with local() as (ctx, me):
        if not yes:
            found = tools.get_tool(ctx, me, server, name)
            confirm_or_refuse(f"Remove tool {found.server}/{found.name}?", yes)
        tools.delete_tool(ctx, me, server, name)
    render.say(f"removed tool {server}/{name}")
