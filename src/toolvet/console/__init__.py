"""The operator console: server-rendered pages over the services, mounted at ``/console``.

Pages work without JavaScript (every change is a plain form POST answered with a redirect); one small
script only makes the pending-calls list update itself. Nothing is fetched from outside the machine.
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from toolvet.console.views import audit, connect, entries, servers, signin, tool_sets, tools
from toolvet.console.visit import PREFIX, bare, page
from toolvet.services.context import Context

STATIC = __file__.rsplit("/", 1)[0] + "/static"


async def home(request: Request) -> Response:
    return RedirectResponse(f"{PREFIX}/tools", status_code=303)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return bare("error.html", exc.status_code, title="Not here", message=str(exc.detail))


def create_console(ctx: Context) -> Starlette:
    """The console as its own ASGI app (its errors are pages, not the API's JSON)."""
    from toolvet.console.views import calls

    routes = [
        Route("/", home),
        Route("/login", signin.login, methods=["GET", "POST"]),
        Route("/logout", page(signin.logout), methods=["POST"]),
        Route("/servers", page(servers.server_list)),
        Route("/runs", page(servers.run_list)),
        Route("/servers/new", page(servers.server_new), methods=["GET", "POST"]),
        Route("/servers/{name}", page(servers.server_detail), methods=["GET", "POST"]),
        Route("/servers/{name}/discover", page(servers.discover_now), methods=["POST"]),
        Route("/servers/{name}/connect", page(connect.connect), methods=["POST"]),
        Route("/oauth/callback", page(connect.callback)),
        Route("/tools", page(tools.tool_list)),
        Route("/tools/bulk", page(tools.tool_bulk_action), methods=["POST"]),
        Route("/tools/{server}/{tool:path}", page(tools.tool_detail), methods=["GET", "POST"]),
        Route("/entries", page(entries.entry_list)),
        Route("/entries/{server}/{kind}/{key:path}", page(entries.entry_action), methods=["POST"]),
        Route("/sets", page(tool_sets.tool_set_list)),
        Route("/sets/new", page(tool_sets.tool_set_new), methods=["GET", "POST"]),
        Route("/sets/{name}", page(tool_sets.tool_set_detail), methods=["GET", "POST"]),
        Route("/sets/{name}/delete", page(tool_sets.tool_set_delete), methods=["POST"]),
        Route("/calls", page(calls.call_list)),
        Route("/calls/events", page(calls.call_events)),
        Route("/calls/{call_id}", page(calls.decide), methods=["POST"]),
        Route("/audit", page(audit.audit_list)),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    console = Starlette(routes=routes, exception_handlers={HTTPException: _http_error})
    console.state.ctx = ctx
    return console


def mount_console(app: FastAPI, ctx: Context) -> None:
    """Mount the console at ``/console`` and send ``/`` there."""
    app.mount(PREFIX, create_console(ctx))
    app.add_api_route("/", home, methods=["GET"], include_in_schema=False)
