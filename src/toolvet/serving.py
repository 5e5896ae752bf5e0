"""Running toolvet as a server: the HTTP app under uvicorn and the discovery scheduler in one loop.

SIGTERM (what systemd, Docker and Kubernetes send) stops toolvet exactly as Ctrl-C does: no new
connections are accepted, live event streams end (a ``stopping`` event), requests in flight get
``shutdown_grace`` seconds to finish, then the app's
lifespan ends (the call records flushed, the bus closed), the scheduler is cancelled (its leases given
back), and ``serve`` returns, so the caller closes the context (the discovery writer process ends)
and the process exits 0 with nothing left behind.
"""

from __future__ import annotations

import asyncio
import errno
import gc
import importlib.util
import math
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, Final

import anyio
import uvicorn

from toolvet.errors import SetupError
from toolvet.logs import configure
from toolvet.services.context import Context
from toolvet.services.events import CALLS, STOPPING
from toolvet.services.scheduler import Scheduler


def bind(host: str, port: int) -> socket.socket:
    """A listening socket, bound before anything is printed, so a busy port fails fast and clearly
    (``SetupError`` naming the port)."""
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
        if exc.errno == errno.EADDRINUSE:
            raise SetupError(f"port {port} is in use (on {host}): stop what holds it, or choose another "
                             "with --port or TOOLVET_PORT") from None
        raise SetupError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(2048)
    return sock


class _Server(uvicorn.Server):
    """uvicorn's server, stopping on SIGINT and SIGTERM alike and then simply returning.

    uvicorn raises a caught signal again once it has shut down, for the signal's default action: for
    SIGTERM that kills the process before anything after the server (the scheduler's leases, the
    context, the discovery writer process) is cleaned up.
    """

    def __init__(self, config: uvicorn.Config, on_stop: Callable[[], None]) -> None:
        super().__init__(config)
        self.on_stop = on_stop

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        self.on_stop()

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield  # signals reach the main thread only; whoever runs this thread stops it
            return
        originals = {sig: signal.signal(sig, self.handle_exit) for sig in STOP_SIGNALS}
        try:
            yield
        finally:
            for sig, handler in originals.items():
                signal.signal(sig, handler)


def loop_options() -> dict[str, Any]:
    """anyio's backend options for ``toolvet serve``'s event loop: uvloop where it is installed (a
    dependency on every platform but Windows), as uvicorn itself chooses it; asyncio's own loop elsewhere.

    bench/gateway.py on an idle machine, four runs each, uvloop installed for the upstream in both: p50
    at concurrency 1 1.98x median (asyncio's loop 2.00x), calls/s at concurrency 16 0.545x (0.51x)."""
    return {"use_uvloop": True} if importlib.util.find_spec("uvloop") is not None else {}


def http_protocol() -> str:
    """uvicorn's HTTP/1.1 implementation for ``toolvet serve``: httptools (uvicorn's own fast parser, a
    dependency) where it is installed, h11 elsewhere. uvicorn's "auto" makes the same choice; naming
    it makes it toolvet's (as :func:`loop_options` does for the loop), and an environment without
    httptools still serves, on h11.

    httptools parses each request in C where h11 runs in Python: 5-11 % less of toolvet's CPU per
    gateway call, against the same code on h11 in the same run (docs/benchmarks.md, Gateway, Round 9)."""
    return "httptools" if importlib.util.find_spec("httptools") is not None else "h11"


#: The cyclic collector's first threshold while toolvet serves: a young-generation collection after this
#: many more container objects made than freed (CPython's default is 700).
SERVING_GEN0: Final = 20_000


@contextmanager
def collector_while_serving() -> Iterator[None]:
    """The cyclic collector's first threshold at :data:`SERVING_GEN0` for the block, as it was after.

    A gateway call makes a few thousand short-lived containers (the request's scope and messages, the
    SDK's task group and models, the upstream's answer), so at CPython's 700 several young collections
    run per call, and with sixteen calls in flight each one walks, and promotes, the live calls' objects.
    Fewer, larger young collections cost 9-16 % less of ``toolvet serve``'s CPU per call at concurrency
    16 (``bench/gateway.py --baseline``, the same code with and without, docs/benchmarks.md, Gateway,
    Round 10); garbage in cycles waits a little longer to be freed, bounded by the threshold."""
    before = gc.get_threshold()
    gc.set_threshold(SERVING_GEN0, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


#: The signals that stop ``toolvet serve`` gracefully.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


async def serve(ctx: Context, sock: socket.socket, *, on_ready: Callable[[], None] | None = None,
                scheduler: bool = True) -> None:
    """Serve the API on ``sock`` and keep the registry current until cancelled, interrupted or
    terminated."""
    from toolvet.api.app import create_app

    configure(ctx.settings.log_format, ctx.settings.log_level)
    # uvicorn's own loggers go through the same handler (log_config None: it installs none of its own).
    config = uvicorn.Config(create_app(ctx), log_level=ctx.settings.log_level.lower(), lifespan="on",
                            log_config=None, access_log=False, http=http_protocol(),
                            timeout_graceful_shutdown=math.ceil(ctx.settings.shutdown_grace))
    loop = asyncio.get_running_loop()

    def stopping() -> None:  # in a signal handler: only hand the event to the loop
        loop.call_soon_threadsafe(ctx.bus.deliver, {"type": STOPPING}, CALLS)

    server = _Server(config, stopping)
    with collector_while_serving():
        async with ctx.bus.running(), anyio.create_task_group() as tg:
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
