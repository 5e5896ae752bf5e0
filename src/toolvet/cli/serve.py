"""``toolvet serve``: the REST API, console and gateway, with the discovery scheduler, in one process."""

from __future__ import annotations

from typing import Annotated

import anyio
import typer

from toolvet.cli import render
from toolvet.cli.group import fail
from toolvet.cli.runtime import load_settings, open_context


def serve(
    host: Annotated[
        str | None, typer.Option("--host", help="Address to bind (default: TOOLVET_HOST).")
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(
            "--port", min=0, max=65535, help="Port to bind (default: TOOLVET_PORT; 0: any free port)."
        ),
    ] = None,
) -> None:
    """Serve toolvet over HTTP until interrupted (the database is migrated first)."""
    from toolvet import serving
    from toolvet.services.secrets import shared_key_problem

    if (problem := shared_key_problem(load_settings())) is not None:
        fail(problem)
    with open_context() as ctx:
        bind_host = ctx.settings.host if host is None else host
        bind_port = ctx.settings.port if port is None else port
        sock = serving.bind(bind_host, bind_port)
        bound_port = sock.getsockname()[1]
        shown_host = f"[{bind_host}]" if ":" in bind_host else bind_host

        def ready() -> None:
            render.say(f"toolvet serving on http://{shown_host}:{bound_port}")

        try:
            anyio.run(lambda: serving.serve(ctx, sock, on_ready=ready), backend_options=serving.loop_options())
        except KeyboardInterrupt:
            pass
        finally:
            sock.close()
