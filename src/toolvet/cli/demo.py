"""``toolvet demo``: a bundled MCP server, registered, discovered and served on the default database."""

from __future__ import annotations

import contextlib
import secrets
from typing import Annotated, Any

import anyio
import typer

from toolvet.cli import render
from toolvet.cli.discover import run_line
from toolvet.cli.group import exclusive
from toolvet.cli.runtime import local
from toolvet.errors import NotFound
from toolvet.schemas.tools import TokenCreate
from toolvet.services import servers, tokens

DEMO = "demo"



def demo(
    port: Annotated[int | None, typer.Option("--port", min=1, max=65535,
                                             help="Port for toolvet (default: TOOLVET_PORT).")] = None,
    upstream_port: Annotated[int, typer.Option("--upstream-port", min=0, max=65535,
                                               help="Port for the demo MCP server (0: any free port).")] = 0,
    no_serve: Annotated[bool, typer.Option("--no-serve",
                                           help="Stop after discovery instead of serving.")] = False,
) -> None:
    """Start the demo MCP server, register and discover it, then serve toolvet until Ctrl-C."""
    exclusive(("--no-serve", no_serve), ("--port", port is not None))
    import uvicorn  # imported here, like the MCP SDK below, so other commands start fast

    from toolvet.demo import server as demo_server
    from toolvet.services import discovery
    from toolvet.serving import bind, serve

    with local() as (ctx, me):
        key = secrets.token_urlsafe(16)
        upstream_sock = bind("127.0.0.1", upstream_port)
        url = f"http://127.0.0.1:{upstream_sock.getsockname()[1]}/mcp"
        toolvet_sock = None if no_serve else bind(ctx.settings.host, port or ctx.settings.port)
        fields: dict[str, Any] = {"url": url, "headers": {"Authorization": f"Bearer {key}"},
                                  "title": "toolvet demo server"}
        try:
            servers.update_server(ctx, me, DEMO, fields)
        except NotFound:
            servers.create_server(ctx, me, {"name": DEMO, **fields})

        async def main() -> None:
            upstream = uvicorn.Server(uvicorn.Config(demo_server.app(key), log_level="warning"))
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: upstream.serve(sockets=[upstream_sock]))
                while not upstream.started:
                    await anyio.sleep(0.02)
                [run] = await discovery.discover(ctx, me, [DEMO])
                render.say(f"demo MCP server at {url}")
                render.say("discovered " + run_line(run))
                if run.status != "ok" or toolvet_sock is None:
                    upstream.should_exit = True
                    return
                token = tokens.create_token(ctx, me, TokenCreate(role="admin", name="demo-admin"))
                host, tv_port = toolvet_sock.getsockname()[:2]
                base = f"http://{host}:{tv_port}"

                def ready() -> None:
                    render.say(f"toolvet serving on {base}")
                    render.say(f"  REST API:  {base}/api/v1/tools   (OpenAPI: {base}/docs)")
                    render.say(f"  admin token: {token.token}")
                    render.say(f'  try: curl -H "Authorization: Bearer {token.token}" {base}/api/v1/tools')
                    render.say("Ctrl-C stops both servers.")

                try:
                    await serve(ctx, toolvet_sock, on_ready=ready)
                finally:
                    upstream.should_exit = True

        with contextlib.suppress(KeyboardInterrupt):
            anyio.run(main)
