"""HTTP stacks for upstream JSON-RPC: httpx2 (toolvet's one stack) beside aiohttp's client, in one run.

The request is the one toolvet sends most: a small ``tools/call`` POST answered with a small JSON body,
on a kept-alive connection to a loopback upstream (uvicorn in a subprocess, answering a canned
JSON-RPC result, so the upstream's own cost is the same for every stack). Measured for each stack:
this process's CPU time per request (``time.process_time``) and the wall time per request, at
concurrency 1 and 16, in interleaved rounds so drift on a shared machine reaches every stack alike.
httpx2 is measured twice: through toolvet's own ``HttpChannel`` (what discovery and the gateway run)
and as a bare ``AsyncClient.post``, so the channel's own cost shows apart from the library's.

aiohttp is not a dependency of toolvet: install it (``pip install aiohttp``) to include it; without it
the benchmark measures the httpx2 rows only. Ratios are against the bare httpx2 row.

Run: ``python bench/http_stacks.py [--requests 2000] [--rounds 4]``.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx2

from toolvet.upstream.http import HttpChannel, http_client

UPSTREAM = """
import sys, uvicorn
BODY = b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}'
async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    more = True
    while more:
        message = await receive()
        more = message.get("more_body", False)
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]})
    await send({"type": "http.response.body", "body": BODY})
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""
CALL = {"name": "echo", "arguments": {"text": "hello"}}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), 0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"port {port} did not open within {timeout} s")


async def measure(send: Callable[[], Awaitable[Any]], total: int, concurrency: int) -> tuple[float, float]:
    """(CPU ms per request, wall ms per request) for ``total`` requests on ``concurrency`` workers."""
    remaining = total

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await send()

    cpu, wall = time.process_time(), time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker)
    return (time.process_time() - cpu) * 1000 / total, (time.perf_counter() - wall) * 1000 / total


async def run(url: str, requests: int, rounds: int) -> dict[str, dict[str, list[tuple[float, float]]]]:
    stacks: dict[str, Callable[[], Awaitable[Any]]] = {}
    timeout = httpx2.Timeout(30.0)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": CALL}).encode()
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    async with http_client(timeout=timeout) as client, httpx2.AsyncClient(timeout=timeout) as bare:
        channel = HttpChannel(client, url, {}, timeout=timeout, max_response_bytes=1 << 20)

        async def via_channel() -> None:
            await channel.request("tools/call", CALL, {})

        async def via_httpx2() -> None:
            response = await bare.post(url, content=body, headers=headers)
            response.json()

        stacks["httpx2 (bare post)"] = via_httpx2
        stacks["httpx2 (toolvet HttpChannel)"] = via_channel
        session: Any = None
        try:
            import aiohttp
        except ImportError:
            aiohttp = None  # type: ignore[assignment]
        if aiohttp is not None:
            session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=64))

            async def via_aiohttp() -> None:
                async with session.post(url, data=body, headers=headers) as response:
                    json.loads(await response.read())

            stacks["aiohttp"] = via_aiohttp
        try:
            for send in stacks.values():
                await measure(send, 200, 4)  # warm up: connections
            results: dict[str, dict[str, list[tuple[float, float]]]] = {}
            names = list(stacks)
            for number in range(rounds):
                order = names[number % len(names):] + names[:number % len(names)]
                for key, concurrency in (("c1", 1), ("c16", 16)):
                    for name in order:
                        figures = await measure(stacks[name], max(1, requests // rounds), concurrency)
                        results.setdefault(name, {}).setdefault(key, []).append(figures)
            return results
        finally:
            if session is not None:
                await session.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="requests per stack and concurrency")
    parser.add_argument("--rounds", type=int, default=4)
    options = parser.parse_args()
    port = free_port()
    upstream = subprocess.Popen([sys.executable, "-c", UPSTREAM, str(port)], stdout=subprocess.DEVNULL)
    try:
        wait_port(port)
        results = anyio.run(run, f"http://127.0.0.1:{port}/mcp", options.requests, options.rounds)
    finally:
        upstream.terminate()
        upstream.wait(10)
    base = results["httpx2 (bare post)"]
    print(f"{'stack':30} {'conc':>4} {'CPU ms/req':>11} {'wall ms/req':>12} {'CPU ratio':>10}")
    for name, by_key in results.items():
        for key, concurrency in (("c1", 1), ("c16", 16)):
            cpu = sorted(c for c, _ in by_key[key])[len(by_key[key]) // 2]
            wall = sorted(w for _, w in by_key[key])[len(by_key[key]) // 2]
            base_cpu = sorted(c for c, _ in base[key])[len(base[key]) // 2]
            print(f"{name:30} {concurrency:>4} {cpu:11.3f} {wall:12.3f} {cpu / base_cpu:9.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
