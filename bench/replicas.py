"""Replicas benchmark: gateway calls/s through one replica and through two, behind one round-robin
proxy, in one run; CPU per call per replica; failover time after ``kill -9``.

Set-up, all on 127.0.0.1: a throwaway PostgreSQL cluster; the SDK ``MCPServer`` with one ``echo``
tool of ``bench/gateway.py`` in its own process; two ``toolvet serve`` processes on the database
(the tool reviewed, the bench user in permission mode ``allow``); two proxies of ``tests/fleet.py``
(starlette + httpx2, streamed), each in its own process: one in front of replica A alone, one in
front of A and B. The load is the SDK's ``Client`` (2026-07-28, one shared ``httpx2.AsyncClient``)
calling ``up_echo`` at concurrency 32, in ``--rounds`` interleaved rounds (the side going first
alternating), so both sides pay the same proxy and meet the same drift in the machine's speed.

It prints calls/s of each side and their ratio (two / one), each replica's CPU time per call it
served (its process's user+system time over the block, over the calls the proxy sent it: all of
them through one replica, half of them each through two), and the failover: calls at concurrency 4
through the two-replica proxy while replica B is killed with SIGKILL; how many calls failed, and the
time from the kill until the last failure and until the first call that succeeded after it.

On a two-core machine the client, both proxies, both replicas, PostgreSQL and the upstream share two
cores: the ratio is bounded by them, which the CPU per call shows (capacity per core).

Run: ``python bench/replicas.py [--calls 2000] [--rounds 4] [--json]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
import psutil
from cryptography.fernet import Fernet
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.fleet, tests.pg
sys.path.insert(0, str(ROOT / "bench"))  # gateway (this directory's gateway benchmark)

from tests.conftest import new_pg_database  # noqa: E402
from tests.fleet import replicas  # noqa: E402
from tests.pg import throwaway_cluster  # noqa: E402

import gateway as gateway_bench  # noqa: E402
from toolvet.schemas.tools import TokenCreate  # noqa: E402
from toolvet.services import discovery, preferences, review, servers, tokens  # noqa: E402
from toolvet.services.auth import Principal, Role  # noqa: E402
from toolvet.services.context import Context  # noqa: E402
from toolvet.settings import Settings  # noqa: E402

ADMIN = Principal(actor="bench:admin", role=Role.ADMIN)
CONCURRENCY = 32
PROXY = """
import sys, uvicorn
sys.path.insert(0, sys.argv[1])
from tests.fleet import RoundRobin
uvicorn.run(RoundRobin(sys.argv[3:]).app, host="127.0.0.1", port=int(sys.argv[2]), log_level="critical")
"""


def cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


async def load(one_url: str, two_url: str, auth: dict[str, str], calls: int, rounds: int,
               processes: list[psutil.Process]) -> dict[str, Any]:
    blocks: dict[str, list[tuple[float, int, list[float]]]] = {"one": [], "two": []}
    async with gateway_bench.caller(one_url, auth, "up_echo") as one, \
            gateway_bench.caller(two_url, auth, "up_echo") as two:
        sides: dict[str, Callable[[], Awaitable[None]]] = {"one": one, "two": two}
        for number in range(rounds):
            for side in (("one", "two") if number % 2 == 0 else ("two", "one")):
                before = [cpu(p) for p in processes]
                _, elapsed = await gateway_bench.measure(sides[side], calls // rounds, CONCURRENCY)
                spent = [cpu(p) - b for p, b in zip(processes, before, strict=True)]
                blocks[side].append((elapsed, calls // rounds, spent))
    report: dict[str, Any] = {}
    for side, done in blocks.items():
        elapsed = sum(e for e, _, _ in done)
        total = sum(n for _, n, _ in done)
        spent = [sum(s[i] for _, _, s in done) for i in range(len(processes))]
        served = [total, 0] if side == "one" else [total / 2, total / 2]
        report[side] = {"calls_per_s": total / elapsed,
                        "cpu_ms_per_call": [1000 * s / n if n else None for s, n in zip(spent, served, strict=True)],
                        "rounds": [n / e for e, n, _ in done]}
    report["ratio"] = report["two"]["calls_per_s"] / report["one"]["calls_per_s"]
    return report


async def failover(two_url: str, auth: dict[str, str], victim: Any) -> dict[str, Any]:
    """Calls at concurrency 4 through both replicas while one of them is killed. Each worker has its
    own client; a client that breaks (its stream was cut) is replaced, as a real client reconnects."""
    outcomes: list[tuple[float, float, bool]] = []
    killed_at = 0.0

    def running() -> bool:
        return not killed_at or time.perf_counter() - killed_at < 5.0

    async def worker() -> None:
        while running():
            start = time.perf_counter()
            try:
                async with (httpx2.AsyncClient(headers=auth, timeout=60) as http,
                            Client(streamable_http_client(two_url, http_client=http), mode="2026-07-28",
                                   cache=None) as client):
                    while running():
                        start = time.perf_counter()
                        result = await client.call_tool("up_echo", {"text": "hello"})
                        outcomes.append((start, time.perf_counter(), not result.is_error))
            except Exception:
                outcomes.append((start, time.perf_counter(), False))

    async with anyio.create_task_group() as tg:
        for _ in range(4):
            tg.start_soon(worker)
        await anyio.sleep(3.0)  # steady load before the kill (benchmark pacing, not synchronisation)
        killed_at = time.perf_counter()
        victim.kill()
    failed = [o for o in outcomes if not o[2] and o[1] >= killed_at]
    after = [o for o in outcomes if o[2] and o[0] >= killed_at]
    return {"failed_calls": len(failed),
            "last_failure_s": max((o[1] for o in failed), default=killed_at) - killed_at,
            "first_success_after_kill_s": (min(o[1] for o in after) - killed_at) if after else None,
            "calls_after_kill": len(after)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per side (default 2000)")
    parser.add_argument("--rounds", type=int, default=4, help="interleaved blocks per side (default 4)")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, throwaway_cluster() as base, contextlib.ExitStack() as stack:
        home = Path(tmp)
        database_url = new_pg_database(base)
        key = Fernet.generate_key().decode()
        up_port = gateway_bench.free_port()
        upstream = f"http://127.0.0.1:{up_port}/mcp"
        stack.enter_context(gateway_bench.process([sys.executable, "-c", gateway_bench.UPSTREAM, str(up_port)],
                                                  dict(os.environ)))
        gateway_bench.wait_http(upstream)
        ctx = Context.open(Settings(home=home, database_url=database_url, secret_key=key))
        try:
            servers.create_server(ctx, ADMIN, {"name": "up", "url": upstream})
            anyio.run(discovery.discover, ctx, ADMIN, ["up"])
            review.review_tool(ctx, ADMIN, "up", "echo")
            preferences.set_permission_mode(ctx, ADMIN, "bench", "allow")
            token = tokens.create_token(ctx, ADMIN, TokenCreate(role="consumer", user="bench", name="bench")).token
        finally:
            ctx.close()
        env = {"TOOLVET_DATABASE_URL": database_url, "TOOLVET_SECRET_KEY": key, "TOOLVET_HOME": str(home),
               "TOOLVET_DISCOVERY_INTERVAL": "3600"}
        fleet = stack.enter_context(replicas(env, home, 2))
        one_port, two_port = gateway_bench.free_port(), gateway_bench.free_port()
        for port, behind in ((one_port, [fleet[0].url]), (two_port, [r.url for r in fleet])):
            stack.enter_context(gateway_bench.process(
                [sys.executable, "-c", PROXY, str(ROOT), str(port), *behind], dict(os.environ)))
            gateway_bench.wait_http(f"http://127.0.0.1:{port}/")
        auth = {"Authorization": f"Bearer {token}"}
        processes = [psutil.Process(r.process.pid) for r in fleet]
        report = anyio.run(load, f"http://127.0.0.1:{one_port}/mcp", f"http://127.0.0.1:{two_port}/mcp", auth,
                           options.calls, options.rounds, processes)
        report["failover"] = anyio.run(failover, f"http://127.0.0.1:{two_port}/mcp", auth, fleet[1])
    if options.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"toolvet replicas benchmark: {options.calls} calls per side at concurrency {CONCURRENCY}, "
          f"{options.rounds} interleaved rounds, PostgreSQL, 2026-07-28 client, round-robin proxy")
    for side, label in (("one", "one replica"), ("two", "two replicas")):
        row = report[side]
        per = ", ".join(f"{'AB'[i]} {v:.2f}" for i, v in enumerate(row["cpu_ms_per_call"]) if v is not None)
        rounds = " ".join(f"{value:.0f}" for value in row["rounds"])
        print(f"{label:13} {row['calls_per_s']:7.0f} calls/s (rounds: {rounds}); CPU ms per call: {per}")
    print(f"calls/s ratio, two replicas / one: {report['ratio']:.2f}x")
    fo = report["failover"]
    first = fo["first_success_after_kill_s"]
    print(f"failover after kill -9 of B: {fo['failed_calls']} calls failed, the last {fo['last_failure_s']:.2f} s "
          f"after the kill; first success {first:.2f} s after it; {fo['calls_after_kill']} calls succeeded "
          "in the 5 s after it" if first is not None else "failover: no call succeeded after the kill")
    return 0


if __name__ == "__main__":
    sys.exit(main())
