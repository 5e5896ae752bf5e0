"""``toolvet discover [NAME…]``: list servers' tools now (docs/discovery.md)."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import anyio
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from toolvet.cli import render
from toolvet.cli.render import JsonOption
from toolvet.cli.runtime import local
from toolvet.schemas.tools import DiscoveryRunOut

# toolvet.services.discovery imports the MCP SDK (over a second to import): it is imported inside the
# command, so that every other command starts fast.



def run_line(run: DiscoveryRunOut) -> str:
    counts = f"+{run.added} ~{run.changed} ={run.unchanged} -{run.retired} !{run.rejected}"
    tail = f": {run.error}" if run.error else ""
    return f"{run.server}: {run.status} ({counts}){tail}"


def discover(
    names: Annotated[list[str] | None, typer.Argument(
        metavar="[NAME]...", help="Servers to list; none means every enabled auto server.")] = None,
    as_json: JsonOption = False,
) -> None:
    """List servers' tools now and reconcile them; exit 1 when any pass failed."""
    from toolvet.services import discovery

    with local() as (ctx, _admin):
        plans = discovery.plan(ctx, names)
        if sys.stdout.isatty() and not as_json:
            with Progress(TextColumn("discovering"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                          TextColumn("{task.description}"), console=render.console()) as bar:
                task = bar.add_task("", total=len(plans))

                def advance(run: DiscoveryRunOut) -> None:
                    bar.update(task, advance=1, description=run.server)
                    if run.status != "ok":
                        bar.console.print(render.cell(run_line(run)))

                runs = anyio.run(_passes, ctx, plans, advance)
        else:
            runs = anyio.run(_passes, ctx, plans, None if as_json else lambda run: render.say(run_line(run)))
    if as_json:
        render.emit_json(runs)
    elif sys.stdout.isatty():
        render.show_rows(runs, False, lambda r: (r.server, r.status, r.added, r.changed, r.unchanged, r.retired,
                                                   r.rejected, r.error or ""),
                         ("server", "status", "added", "changed", "unchanged", "retired", "rejected", "error"))
    if any(run.status == "failed" for run in runs):
        raise typer.Exit(1)


async def _passes(ctx: Any, plans: list[Any], on_run: Any) -> list[DiscoveryRunOut]:
    from toolvet.services import discovery

    return await discovery.run_passes(ctx, plans, trigger="manual", on_run=on_run)
