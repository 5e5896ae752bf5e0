"""Running toolvet as a server: the HTTP app under uvicorn and the discovery scheduler in one loop."""

from __future__ import annotations

import socket
from collections.abc import Callable

import anyio
import uvicorn

from toolvet.logs import configure
from toolvet.services.context import Context
from toolvet.services.scheduler import Scheduler


def bind(host: str, port: int) -> socket.socket:
    """A listening socket, bound before anything is printed, so a busy port fails fast and clearly."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio turns TCP_NODELAY on for accepted connections only when the listening
    # socket says it is TCP. Without it Nagle's algorithm holds each response body until the client
    # acknowledges the headers, about 40 ms on every request.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(2048)
    return sock


async def serve(ctx: Context, sock: socket.socket, *, on_ready: Callable[[], None] | None = None,
                scheduler: bool = True) -> None:
    """Serve the API on ``sock`` and keep the registry current until cancelled or interrupted."""
    from toolvet.api.app import create_app

    configure(ctx.settings.log_format, ctx.settings.log_level)
    # uvicorn's own loggers go through the same handler (log_config None: it installs none of its own).
    config = uvicorn.Config(create_app(ctx), log_level=ctx.settings.log_level.lower(), lifespan="on",
                            log_config=None, access_log=False)
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        if scheduler:
            await tg.start(Scheduler(ctx).run)

        async def announce() -> None:
            while not server.started:
                await anyio.sleep(0.02)
            if on_ready is not None:
                on_ready()

        tg.start_soon(announce)
        await server.serve(sockets=[sock])
        tg.cancel_scope.cancel()
