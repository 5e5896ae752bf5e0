"""Catalog and decision benchmark: ``GET /api/v1/catalog`` against a no-policy baseline, and ``decide``.

In one run, on a fresh SQLite database (or ``--database-url``):

1. builds N offered tools over S servers with bulk inserts through the models (realistic definitions:
   schemas with a few properties, annotations, some ``_meta``, a quarter reviewed read-only, a few held
   or disabled), a scope with a disabled map of 200 tool names and 500 always-allow entries;
2. serves one app instance with uvicorn on loopback (in this process, on a thread). The benchmark adds a
   baseline route to that instance only (nothing in src/): same token check, the same offered rows and
   columns, dumped as plain JSON with no policy;
3. measures p50/p99 of the catalog (``view=all``) and of the baseline over HTTP with an httpx2 client and
   a consumer token, interleaved so both see the same machine;
4. measures in-process ``decide`` decisions per second (mode ``auto``, the most work, with the scope's
   ``AllowIndex``).

Targets: catalog p50 <= 1.5x the baseline's; >= 200,000 decisions/s. It prints figures, ratios and
PASS/FAIL (``--json`` for a JSON object) and exits 0 whether or not a target is met.

Run: ``python bench/catalog.py [--servers 200] [--tools 10000] [--requests 60] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Final

import httpx2
import uvicorn
from cryptography.fernet import Fernet
from fastapi import Depends, FastAPI, Response
from sqlalchemy import insert, select

from toolvet.api import create_app
from toolvet.api.deps import ContextDep, get_principal
from toolvet.db.models import AlwaysAllow, ScopeDisabled, Server, Tool, ToolReview, ToolSettings
from toolvet.db.types import utcnow
from toolvet.domain.fingerprint import fingerprint
from toolvet.domain.policy import AllowEntry, AllowIndex, PermissionMode, decide
from toolvet.schemas.tools import TokenCreate
from toolvet.services import tokens
from toolvet.services.auth import Principal, Role
from toolvet.services.catalog import OFFERED_QUERY
from toolvet.services.context import Context
from toolvet.services.policy_facts import facts_of
from toolvet.settings import Settings

ADMIN: Final = Principal(actor="bench:admin", role=Role.ADMIN)
SCOPE: Final = "bench-room"
TARGET_P50_RATIO: Final = 1.5
TARGET_DECISIONS: Final = 200_000.0
DISABLED_NAMES: Final = 200
ALLOW_ENTRIES: Final = 500


def definition(server: int, index: int) -> dict[str, Any]:
    """A tool as a real server might advertise it."""
    name = f"tool_{index:04d}"
    tool: dict[str, Any] = {
        "name": name,
        "title": f"Tool {index} of server {server}",
        "description": f"Does task {index} on server {server}: reads the named record, filters it by the "
        "given fields and returns a page of results with a cursor for the next page.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The record's identifier."},
                "fields": {"type": "array", "items": {"type": "string"}, "maxItems": 50},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
                "cursor": {"type": ["string", "null"], "default": None},
            },
            "required": ["id"],
            "additionalProperties": False,
        },
        "annotations": {
            "readOnlyHint": index % 2 == 0,
            "destructiveHint": index % 7 == 0,
            "openWorldHint": False,
        },
    }
    if index % 5 == 0:
        tool["outputSchema"] = {"type": "object", "properties": {"items": {"type": "array"}}}
    if index % 10 == 0:
        tool["_meta"] = {"ui": {"resourceUri": f"ui://s{server}/{name}", "visibility": ["model", "app"]}}
    if index % 25 == 0:
        tool["_meta"] = {"ui": {"resourceUri": f"ui://s{server}/{name}", "visibility": ["app"]}}
    return tool


def build(ctx: Context, servers: int, per_server: int) -> tuple[str, int]:
    """Fill the registry; answer a consumer token for the benchmark's scope and the offered count."""
    now = utcnow()
    with ctx.db.transaction() as session:
        session.execute(
            insert(Server),
            [
                {
                    "name": f"srv-{s:03d}",
                    "transport": "streamable-http",
                    "url": f"http://127.0.0.1:9/{s}/mcp",
                    "args": [],
                    "header_names": [],
                    "env_names": [],
                    "enabled": True,
                    "discovery": "manual",
                    "trust_annotations": s % 4 == 0,
                    "new_tools_enabled": True,
                    "hold_changed_tools": True,
                    "remove_stale": False,
                    "created_at": now,
                    "updated_at": now,
                }
                for s in range(servers)
            ],
        )
        ids = {name: id_ for name, id_ in session.execute(select(Server.name, Server.id)).all()}
        rows: list[dict[str, Any]] = []
        settings: list[dict[str, Any]] = []
        reviews: list[dict[str, Any]] = []
        for s in range(servers):
            for i in range(per_server):
                d = definition(s, i)
                fp = fingerprint(d)
                reviewed = fp if i % 4 == 0 else ("sha256:" + "0" * 64 if i % 97 == 1 else None)
                rows.append(
                    {
                        "server_id": ids[f"srv-{s:03d}"],
                        "name": d["name"],
                        "title": d["title"],
                        "description": d["description"],
                        "definition": d,
                        "advertised_read_only": d["annotations"]["readOnlyHint"],
                        "definition_fingerprint": fp,
                        "definition_digest": fp,
                        "first_seen_at": now,
                        "last_seen_at": now,
                        "findings": [],
                    }
                )
                settings.append({"enabled": i % 101 != 3, "writable": i % 4 != 0})
                reviews.append({"fingerprint": reviewed, "digest": reviewed, "reviewed_at": now,
                                "reviewed_by": "bench:admin"})
        tool_ids = session.scalars(insert(Tool).returning(Tool.id, sort_by_parameter_order=True), rows).all()
        session.execute(insert(ToolSettings), [{"tool_id": t, **v} for t, v in zip(tool_ids, settings, strict=True)])
        session.execute(insert(ToolReview), [{"tool_id": t, **r} for t, r in zip(tool_ids, reviews, strict=True)
                                             if r["fingerprint"] is not None])
        by_server: dict[str, list[str]] = {}
        for n in range(DISABLED_NAMES):
            by_server.setdefault(f"srv-{n % servers:03d}", []).append(f"tool_{(n * 7) % per_server:04d}")
        session.execute(
            insert(ScopeDisabled),
            [
                {"scope": SCOPE, "server_type": st, "tool_names": sorted(set(names))}
                for st, names in by_server.items()
            ],
        )
        allow = [row for row in rows[1 :: max(1, len(rows) // ALLOW_ENTRIES)]][:ALLOW_ENTRIES]
        names = {v: k for k, v in ids.items()}
        session.execute(
            insert(AlwaysAllow),
            [
                {
                    "scope": SCOPE,
                    "server_type": names[r["server_id"]],
                    "tool_name": r["name"],
                    "fingerprint": r["definition_fingerprint"],
                    "created_at": now,
                    "created_by": "bench",
                }
                for r in allow
            ],
        )
        offered = len(session.execute(OFFERED_QUERY).all())
    token = tokens.create_token(
        ctx, ADMIN, TokenCreate(role="consumer", name="bench", user="bench", scope=SCOPE)
    ).token
    return token, offered


def baseline_app(ctx: Context) -> FastAPI:
    """The real app, plus (on this instance only) the same rows as plain JSON, with no policy."""
    app = create_app(ctx)

    @app.get("/bench/rows", dependencies=[Depends(get_principal)])
    def rows(context: ContextDep) -> Response:
        with context.db.transaction() as session:
            result = session.execute(OFFERED_QUERY).all()
        # OFFERED_QUERY's columns (the policy facts', the definition among them), named by table and
        # column: taken from the query, so the baseline's rows stay the catalog's rows as the query grows.
        keys = tuple(f"{c.table.name}.{c.key}" for c in OFFERED_QUERY.selected_columns)
        return Response(
            json.dumps([dict(zip(keys, row, strict=True)) for row in result]), media_type="application/json"
        )

    return app


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Served:
    """uvicorn on a thread of this process, on loopback."""

    def __init__(self, app: FastAPI) -> None:
        self.port = _free_port()
        self.server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", access_log=False)
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.05)
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure_http(base: str, token: str, requests: int) -> dict[str, dict[str, float]]:
    """Interleaved timings (ms) of the catalog and the baseline, after two warm-up rounds."""
    times: dict[str, list[float]] = {"catalog": [], "baseline": []}
    paths = {"catalog": f"/api/v1/catalog?scope={SCOPE}&view=all", "baseline": "/bench/rows"}
    sizes: dict[str, int] = {}
    with httpx2.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=60) as client:
        for round_ in range(requests + 2):
            for kind, path in paths.items():
                started = time.perf_counter()
                response = client.get(path)
                elapsed = (time.perf_counter() - started) * 1000
                response.raise_for_status()
                sizes[kind] = len(response.content)
                if round_ >= 2:
                    times[kind].append(elapsed)
    return {
        kind: {
            "p50_ms": statistics.median(v),
            "p99_ms": percentile(v, 0.99),
            "bytes": sizes[kind],
            "requests": len(v),
        }
        for kind, v in times.items()
    }


def measure_decide(ctx: Context, seconds: float = 2.0) -> float:
    """``auto`` decisions per second over the registry's offered tools with the scope's index."""
    with ctx.db.transaction() as session:
        rows = session.execute(OFFERED_QUERY).all()
        entries = session.execute(
            select(AlwaysAllow.server_type, AlwaysAllow.tool_name, AlwaysAllow.fingerprint).where(
                AlwaysAllow.scope == SCOPE
            )
        ).all()
    index = AllowIndex(AllowEntry(*e) for e in entries)
    # Every other server trusts annotations, so rule 4 is weighed too.
    facts = [replace(f, trust_annotations=bool(len(f.server_type) % 2)) for f in map(facts_of, rows)]
    mode = PermissionMode.AUTO
    count, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        for tool in facts:
            decide(mode, tool, disabled=False, always_allow=index)
        count += len(facts)
    return count / (time.perf_counter() - started)


@dataclass
class Result:
    tools: int
    offered: int
    catalog: dict[str, float]
    baseline: dict[str, float]
    p50_ratio: float
    decisions_per_second: float
    catalog_pass: bool
    decide_pass: bool


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=200)
    parser.add_argument("--tools", type=int, default=10_000, help="Total tools over all servers.")
    parser.add_argument("--requests", type=int, default=60, help="Timed requests per route (>= 50).")
    parser.add_argument("--database-url", default=None, help="Default: a fresh SQLite file.")
    parser.add_argument("--json", action="store_true", dest="as_json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="toolvet-bench-") as home:
        settings = Settings(
            home=Path(home),
            database_url=args.database_url or f"sqlite:///{home}/bench.sqlite3",
            secret_key=Fernet.generate_key().decode(),
        )
        ctx = Context.open(settings)
        try:
            token, offered = build(ctx, args.servers, args.tools // args.servers)
            with Served(baseline_app(ctx)) as base:
                http = measure_http(base, token, args.requests)
            rate = measure_decide(ctx)
        finally:
            ctx.close()
    ratio = http["catalog"]["p50_ms"] / http["baseline"]["p50_ms"]
    result = Result(
        tools=args.tools,
        offered=offered,
        catalog=http["catalog"],
        baseline=http["baseline"],
        p50_ratio=ratio,
        decisions_per_second=rate,
        catalog_pass=ratio <= TARGET_P50_RATIO,
        decide_pass=rate >= TARGET_DECISIONS,
    )
    if args.as_json:
        print(json.dumps(asdict(result), indent=2))
        return 0
    verdict = {True: "PASS", False: "FAIL"}
    print(
        f"{args.tools} tools over {args.servers} servers, {offered} offered; scope {SCOPE}: "
        f"{DISABLED_NAMES} disabled names, {ALLOW_ENTRIES} always-allow entries"
    )
    print(f"{'':24}{'p50 ms':>10}{'p99 ms':>10}{'bytes':>12}")
    for kind in ("baseline", "catalog"):
        f = http[kind]
        print(f"{kind:24}{f['p50_ms']:>10.1f}{f['p99_ms']:>10.1f}{f['bytes']:>12}")
    print(
        f"catalog p50 / baseline p50 = {ratio:.2f} (target <= {TARGET_P50_RATIO})  "
        f"{verdict[result.catalog_pass]}"
    )
    print(
        f"decide: {rate:,.0f} decisions/s (target >= {TARGET_DECISIONS:,.0f})  {verdict[result.decide_pass]}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
