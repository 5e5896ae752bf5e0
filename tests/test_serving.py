"""The listening socket toolvet serves on."""

import socket

from toolvet.serving import bind


def test_accepted_connections_get_tcp_nodelay():
    # asyncio enables TCP_NODELAY on accepted sockets only when the listener's proto is TCP; with
    # Nagle on, every response waited ~40 ms for a delayed ACK.
    sock = bind("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()


def test_toolvet_serve_runs_on_uvloop_where_it_is_installed() -> None:
    """The event loop ``toolvet serve`` asks anyio for (uvloop is a dependency on every platform but Windows)."""
    import asyncio

    import anyio
    import uvloop

    from toolvet import serving

    async def running_loop() -> type:
        return type(asyncio.get_running_loop())

    assert issubclass(anyio.run(running_loop, backend_options=serving.loop_options()), uvloop.Loop)


def test_toolvet_serve_parses_http_with_httptools_where_it_is_installed() -> None:
    """The HTTP/1.1 implementation ``toolvet serve`` gives uvicorn (httptools is a dependency)."""
    import uvicorn
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    from toolvet import serving

    config = uvicorn.Config(lambda scope, receive, send: None, http=serving.http_protocol())
    config.load()
    assert config.http_protocol_class is HttpToolsProtocol


def test_toolvet_serve_runs_the_collector_with_a_larger_first_threshold_and_restores_it(ctx) -> None:
    """While ``serve`` runs the young generation is collected every SERVING_GEN0 containers, not 700;
    the process's own threshold is back once it returns."""
    import gc
    import os
    import signal

    import anyio

    from toolvet import serving

    before = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []

    async def main() -> None:
        def ready() -> None:
            seen.append(gc.get_threshold())
            os.kill(os.getpid(), signal.SIGTERM)  # stops serve as it stops `toolvet serve`

        await serving.serve(ctx, serving.bind("127.0.0.1", 0), on_ready=ready, scheduler=False)

    anyio.run(main, backend_options=serving.loop_options())
    assert seen == [(serving.SERVING_GEN0, *before[1:])]
    assert gc.get_threshold() == before != seen[0]
