"""A loopback reverse proxy that adds ``Authorization: Bearer <token>`` to every request it forwards.

The conformance CLI sends no custom headers, and toolvet answers nothing without a token; this proxy
sits between them. Every request to it, whatever its path, goes to one target URL with the client's
method, query, headers (``Host`` and ``Origin`` included, so toolvet sees what the client sent) and
body. The answer streams back chunk by chunk as it arrives, so an SSE stream stays a stream.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Final

import anyio
import httpx2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.upstreams import Upstream, serve

# Hop-by-hop headers (RFC 9110 section 7.6.1) end at each hop; content-length is recomputed for the body sent.
HOP_BY_HOP: Final = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
METHODS: Final = ["GET", "POST", "DELETE", "PUT", "PATCH", "HEAD", "OPTIONS"]
CONNECT_TIMEOUT: Final = 10.0
READ_TIMEOUT: Final = 60.0  # an idle SSE stream longer than this ends; no scenario waits that long


def bearer_proxy(target: str, token: str) -> Starlette:
    """An ASGI app forwarding every request to ``target`` with ``token`` as its bearer token."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        timeout = httpx2.Timeout(CONNECT_TIMEOUT, read=READ_TIMEOUT)
        async with httpx2.AsyncClient(timeout=timeout, follow_redirects=False) as client:
            app.state.client = client
            yield

    async def forward(request: Request) -> Response:
        client: httpx2.AsyncClient = request.app.state.client
        headers = [
            (name, value)
            for name, value in request.headers.items()
            if name not in HOP_BY_HOP and name not in ("authorization", "content-length")
        ]
        headers.append(("authorization", f"Bearer {token}"))
        url = f"{target}?{request.url.query}" if request.url.query else target
        outgoing = client.build_request(request.method, url, headers=headers, content=await request.body())
        try:
            answer = await client.send(outgoing, stream=True)
        except httpx2.HTTPError as exc:
            return JSONResponse({"error": f"upstream unreachable: {exc!r}"}, status_code=502)

        async def relay() -> AsyncIterator[bytes]:
            try:
                async for chunk in answer.aiter_raw():
                    yield chunk
            finally:
                with anyio.CancelScope(shield=True):
                    await answer.aclose()

        kept = {name: value for name, value in answer.headers.items() if name.lower() not in HOP_BY_HOP}
        return StreamingResponse(relay(), status_code=answer.status_code, headers=kept)

    return Starlette(routes=[Route("/{path:path}", forward, methods=METHODS)], lifespan=lifespan)


@contextmanager
def bearer_proxy_server(target: str, token: str, path: str = "/mcp") -> Iterator[Upstream]:
    """Serve :func:`bearer_proxy` on a free 127.0.0.1 port; the yielded URL ends in ``path``."""
    with serve(bearer_proxy(target, token), path) as upstream:
        yield upstream
