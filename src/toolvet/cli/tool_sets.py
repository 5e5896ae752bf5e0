"""``toolvet toolset add|list|show|remove``: named allow-lists of tools, served at ``/mcp/sets/{name}``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from toolvet.cli import render
from toolvet.cli.group import command_group
from toolvet.cli.render import JsonOption, LimitOption, OffsetOption
from toolvet.cli.runtime import confirm_or_refuse, local
from toolvet.services import tool_sets

toolset_app = command_group("Define, inspect and remove tool sets: allow-lists of tools served at /mcp/sets/NAME.")

NameArg = Annotated[str, typer.Argument(help="The set's name (lowercase letters, digits, '-').")]



def member(text: str) -> dict[str, Any]:
    """``SERVER`` (every offered tool of it) or ``SERVER/TOOL`` as a member; a server name holds no
    ``/``, so the tool is everything after the first one (tool names may hold ``/``)."""
    server, sep, tool = text.partition("/")
    return {"server": server, "tool": tool if sep else None}


@toolset_app.command("add")
def add(
    name: NameArg,
    member_: Annotated[
        list[str] | None,
        typer.Option(
            "--member", help="SERVER/TOOL, or SERVER for every offered tool of the server; repeatable."
        ),
    ] = None,
    title: Annotated[str | None, typer.Option("--title", help="A human-readable title.")] = None,
    description: Annotated[
        str | None, typer.Option("--description", help="What the set is for (its endpoint's instructions).")
    ] = None,
    replace: Annotated[
        bool, typer.Option("--replace", help="Replace the whole definition of an existing set of that name.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Define a set from its members (servers need not be registered yet)."""
    data = {"title": title, "description": description, "members": [member(m) for m in member_ or []]}
    with local() as (ctx, me):
        if replace:
            out, created = tool_sets.put_tool_set(ctx, me, name, data)
        else:
            out, created = tool_sets.create_tool_set(ctx, me, name, data), True
    verb = "added" if created else "replaced"
    render.show_change(out, as_json, f"{verb} tool set {out.name} ({len(out.members)} member(s)) at {out.endpoint}")


@toolset_app.command("list")
def list_(limit: LimitOption = 100, offset: OffsetOption = 0, as_json: JsonOption = False) -> None:
    """List tool sets by name."""
    with local() as (ctx, me):
        page = tool_sets.list_tool_sets(ctx, me, limit=limit, offset=offset)
    render.show_page(page, as_json, "tool sets", render.tool_set_row, render.TOOL_SET_HEADERS)


@toolset_app.command("show")
def show(name: NameArg, as_json: JsonOption = False) -> None:
    """Show one tool set and its members."""
    with local() as (ctx, me):
        out = tool_sets.get_tool_set(ctx, me, name)
    render.show_tool_set(out, as_json)


@toolset_app.command("remove")
def remove(
    name: NameArg,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Remove a tool set; its endpoint stops serving."""
    with local() as (ctx, me):
        if not yes:
            found = tool_sets.get_tool_set(ctx, me, name)
            confirm_or_refuse(f"Remove tool set {found.name} ({found.endpoint})?", yes)
        tool_sets.delete_tool_set(ctx, me, name)
    render.say(f"removed tool set {name}")
