"""``toolvet import FILE``: register the servers of an MCP client's config file or a registry
``server.json`` (``services.config_import``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from toolvet.cli import render
from toolvet.cli.render import JsonOption
from toolvet.cli.runtime import local
from toolvet.schemas.imports import ImportItem, ImportPlan
from toolvet.services import config_import

HEADERS = ("NAME", "FROM", "TRANSPORT", "ENDPOINT", "SECRETS", "ACTION")


def _row(item: ImportItem) -> Sequence[Any]:
    endpoint = item.url or " ".join([item.command or "", *item.args]).strip() or None
    secrets = ", ".join([*item.header_names, *item.env_names]) or None
    action = item.action.value + (f": {item.reason}" if item.reason else "")
    return item.name, item.source if item.renamed else "", item.transport, endpoint, secrets, action


def _show(plan: ImportPlan, as_json: bool) -> None:
    if as_json:
        render.emit_json(plan)
        return
    render.show_rows(plan.items, False, _row, HEADERS)
    for item in plan.items:
        for note in item.notes:
            render.say(f"note: {item.name}: {note}")
    created = sum(1 for item in plan.items if item.action == "create")
    verb = "registered" if plan.applied else "would register"
    render.say(f"{verb} {created} of {len(plan.items)} server(s) from {plan.file} ({plan.kind})")


def import_(
    file: Annotated[Path, typer.Argument(help="claude_desktop_config.json, .mcp.json, mcp.json or server.json.")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would be registered; change nothing.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Register the servers of an MCP client's config file (Claude Desktop, Claude Code, Cursor, VS Code)
    or of the MCP registry's server.json. Header and env values are stored encrypted and never shown;
    ${VAR} references in the file are read from the environment."""
    with local() as (ctx, me):
        if dry_run:
            plan = config_import.plan_import(ctx, me, file, os.environ)
        else:
            plan = config_import.run_import(ctx, me, file, os.environ)
    _show(plan, as_json)
