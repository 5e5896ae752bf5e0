"""Idle upstream connections: what a POST costs toolvet's upstream client when its pool holds connections to
many other origins, beside the same POST with none, in one run.

A discovery sweep over many hosts, or a gateway in front of many upstreams, leaves one kept-alive
connection per upstream idle in the pool for its 4 s keep-alive. Every request the pool assigns, and every
answer it takes back, passes over all of its connections (httpcore2's pool is one pool for every origin),
so a request's cost grows with the number of idle connections to *other* origins. This measures it: N
loopback origins (``127.0.x.y``, each a ``tests.upstreams.CannedHttp`` listener in this process),
one connection opened to each and left idle, then sequential ``HttpChannel`` POSTs to one of them; the
baseline is the same POSTs on a pool that holds no other connection. Rounds alternate the two and are
short, and every connection is used again before each round, so none expires during one. Printed: this
process's CPU per request on each side, and their ratio.

Run: ``python bench/idle_connections.py [--origins 200] [--requests 500] [--rounds 6]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import anyio
import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.upstreams

from tests.upstreams import CannedHttp, canned_http

from toolvet.upstream.http import HttpChannel, http_client


def channel(http: httpx2.AsyncClient, url: str) -> HttpChannel:
    return HttpChannel(http, url, {}, timeout=httpx2.Timeout(10), max_response_bytes=1 << 20)


async def per_request(target: HttpChannel, refresh: list[HttpChannel], requests: int) -> float:
    """CPU µs per POST to ``target``, after one POST on each of ``refresh`` (their connections idle again)."""
    for other in refresh:
        await other.request("tools/list", None, {})
    start = time.process_time()
    for _ in range(requests):
        await target.request("tools/list", None, {})
    return (time.process_time() - start) * 1e6 / requests


async def run(origins: int, requests: int, rounds: int) -> tuple[list[float], list[float]]:
    servers = [CannedHttp(f"127.0.{1 + i // 250}.{1 + i % 250}") for i in range(origins + 1)]
    crowded: list[float] = []
    alone: list[float] = []
    async with canned_http(*servers), http_client(timeout=httpx2.Timeout(10)) as busy, \
            http_client(timeout=httpx2.Timeout(10)) as quiet:
        others = [channel(busy, server.url) for server in servers[1:]]
        target, single = channel(busy, servers[0].url), channel(quiet, servers[0].url)
        await per_request(target, others, 50)  # warm up
        await per_request(single, [], 50)
        for number in range(rounds):
            sides = [(crowded, target, others), (alone, single, [])]
            for figures, pipe, refresh in sides if number % 2 == 0 else reversed(sides):
                figures.append(await per_request(pipe, refresh, requests))
    return crowded, alone


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--origins", type=int, default=200, help="other origins, one idle connection each")
    parser.add_argument("--requests", type=int, default=500, help="POSTs per side and round (keep a round under 4 s)")
    parser.add_argument("--rounds", type=int, default=6)
    options = parser.parse_args()
    if not 1 <= options.origins <= 2000:
        parser.error("--origins must be between 1 and 2000")
    crowded, alone = anyio.run(run, options.origins, options.requests, options.rounds,
                               backend_options={"use_uvloop": True})
    print(f"toolvet upstream client: sequential POSTs to one origin, {options.requests} a round, "
          f"{options.rounds} rounds")
    print(f"{'pool':<40} {'CPU us/request (each round)':<48} median")
    for label, figures in ((f"{options.origins} other origins' connections idle", crowded),
                           ("no other connection (baseline)", alone)):
        print(f"{label:<40} {' '.join(f'{x:7.1f}' for x in figures):<48} {statistics.median(figures):7.1f}")
    print(f"ratio (idle others / baseline): {statistics.median(crowded) / statistics.median(alone):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
