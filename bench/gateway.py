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

``--baseline SRC`` adds a third side: a second ``toolvet serve`` run from another copy of toolvet's
code (``PYTHONPATH=SRC``, e.g. an unchanged worktree's ``src``; ``--baseline-hide MODULE`` makes an
installed package unimportable to it), on its own database, in front of the same upstream, its blocks
interleaved with the other two. It prints that side's figures too and toolvet's CPU per call over the
baseline's: two versions compared in the same minutes, on the same upstream, however the machine's
speed drifts. Give it a number of ``--rounds`` divisible by three (each side then goes first equally
often): with five, the same code on both sides read about 5 % apart.

``--transport stdio`` runs the same comparison over stdio: the upstream is the same server run as a
child process, called directly by the SDK's ``Client`` over its own stdio pipe and, through toolvet,
by toolvet's pooled stdio session (one process, owned by the pool; the client reaches toolvet over
streamable HTTP as before). The targets are those of the HTTP run; they are printed for reference.

Run: ``python bench/gateway.py [--transport http|stdio] [--calls 400] [--rounds 5] [--baseline SRC]
[--baseline-hide MODULE] [--json]``. Exits non-zero only when something broke.
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


async def run_both(direct_url: str | StdioServerParameters, vias: dict[str, str], auth: dict[str, dict[str, str]],
                   calls: int, rounds: int, pids: dict[str, int | None]) -> dict[str, Any]:
    """The direct side and each toolvet side (``vias``: side -> its /mcp URL, ``auth``: side -> its
    headers), interleaved: each round runs a block of each side at each concurrency, the side that goes
    first rotating, so drift in the machine's speed during the run reaches every side alike.
    ``pids``: the process serving each side, whose CPU time over that side's blocks is summed."""
    blocks: dict[tuple[str, str], list[tuple[list[float], float]]] = {}
    cpu: dict[tuple[str, str], float | None] = {}
    async with contextlib.AsyncExitStack() as stack:
        sides = {"direct": await stack.enter_async_context(caller(direct_url, {}, "echo"))}
        for side, url in vias.items():
            sides[side] = await stack.enter_async_context(caller(url, auth[side], "up_echo"))
        names = list(sides)
        for number in range(rounds):
            shift = number % len(names)
            order = names[shift:] + names[:shift]
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


def baseline_env(env: dict[str, str], home: Path, source: str, hidden: list[str]) -> dict[str, str]:
    """The environment of the baseline's toolvet: its own home and database, ``source`` first on the path,
    and each module in ``hidden`` shadowed by one that refuses to import (uvicorn's "auto" then falls
    back as it would without the package)."""
    base_home = home / "baseline"
    shim = home / "hidden"
    for module in hidden:
        (shim / module).mkdir(parents=True, exist_ok=True)
        (shim / module / "__init__.py").write_text(f"raise ImportError('{module} is hidden from the baseline')\n")
    base_home.mkdir()
    path = os.pathsep.join([*([str(shim)] if hidden else []), str(Path(source).resolve())])
    return {**env, "TOOLVET_HOME": str(base_home), "TOOLVET_DATABASE_URL": f"sqlite:///{base_home}/bench.sqlite3",
            "PYTHONPATH": path}


def serve_side(stack: contextlib.ExitStack, env: dict[str, str],
               registration: list[str]) -> tuple[str, dict[str, str], int]:
    """One ``toolvet serve`` in front of the upstream, set up as the bench needs it (registered,
    discovered, reviewed, the bench user in mode ``allow``): its /mcp URL, auth headers and pid."""
    toolvet(env, "db", "upgrade")
    toolvet(env, "server", "add", "up", *registration)
    toolvet(env, "discover", "up")
    toolvet(env, "review", "up/echo")
    token = json.loads(toolvet(env, "token", "create", "--role", "consumer", "--user", "bench", "--json"))["token"]
    port = free_port()
    serving = stack.enter_context(process([sys.executable, "-m", "toolvet", "serve", "--port", str(port)], env))
    base = f"http://127.0.0.1:{port}"
    wait_http(base)
    auth = {"Authorization": f"Bearer {token}"}
    put = httpx2.put(f"{base}/api/v1/users/bench/permission-mode", json={"mode": "allow"}, headers=auth)
    put.raise_for_status()
    return f"{base}/mcp", auth, serving.pid


