"""Gateway benchmark: one upstream tool called directly and through toolvet's ``/mcp``, in one run.

Two subprocesses on 127.0.0.1: an SDK ``MCPServer`` with one ``echo`` tool (streamable HTTP), and
``toolvet serve`` on a temporary SQLite database where that server is registered, discovered and its
tool reviewed, with the bench user in permission mode ``allow`` (calls run without a dialog). Both are
called with the SDK's own ``Client`` (2026-07-28, one shared ``httpx2.AsyncClient`` each), at
concurrency 1 and 16. The two sides run interleaved: ``--rounds`` rounds, each a block of calls per
side and concurrency, the side going first alternating, so a change in the machine's speed during the
run (frequent on a shared two-core machine) reaches both alike. It prints p50, p99 and calls/s of each
side over all its blocks, each round's ratios, and the overall ratios beside their targets: p50 via
toolvet <= 2.0x direct at concurrency 1; calls/s via toolvet >= 0.5x direct at concurrency 16. Where
``/proc`` is there it also prints the CPU time (user + system, all threads) the ``toolvet serve`` process
spent per call over toolvet's blocks, beside the HTTP upstream's per call over the direct blocks: steadier
than wall time on a shared machine.

``--transport stdio`` runs the same comparison over stdio: the upstream is the same server run as a
child process, called directly by the SDK's ``Client`` over its own stdio pipe and, through toolvet,
by toolvet's pooled stdio session (one process, owned by the pool; the client reaches toolvet over
streamable HTTP as before). The targets are those of the HTTP run; they are printed for reference.

Run: ``python bench/gateway.py [--transport http|stdio] [--calls 400] [--rounds 5] [--json]``. Exits
non-zero only when something broke.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

UPSTREAM = """
import sys, uvicorn
from mcp.server.mcpserver import MCPServer
server = MCPServer("bench", log_level="WARNING")

@server.tool(description="Echoes its text.")
def echo(text: str) -> str:
    return text

if sys.argv[1] == "stdio":
    server.run("stdio")
else:
    uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_http(url: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1].split("/")[0])), 0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{url} did not start within {timeout} s")


@contextmanager
def process(args: list[str], env: dict[str, str]) -> Any:
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def toolvet(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "toolvet", *args], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"toolvet {' '.join(args)} failed: {done.stderr or done.stdout}")
    return done.stdout


async def measure(call: Callable[[], Awaitable[Any]], total: int, concurrency: int) -> tuple[list[float], float]:
    """Run ``total`` calls on ``concurrency`` workers; return each call's latency (s) and the elapsed time."""
    latencies: list[float] = []
    remaining = total

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            start = time.perf_counter()
            await call()
            latencies.append(time.perf_counter() - start)

    began = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker)
    return latencies, time.perf_counter() - began


def cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU time of process ``pid`` (all its threads), or None without ``/proc``."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def figures(latencies: list[float], elapsed: float) -> dict[str, float]:
    ordered = sorted(latencies)
    return {"p50_ms": statistics.median(ordered) * 1000,
            "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000,
            "calls_per_s": len(ordered) / elapsed}


@asynccontextmanager
async def caller(url: str | StdioServerParameters, headers: dict[str, str],
                 name: str) -> AsyncIterator[Callable[[], Awaitable[None]]]:
    """One SDK ``Client`` (2026-07-28) on one shared HTTP client, or over stdio to a child it starts;
    yields a function making one call."""
    limits = httpx2.Limits(max_connections=64, max_keepalive_connections=64)
    async with (
        httpx2.AsyncClient(headers=headers, limits=limits, timeout=60) as http,
        Client(url if isinstance(url, StdioServerParameters) else streamable_http_client(url, http_client=http),
               mode="2026-07-28", cache=None) as client,
    ):
        await client.list_tools()

        async def one() -> None:
            result = await client.call_tool(name, {"text": "hello"})
            if result.is_error:
                raise RuntimeError(f"{name} failed: {result.content}")

        await measure(one, 50, 4)  # warm up: connections, caches, the upstream session
        yield one


