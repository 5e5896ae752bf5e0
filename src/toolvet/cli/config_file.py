"""``toolvet apply -f FILE`` and ``toolvet export``: the registry as a file (``services.config_apply``,
``services.config_export``; the format is in docs/config.md)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from toolvet.cli import render
from toolvet.cli.render import JsonOption
from toolvet.cli.runtime import local
from toolvet.schemas.config_file import ApplyPlan, ChangeOut
from toolvet.services import config_apply, config_export


def _value(value: Any) -> str:
    return "—" if value is None else json.dumps(value, ensure_ascii=False)


def line(change: ChangeOut) -> str:
    """One plan line, as a diff: ``+`` added, ``-`` removed, ``~`` changed, ``!`` not possible yet."""
    text = f"{change.op} {change.object}"
    if change.field:
        text += f" {change.field}"
    if change.op == "~":
        text += f": {_value(change.before)} -> {_value(change.after)}"
    elif change.op == "+" and change.after is not None:
        text += f": {_value(change.after)}"
    elif change.op == "-" and change.before is not None and change.field:
        text += f": {_value(change.before)}"
    if change.note:
        text += f" ({change.note})"
    return text


def _show(plan: ApplyPlan, as_json: bool) -> None:
    if as_json:
        render.emit_json(plan)
        return
    for change in plan.changes:
        render.say(line(change))
    done = sum(1 for c in plan.changes if c.op != "!")
    waiting = len(plan.changes) - done
    later = f"; {waiting} wait for discovery" if waiting else ""
    if not done:
        render.say(f"nothing to change: the registry matches the file{later}")
    else:
        render.say(f"{'applied' if plan.applied else 'would apply'} {done} change(s){later}")


def apply(
    file: Annotated[Path, typer.Option("--file", "-f", help="The file to apply (YAML or JSON); - for stdin.")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan as a diff; change nothing.")] = False,
    prune: Annotated[
        bool, typer.Option("--prune", help="Also remove servers (with their tools) and tool sets the file leaves out.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Make the registry match a file: servers and their tools' settings, tool sets, scopes' disabled
    maps and always-allow lists, users' modes. Applying it again changes nothing."""
    if str(file) == "-":
        config, base = config_apply.parse_config(sys.stdin.read(), "stdin"), Path.cwd()
    else:
        config, base = config_apply.read_config(file), file.resolve().parent
    with local() as (ctx, me):
        plan = config_apply.apply_config(ctx, me, config, environ=os.environ, base=base, dry_run=dry_run, prune=prune)
    _show(plan, as_json)


def export(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file (default: standard output).")
    ] = None,
) -> None:
    """Write the registry in the format toolvet apply reads; secrets only as ${VAR} references."""
    with local() as (ctx, me):
        text = config_export.to_yaml(config_export.export_config(ctx, me))
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        render.say(f"wrote {output}")