def _ratios(side: dict[str, Any], direct: dict[str, Any]) -> dict[str, float]:
    """A toolvet side's figures over the direct side's: p50 at concurrency 1, calls/s at 16."""
    return {"p50_c1": side["c1"]["p50_ms"] / direct["c1"]["p50_ms"],
            "calls_per_s_c16": side["c16"]["calls_per_s"] / direct["c16"]["calls_per_s"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400, help="calls at concurrency 1 (x4 at 16)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved blocks of each side (default 5)")
    parser.add_argument("--transport", choices=["http", "stdio"], default="http",
                        help="how the upstream is reached (default http)")
    parser.add_argument("--baseline", metavar="SRC",
                        help="also run a toolvet serve from this code (PYTHONPATH), interleaved, for comparison")
    parser.add_argument("--baseline-hide", metavar="MODULE", action="append", default=[],
                        help="make this installed module unimportable to the baseline (repeatable)")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as home, contextlib.ExitStack() as stack:
        env = {**os.environ, "TOOLVET_HOME": home, "TOOLVET_DATABASE_URL": f"sqlite:///{Path(home)}/bench.sqlite3"}
        env.pop("TOOLVET_SECRET_KEY", None)
        up_port = free_port()
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
        envs = {"toolvet": env}
        if options.baseline:
            envs["baseline"] = baseline_env(env, Path(home), options.baseline, options.baseline_hide)
        vias: dict[str, str] = {}
        auth: dict[str, dict[str, str]] = {}
        for side, side_env in envs.items():
            url, auth[side], pids[side] = serve_side(stack, side_env, registration)
            vias[side] = url
        both = anyio.run(run_both, upstream, vias, auth, options.calls, options.rounds, pids)
    direct, via = both["direct"], both["toolvet"]
    ratios = _ratios(via, direct)
    per_round = {
        "p50_c1": [v["p50_ms"] / d["p50_ms"] for v, d in zip(via["c1"]["rounds"], direct["c1"]["rounds"], strict=True)],
        "calls_per_s_c16": [v["calls_per_s"] / d["calls_per_s"]
                            for v, d in zip(via["c16"]["rounds"], direct["c16"]["rounds"], strict=True)],
    }
    report = {"direct": direct, "toolvet": via, "ratios": ratios, "ratios_per_round": per_round,
              "transport": options.transport, "targets": {"p50_c1": "<= 2.0", "calls_per_s_c16": ">= 0.5"}}
    baseline = both.get("baseline")
    if baseline is not None:
        report["baseline"] = baseline
        report["baseline_ratios"] = _ratios(baseline, direct)
        report["cpu_over_baseline"] = {
            key: None if via[key]["cpu_ms_per_call"] is None or not baseline[key]["cpu_ms_per_call"]
            else via[key]["cpu_ms_per_call"] / baseline[key]["cpu_ms_per_call"] for key in ("c1", "c16")}
    if options.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"upstream over {options.transport}")
    print(f"{'':10} {'conc':>4} {'p50 ms':>8} {'p99 ms':>8} {'calls/s':>9}")
    shown: list[tuple[str, dict[str, Any]]] = [("direct", direct), ("toolvet", via)]
    if baseline is not None:
        shown.append(("baseline", baseline))
    for label, measured in shown:
        for key, conc in (("c1", 1), ("c16", 16)):
            row = measured[key]
            print(f"{label:10} {conc:>4} {row['p50_ms']:8.2f} {row['p99_ms']:8.2f} {row['calls_per_s']:9.0f}")
    for key, conc in (("c1", 1), ("c16", 16)):
        serve_cpu, up_cpu = via[key]["cpu_ms_per_call"], direct[key]["cpu_ms_per_call"]
        if serve_cpu is not None:
            upstream_text = "" if up_cpu is None else f"; the upstream's per direct call {up_cpu:.3f} ms"
            print(f"CPU per call at c{conc}: toolvet serve {serve_cpu:.3f} ms{upstream_text}")
        if baseline is not None and (over := report["cpu_over_baseline"][key]) is not None:
            print(f"CPU per call at c{conc}: the baseline's serve {baseline[key]['cpu_ms_per_call']:.3f} ms; "
                  f"toolvet's over the baseline's {over:.3f}")
    for key, label in (("p50_c1", "p50 ratio per round, c1:      "),
                       ("calls_per_s_c16", "calls/s ratio per round, c16: ")):
        print(label + " ".join(f"{value:.2f}x" for value in per_round[key]))
    print(f"p50 ratio at concurrency 1:     {ratios['p50_c1']:.2f}x (target <= 2.0x): "
          f"{'met' if ratios['p50_c1'] <= 2.0 else 'MISSED'}")
    print(f"calls/s ratio at concurrency 16: {ratios['calls_per_s_c16']:.2f}x (target >= 0.5x): "
          f"{'met' if ratios['calls_per_s_c16'] >= 0.5 else 'MISSED'}")
    if baseline is not None:
        print(f"the baseline's ratios in this run: p50 at c1 {report['baseline_ratios']['p50_c1']:.2f}x, "
              f"calls/s at c16 {report['baseline_ratios']['calls_per_s_c16']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