async def run_both(direct_url: str | StdioServerParameters, via_url: str, auth: dict[str, str], calls: int,
                   rounds: int, pids: dict[str, int | None]) -> dict[str, Any]:
    """Both sides, interleaved: each round runs a block of each side at each concurrency, the side that
    goes first alternating, so drift in the machine's speed during the run reaches both sides alike.
    ``pids``: the process serving each side, whose CPU time over that side's blocks is summed."""
    blocks: dict[tuple[str, str], list[tuple[list[float], float]]] = {}
    cpu: dict[tuple[str, str], float | None] = {}
    async with caller(direct_url, {}, "echo") as direct, caller(via_url, auth, "up_echo") as via:
        sides = {"direct": direct, "toolvet": via}
        for number in range(rounds):
            order = ("direct", "toolvet") if number % 2 == 0 else ("toolvet", "direct")
            for key, concurrency, total in (("c1", 1, calls), ("c16", 16, calls * 4)):
                for side in order:
                    before = cpu_seconds(pids[side])
                    blocks.setdefault((side, key), []).append(
                        await measure(sides[side], max(1, total // rounds), concurrency))
                    after = cpu_seconds(pids[side])
                    spent = None if before is None or after is None else after - before
                    so_far = cpu.get((side, key), 0.0)
                    cpu[side, key] = None if spent is None or so_far is None else so_far + spent
    report: dict[str, Any] = {}
    for (side, key), done in blocks.items():
        pooled = [latency for latencies, _ in done for latency in latencies]
        report.setdefault(side, {})[key] = figures(pooled, sum(elapsed for _, elapsed in done))
        report[side][key]["rounds"] = [figures(latencies, elapsed) for latencies, elapsed in done]
        spent = cpu.get((side, key))
        report[side][key]["cpu_ms_per_call"] = None if spent is None else spent * 1000 / len(pooled)
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400, help="calls at concurrency 1 (x4 at 16)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved blocks of each side (default 5)")
    parser.add_argument("--transport", choices=["http", "stdio"], default="http",
                        help="how the upstream is reached (default http)")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as home, contextlib.ExitStack() as stack:
        env = {**os.environ, "TOOLVET_HOME": home, "TOOLVET_DATABASE_URL": f"sqlite:///{Path(home)}/bench.sqlite3"}
        env.pop("TOOLVET_SECRET_KEY", None)
        up_port, tv_port = free_port(), free_port()
        upstream: str | StdioServerParameters
        pids: dict[str, int | None] = {"direct": None, "toolvet": None}
        if options.transport == "stdio":
            script = Path(home) / "upstream.py"
            script.write_text(UPSTREAM)
            upstream = StdioServerParameters(command=sys.executable, args=[str(script), "stdio"])
            registration = ["--command", sys.executable, "--arg", str(script), "--arg", "stdio"]
        else:
            upstream = f"http://127.0.0.1:{up_port}/mcp"
            pids["direct"] = stack.enter_context(process([sys.executable, "-c", UPSTREAM, str(up_port)], env)).pid
            wait_http(upstream)
            registration = ["--url", upstream]
        toolvet(env, "db", "upgrade")
        toolvet(env, "server", "add", "up", *registration)
        toolvet(env, "discover", "up")
        toolvet(env, "review", "up/echo")
        token = json.loads(toolvet(env, "token", "create", "--role", "consumer", "--user", "bench",
                                   "--json"))["token"]
        with process([sys.executable, "-m", "toolvet", "serve", "--port", str(tv_port)], env) as serving:
            pids["toolvet"] = serving.pid
            base = f"http://127.0.0.1:{tv_port}"
            wait_http(base)
            auth = {"Authorization": f"Bearer {token}"}
            put = httpx2.put(f"{base}/api/v1/users/bench/permission-mode", json={"mode": "allow"}, headers=auth)
            put.raise_for_status()
            both = anyio.run(run_both, upstream, f"{base}/mcp", auth, options.calls, options.rounds, pids)
    direct, via = both["direct"], both["toolvet"]
    ratios = {"p50_c1": via["c1"]["p50_ms"] / direct["c1"]["p50_ms"],
              "calls_per_s_c16": via["c16"]["calls_per_s"] / direct["c16"]["calls_per_s"]}
    per_round = {
        "p50_c1": [v["p50_ms"] / d["p50_ms"] for v, d in zip(via["c1"]["rounds"], direct["c1"]["rounds"], strict=True)],
        "calls_per_s_c16": [v["calls_per_s"] / d["calls_per_s"]
                            for v, d in zip(via["c16"]["rounds"], direct["c16"]["rounds"], strict=True)],
    }
    report = {"direct": direct, "toolvet": via, "ratios": ratios, "ratios_per_round": per_round,
              "transport": options.transport, "targets": {"p50_c1": "<= 2.0", "calls_per_s_c16": ">= 0.5"}}
    if options.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"upstream over {options.transport}")
    print(f"{'':10} {'conc':>4} {'p50 ms':>8} {'p99 ms':>8} {'calls/s':>9}")
    for label, side in (("direct", direct), ("toolvet", via)):
        for key, conc in (("c1", 1), ("c16", 16)):
            row = side[key]
            print(f"{label:10} {conc:>4} {row['p50_ms']:8.2f} {row['p99_ms']:8.2f} {row['calls_per_s']:9.0f}")
    for key, conc in (("c1", 1), ("c16", 16)):
        serve_cpu, up_cpu = via[key]["cpu_ms_per_call"], direct[key]["cpu_ms_per_call"]
        if serve_cpu is not None:
            upstream_text = "" if up_cpu is None else f"; the upstream's per direct call {up_cpu:.3f} ms"
            print(f"CPU per call at c{conc}: toolvet serve {serve_cpu:.3f} ms{upstream_text}")
    for key, label in (("p50_c1", "p50 ratio per round, c1:      "),
                       ("calls_per_s_c16", "calls/s ratio per round, c16: ")):
        print(label + " ".join(f"{value:.2f}x" for value in per_round[key]))
    print(f"p50 ratio at concurrency 1:     {ratios['p50_c1']:.2f}x (target <= 2.0x): "
          f"{'met' if ratios['p50_c1'] <= 2.0 else 'MISSED'}")
    print(f"calls/s ratio at concurrency 16: {ratios['calls_per_s_c16']:.2f}x (target >= 0.5x): "
          f"{'met' if ratios['calls_per_s_c16'] >= 0.5 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
