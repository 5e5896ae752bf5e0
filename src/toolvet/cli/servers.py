"""``toolvet server add|list|show|set|remove``: upstream MCP servers."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from toolvet.cli import parsing, render
from toolvet.cli.group import command_group, exclusive
from toolvet.cli.render import JsonOption, LimitOption, OffsetOption
from toolvet.cli.runtime import confirm_or_refuse, local
from toolvet.cli.server_oauth import AuthOpt, ClientIdOpt, ClientSecretOpt, GrantOpt, ScopeOpt, connect, oauth_fields
from toolvet.domain.policy import ApprovalFloor
from toolvet.errors import InvalidInput
from toolvet.services import servers

APPROVAL_HELP = ("Approval floor for every tool of the server: user (the user's mode and lists decide), "
                 "always (every call asks), operator (every call asks; only an operator or admin approves).")
ApprovalOpt = Annotated[ApprovalFloor, typer.Option("--approval", help=APPROVAL_HELP)]

server_app = command_group("Register, inspect, change and remove upstream MCP servers.")

NameArg = Annotated[str, typer.Argument(help="The server's name (lowercase letters, digits, '-').")]
UrlOpt = Annotated[str | None, typer.Option("--url", help="Endpoint of an HTTP server.")]
TransportOpt = Annotated[
    str | None,
    typer.Option(
        "--transport", help="streamable-http (default with --url), sse, or stdio (default with --command)."
    ),
]
HeaderOpt = Annotated[
    list[str] | None,
    typer.Option("--header", help="'Name: value' sent upstream; repeatable. Write-only: never shown again."),
]
CommandOpt = Annotated[str | None, typer.Option("--command", help="Program that runs a stdio server.")]
ArgOpt = Annotated[list[str] | None, typer.Option("--arg", help="One argument of --command; repeatable.")]
EnvOpt = Annotated[
    list[str] | None,
    typer.Option("--env", help="KEY=VALUE added to a stdio server's environment; repeatable. Write-only."),
]
CwdOpt = Annotated[str | None, typer.Option("--cwd", help="Working directory of a stdio server.")]
TitleOpt = Annotated[str | None, typer.Option("--title", help="A human-readable title.")]
SOFTWARE_HELP = ("The software this server runs, as you name it (a name like a server's): servers that run the "
                 "same software are not compared with each other for duplicate or shadowing tools.")
SoftwareOpt = Annotated[str | None, typer.Option("--software", help=SOFTWARE_HELP)]



def _endpoint_fields(
    url: str | None,
    transport: str | None,
    header: list[str] | None,
    command: str | None,
    arg: list[str] | None,
    env: list[str] | None,
    cwd: str | None,
    title: str | None,
) -> dict[str, Any]:
    """The options a person gave, as service input; options not given are left out."""
    fields = {
        "url": url,
        "transport": transport,
        "headers": parsing.headers(header),
        "command": command,
        "args": arg or None,
        "env": parsing.env(env),
        "cwd": cwd,
        "title": title,
    }
    return {key: value for key, value in fields.items() if value is not None}


@server_app.command("add")
def add(
    name: NameArg,
    url: UrlOpt = None,
    transport: TransportOpt = None,
    header: HeaderOpt = None,
    command: CommandOpt = None,
    arg: ArgOpt = None,
    env: EnvOpt = None,
    cwd: CwdOpt = None,
    title: TitleOpt = None,
    manual: Annotated[
        bool,
        typer.Option("--manual", help="Never contact the server; register its tools by hand (tool add)."),
    ] = False,
    trust_annotations: Annotated[
        bool,
        typer.Option(
            "--trust-annotations", help="Let readOnlyHint: true + destructiveHint: false annotations skip approval."
        ),
    ] = False,
    new_tools_disabled: Annotated[
        bool, typer.Option("--new-tools-disabled", help="Tools discovered later start disabled.")
    ] = False,
    no_hold_changed: Annotated[
        bool,
        typer.Option("--no-hold-changed", help="Keep offering tools whose definition changed after review."),
    ] = False,
    hold_flagged: Annotated[
        bool,
        typer.Option("--hold-flagged", help="Stop offering tools with a high finding until they are reviewed."),
    ] = False,
    remove_stale: Annotated[
        bool,
        typer.Option("--remove-stale", help="Delete tools the server stops listing (default: retire them)."),
    ] = False,
    disabled: Annotated[bool, typer.Option("--disabled", help="Register the server disabled.")] = False,
    approval: ApprovalOpt = ApprovalFloor.USER,
    software: SoftwareOpt = None,
    auth: AuthOpt = None,
    oauth_grant: GrantOpt = None,
    oauth_client_id: ClientIdOpt = None,
    oauth_client_secret: ClientSecretOpt = None,
    oauth_scope: ScopeOpt = None,
    as_json: JsonOption = False,
) -> None:
    """Register a server: an HTTP one with --url, or a stdio one with --command."""
    data: dict[str, Any] = {
        "name": name,
        **_endpoint_fields(url, transport, header, command, arg, env, cwd, title),
        "enabled": not disabled,
        "discovery": "manual" if manual else "auto",
        "trust_annotations": trust_annotations,
        "new_tools_enabled": not new_tools_disabled,
        "hold_changed_tools": not no_hold_changed,
        "hold_flagged_tools": hold_flagged,
        "remove_stale": remove_stale,
        "approval": approval.value,
        "software": software,
        **oauth_fields(auth, oauth_grant, oauth_client_id, oauth_client_secret, oauth_scope),
    }
    with local() as (ctx, me):
        out = servers.create_server(ctx, me, data)
    render.show_change(out, as_json, f"added server {out.name} ({out.transport.value})")


@server_app.command("list")
def list_(
    software: Annotated[str | None, typer.Option("--software", help="Only the servers that run this software.")] = None,
    limit: LimitOption = 100, offset: OffsetOption = 0, as_json: JsonOption = False,
) -> None:
    """List servers by name."""
    with local() as (ctx, me):
        page = servers.list_servers(ctx, me, software=software, limit=limit, offset=offset)
    render.show_page(page, as_json, "servers", render.server_row, render.SERVER_HEADERS)


@server_app.command("show")
def show(name: NameArg, as_json: JsonOption = False) -> None:
    """Show one server (header and env values are never shown, only their names)."""
    with local() as (ctx, me):
        out = servers.get_server(ctx, me, name)
    render.show_object(out, as_json)


def _flag(value: bool | None, key: str, patch: dict[str, Any]) -> None:
    if value is not None:
        patch[key] = value


@server_app.command("set")
def set_(
    name: NameArg,
    url: UrlOpt = None,
    transport: TransportOpt = None,
    header: Annotated[
        list[str] | None,
        typer.Option(
            "--header", help="'Name: value'; repeatable. Replaces every header the server had. Write-only."
        ),
    ] = None,
    command: CommandOpt = None,
    arg: Annotated[
        list[str] | None,
        typer.Option("--arg", help="One argument of --command; repeatable. Replaces the argument list."),
    ] = None,
    env: Annotated[
        list[str] | None,
        typer.Option(
            "--env", help="KEY=VALUE; repeatable. Replaces the whole added environment. Write-only."
        ),
    ] = None,
    cwd: CwdOpt = None,
    title: TitleOpt = None,
    enabled: Annotated[bool | None, typer.Option("--enabled/--disabled", help="Enable or disable.")] = None,
    auto: Annotated[
        bool | None,
        typer.Option("--auto/--manual", help="Discover automatically, or never contact (tools by hand)."),
    ] = None,
    trust_annotations: Annotated[
        bool | None,
        typer.Option(
            "--trust-annotations/--no-trust-annotations", help="Whether read-only annotations decide."
        ),
    ] = None,
    hold_changed: Annotated[
        bool | None,
        typer.Option("--hold-changed/--no-hold-changed", help="Stop offering tools changed after review."),
    ] = None,
    hold_flagged: Annotated[
        bool | None,
        typer.Option("--hold-flagged/--no-hold-flagged",
                     help="Stop offering tools with a high finding until reviewed."),
    ] = None,
    remove_stale: Annotated[
        bool | None,
        typer.Option("--remove-stale/--keep-stale", help="Delete, or retire, tools no longer listed."),
    ] = None,
    new_tools_enabled: Annotated[
        bool | None,
        typer.Option(
            "--new-tools-enabled/--new-tools-disabled", help="Whether newly discovered tools start enabled."
        ),
    ] = None,
    approval: Annotated[ApprovalFloor | None, typer.Option("--approval", help=APPROVAL_HELP)] = None,
    software: SoftwareOpt = None,
    no_software: Annotated[bool, typer.Option(
        "--no-software", help="Name no software for the server (its tools are compared with every other server's).",
    )] = False,
    auth: AuthOpt = None,
    oauth_grant: GrantOpt = None,
    oauth_client_id: ClientIdOpt = None,
    oauth_client_secret: ClientSecretOpt = None,
    oauth_scope: ScopeOpt = None,
    as_json: JsonOption = False,
) -> None:
    """Change the options given; everything else is left as it is."""
    exclusive(("--software", software is not None), ("--no-software", no_software))
    patch = _endpoint_fields(url, transport, header, command, arg, env, cwd, title)
    _flag(enabled, "enabled", patch)
    if auto is not None:
        patch["discovery"] = "auto" if auto else "manual"
    _flag(trust_annotations, "trust_annotations", patch)
    _flag(hold_changed, "hold_changed_tools", patch)
    _flag(hold_flagged, "hold_flagged_tools", patch)
    _flag(remove_stale, "remove_stale", patch)
    _flag(new_tools_enabled, "new_tools_enabled", patch)
    if approval is not None:
        patch["approval"] = approval.value
    if software is not None or no_software:
        patch["software"] = software  # None with --no-software: no software named
    oauth_given = (auth, oauth_grant, oauth_client_id, oauth_client_secret, oauth_scope)
    if not patch and all(v is None for v in oauth_given):
        raise InvalidInput("nothing to change: give at least one option (see --help)", "options")
    with local() as (ctx, me):
        if any(v is not None for v in oauth_given):
            shown = servers.get_server(ctx, me, name).oauth
            patch.update(oauth_fields(*oauth_given, current=shown.model_dump(mode="json") if shown else None))
        out = servers.update_server(ctx, me, name, patch)
    render.show_change(out, as_json, f"updated server {out.name}")


@server_app.command("remove")
def remove(
    name: NameArg,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Remove a server and every tool it has."""
    with local() as (ctx, me):
        if not yes:
            found = servers.get_server(ctx, me, name)
            confirm_or_refuse(f"Remove server {found.name} and its {found.tool_count} tool(s)?", yes)
        servers.delete_server(ctx, me, name)
    render.say(f"removed server {name}")


server_app.command("connect")(connect)
