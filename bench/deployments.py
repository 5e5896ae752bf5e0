"""Deployments benchmark: naming the software of many servers, one at a time, beside a plain edit of each.

An operator who names the software of servers already discovered (``toolvet apply`` of a file that gives
each deployment its ``software``, or ``toolvet server set NAME --software S`` per server) changes one
server at a time, and each change works out the findings between that server and the other servers
running its old and new software again (``services.shadowing.compare_again``). This measures, on the
farm of ``bench/discovery.py`` (N servers x M tools, one vendor's server deployed N times, names shared
as such deployments share them, discovered once):

1. baseline: each server's title changed, one ``services.servers.update_server`` each (an edit that
   compares nothing);
2. naming: each server's software set to ``farm``, one update each, in order (so N servers end up
   running it);
3. un-naming: one server's software cleared (its tools compared with the N - 1 others' again).

It prints each phase's total, the median update, the medians of the first and last quarter of step 2
(an update that read every server running the software would grow with their number), and the median
of step 2 over the median plain edit. It checks what step 2 left: no ``tool-duplicate`` between two
servers running ``farm``, and the server of step 3 has them again. Exits non-zero only when something
broke.

Run: ``python bench/deployments.py [--servers 200] [--tools 50] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from sqlalchemy import select

from discovery import ADMIN, Config, open_registry, register_servers, running_farm
from toolvet.db.models import Server, Tool
from toolvet.services import discovery, servers
from toolvet.services.context import Context


def _timed_updates(ctx: Context, names: list[str], patch: Any) -> list[float]:
    took = []
    for name in names:
        began = time.perf_counter()
        servers.update_server(ctx, ADMIN, name, patch(name))
        took.append(time.perf_counter() - began)
    return took


def _duplicates(ctx: Context, *, among_farm: bool) -> int:
    """How many tool-duplicate findings the registry holds: all, or only those between two servers running ``farm``."""
    with ctx.db.transaction() as session:
        members = set(session.scalars(select(Server.name).where(Server.software == "farm")))
        rows = session.execute(select(Server.name, Tool.findings).join(Tool, Tool.server_id == Server.id)).all()
    return sum(1 for server, findings in rows for f in findings or [] if f.get("code") == "tool-duplicate"
               and (not among_farm or (server in members and f.get("other_server") in members)))


async def measure(config: Config) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="toolvet-bench-") as tmp, running_farm(config, Path(tmp)) as farm:
        ctx = await anyio.to_thread.run_sync(open_registry, config, Path(tmp) / "home")
        try:
            await anyio.to_thread.run_sync(register_servers, ctx, config, farm.base)
            runs = await discovery.discover(ctx, ADMIN)
            if any(r.status != "ok" for r in runs):
                raise RuntimeError(f"discovery failed: {[r.error for r in runs if r.status != 'ok'][:3]}")
            names = [f"farm-{i:05d}" for i in range(config.servers)]
            before = await anyio.to_thread.run_sync(partial(_duplicates, ctx, among_farm=False))
            plain = await anyio.to_thread.run_sync(_timed_updates, ctx, names, lambda n: {"title": f"{n} (edited)"})
            named = await anyio.to_thread.run_sync(_timed_updates, ctx, names, lambda n: {"software": "farm"})
            inside = await anyio.to_thread.run_sync(partial(_duplicates, ctx, among_farm=True))
            cleared = await anyio.to_thread.run_sync(_timed_updates, ctx, names[:1], lambda n: {"software": None})
            with ctx.db.transaction() as session:
                left = session.scalars(select(Tool.findings).join(Server).where(Server.name == names[0])).all()
            back = sum(1 for findings in left for f in findings or [] if f.get("code") == "tool-duplicate")
        finally:
            ctx.close()
    if inside or not before or not back:
        raise RuntimeError(f"findings not as expected: {before} duplicates before, {inside} between servers "
                           f"running farm after naming, {back} on the server un-named")
    quarter = max(1, len(named) // 4)
    return {
        "servers": config.servers, "tools": config.tools, "duplicates_before": before,
        "duplicates_back_when_unnamed": back,
        "plain_total_s": sum(plain), "plain_median_ms": statistics.median(plain) * 1000,
        "naming_total_s": sum(named), "naming_median_ms": statistics.median(named) * 1000,
        "naming_first_quarter_ms": statistics.median(named[:quarter]) * 1000,
        "naming_last_quarter_ms": statistics.median(named[-quarter:]) * 1000,
        "unnaming_ms": cleared[0] * 1000,
        "naming_over_plain": statistics.median(named) / statistics.median(plain),
    }


def render(r: dict[str, Any]) -> str:
    return "\n".join([
        f"toolvet deployments benchmark: {r['servers']} servers x {r['tools']} tools (one software deployed, "
        f"{r['duplicates_before']} tool-duplicate findings among them), each one's software named in turn", "",
        f"{'phase':<34}{'total':>10}{'median':>12}",
        f"{'baseline: a title edit each':<34}{r['plain_total_s']:>8.2f} s{r['plain_median_ms']:>9.1f} ms",
        f"{'naming the software, one each':<34}{r['naming_total_s']:>8.2f} s{r['naming_median_ms']:>9.1f} ms",
        f"{'  first quarter of them':<34}{'':>10}{r['naming_first_quarter_ms']:>9.1f} ms",
        f"{'  last quarter of them':<34}{'':>10}{r['naming_last_quarter_ms']:>9.1f} ms",
        f"{'software cleared on one server':<34}{'':>10}{r['unnaming_ms']:>9.1f} ms",
        "", f"median naming / median title edit: {r['naming_over_plain']:.2f}x; "
        f"the server cleared has {r['duplicates_back_when_unnamed']} tool-duplicate findings again",
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--servers", type=int, default=200)
    parser.add_argument("--tools", type=int, default=50)
    parser.add_argument("--json", dest="as_json", action="store_true")
    args = parser.parse_args(argv)
    if args.servers < 2 or args.tools < 1:
        parser.error("--servers must be at least 2 and --tools at least 1")
    config = Config(args.servers, args.tools, 50, 16, None, args.as_json)
    try:
        result = anyio.run(measure, config)
    except RuntimeError as exc:
        print(f"deployments benchmark broke: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2) if args.as_json else render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
