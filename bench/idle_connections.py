"""Idle upstream connections: what a POST costs toolvet's upstream client when its pool holds connections to
many other origins, beside the same POST with none, in one run.

A discovery sweep over many hosts, or a gateway in front of many upstreams, leaves one kept-alive
connection per upstream idle in the pool for its 4 s keep-alive. Every request the pool assigns, and every
answer it takes back, passes over all of its connections (httpcore2's pool is one pool for every origin),
so a request's cost grows with the number of idle connections to *other* origins. This measures it: N
loopback origins (``127.0.x.y``, each a listener answering a canned JSON-RPC result in this process),
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

import anyio
import anyio.abc
import httpx2

from toolvet.upstream.http import HttpChannel, http_client

BODY = b'{"jsonrpc":"2.0","id":1,"result":{}}'
ANSWER = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(BODY), BODY)


async def answer(client: anyio.abc.SocketStream) -> None:
    """Answer every POST on the connection with BODY, until the client closes it."""
    async with client:
        buffered = b""
        while True:
            try:
                while b"\r\n\r\n" not in buffered:
                    buffered += await client.receive()
                head, _, rest = buffered.partition(b"\r\n\r\n")
                length = int(next(line.split(b":", 1)[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length:")))
                while len(rest) < length:
                    rest += await client.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                return
            buffered = rest[length:]
            await client.send(ANSWER)


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
    hosts = [f"127.0.{1 + i // 250}.{1 + i % 250}" for i in range(origins + 1)]
    listeners = [await anyio.create_tcp_listener(local_host=host) for host in hosts]
    urls = [f"http://{host}:{listener.extra(anyio.abc.SocketAttribute.local_port)}/mcp"
            for host, listener in zip(hosts, listeners, strict=True)]
    crowded: list[float] = []
    alone: list[float] = []
    async with anyio.create_task_group() as tg:
        for listener in listeners:
            tg.start_soon(listener.serve, answer)
        async with http_client(timeout=httpx2.Timeout(10)) as busy, http_client(timeout=httpx2.Timeout(10)) as quiet:
            others = [channel(busy, url) for url in urls[1:]]
            target, single = channel(busy, urls[0]), channel(quiet, urls[0])
            await per_request(target, others, 50)  # warm up
            await per_request(single, [], 50)
            for number in range(rounds):
                sides = [(crowded, target, others), (alone, single, [])]
                for figures, pipe, refresh in sides if number % 2 == 0 else reversed(sides):
                    figures.append(await per_request(pipe, refresh, requests))
        tg.cancel_scope.cancel()
    for listener in listeners:
        await listener.aclose()
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
