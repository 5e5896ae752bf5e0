"""A fleet as operators run one, on loopback: ``toolvet serve`` processes on one database behind a
round-robin proxy without stickiness (starlette in front, httpx2 behind, responses streamed).

Used by tests/test_replicas.py and bench/replicas.py.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

#: Hop-by-hop headers a proxy does not pass on (RFC 9110 §7.6.1), and the ones it recomputes.
_HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
        "host", "content-length"}


@dataclass
class Replica:
    """One ``toolvet serve`` process."""

    process: subprocess.Popen[bytes]
    url: str
    log: Path

    def kill(self) -> None:
        """``kill -9``: no shutdown of any kind."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]


@dataclass
class Forwarded:
    """One request the proxy forwarded: to which replica, and whether its response ended whole."""

    method: str
    body: bytes
    replica: str
    broken: threading.Event = field(default_factory=threading.Event)  # set from the proxy's thread


class RoundRobin:
    """The proxy: each request goes to the next live replica; a replica that refuses connections is
    skipped from then on. Streams (SSE) are passed through as they come."""

    def __init__(self, replicas: list[str]) -> None:
        self.replicas = list(replicas)
        self.dead: set[str] = set()
        self._next = itertools.cycle(range(len(self.replicas)))
        self.http: httpx2.AsyncClient | None = None
        self.forwarded: list[Forwarded] = []
        self.lock = threading.Lock()
        self.app = Starlette(routes=[Route("/{path:path}", self.forward,
                                           methods=["GET", "POST", "DELETE", "PATCH", "PUT"])],
                             lifespan=self._lifespan)

    @asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(120.0, connect=5.0)) as http:
            self.http = http
            yield

    def _pick(self) -> str:
        with self.lock:
            for _ in range(len(self.replicas)):
                replica = self.replicas[next(self._next)]
                if replica not in self.dead:
                    return replica
        raise RuntimeError("no live replica")

    async def forward(self, request: Request) -> Response:
        assert self.http is not None
        body = await request.body()
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in _HOP]
        for _ in range(len(self.replicas)):
            replica = self._pick()
            url = httpx2.URL(replica + request.url.path, query=request.url.query.encode())
            outbound = self.http.build_request(request.method, url, headers=headers, content=body)
            try:
                response = await self.http.send(outbound, stream=True)
            except httpx2.ConnectError:
                self.dead.add(replica)  # refused: that replica is down, the request never reached it
                continue
            except httpx2.TransportError:
                # Cut before it answered (a kept-alive connection to a replica that died): the request
                # may have reached it, so it is not sent again here; the client retries.
                self.dead.add(replica)
                return Response(b"the replica went away", status_code=502)
            record = Forwarded(request.method, body, replica)
            self.forwarded.append(record)
            passed = [(k, v) for k, v in response.headers.items() if k.lower() not in _HOP]

            async def stream(response: httpx2.Response = response, record: Forwarded = record) -> AsyncIterator[bytes]:
                try:
                    async for chunk in response.aiter_raw():
                        yield chunk
                except httpx2.HTTPError:
                    # The replica went away mid-response: the client sees a cut stream, and the proxy
                    # sends nothing more there.
                    self.dead.add(record.replica)
                    record.broken.set()
                    raise

            return StreamingResponse(stream(), status_code=response.status_code, headers=dict(passed),
                                     background=BackgroundTask(response.aclose))
        return Response(b"no live replica", status_code=502)


def start_replica(env: dict[str, str], log: Path, *, bound: float = 60.0) -> Replica:
    """Start ``toolvet serve`` on a free loopback port and wait (bounded) until it prints its address."""
    with open(log, "wb") as out:  # a file: a pipe could fill and block the server
        process = subprocess.Popen([sys.executable, "-m", "toolvet", "serve", "--port", "0"],
                                   env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + bound
    while True:
        text = log.read_text(errors="replace")
        for line in text.splitlines():
            if line.startswith("toolvet serving on "):
                return Replica(process, line.split()[-1], log)
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"toolvet serve did not start: {text[-2000:]}")
        time.sleep(0.05)  # waiting on another process's output file, the only thing it tells us


@contextmanager
def replicas(env: dict[str, str], directory: Path, count: int) -> Iterator[list[Replica]]:
    """``count`` replicas; each is stopped (SIGINT, then killed) whatever happened."""
    started: list[Replica] = []
    try:
        for index in range(count):
            started.append(start_replica(env, directory / f"replica{index}.log"))
        yield started
    finally:
        for replica in started:
            if replica.process.poll() is None:
                replica.process.send_signal(signal.SIGINT)
        for replica in started:
            try:
                replica.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                replica.process.kill()
                replica.process.wait(timeout=10)
