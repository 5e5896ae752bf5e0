"""The FastAPI application: routers under ``/api/v1``, an unauthenticated health check, OpenAPI."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from toolvet import __version__
from toolvet.api import errors
from toolvet.api.deps import get_principal
from toolvet.api.headers import SecurityHeaders
from toolvet.api.limits import RequestLimits
from toolvet.api.routes import OPEN_ROUTERS, ROUTERS
from toolvet.api.routes import metrics as metrics_route
from toolvet.console import mount_console
from toolvet.gateway.gateway import gateway_lifetime, mount_gateway
from toolvet.logs import serve_with_id
from toolvet.services import health
from toolvet.services.alerts import Alerts
from toolvet.services.calls import CallService
from toolvet.services.context import Context
from toolvet.services.oauth_connect import ConnectFlows
from toolvet.web import UnexpectedErrors

API_PREFIX = "/api/v1"


def healthz() -> dict[str, str]:
    """Liveness: answers without a token and without touching the database."""
    return {"status": "ok"}


async def readyz(request: Request) -> JSONResponse:
    """Readiness: 200 when the database answers, 503 (with why) when it does not; no token needed."""
    problem = await health.database_problem(request.app.state.ctx)
    if problem is not None:
        return JSONResponse({"status": "unavailable", "error": problem}, status_code=503)
    return JSONResponse({"status": "ready"})


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """The app's long-lived parts, in order: the call service, the alert sender that listens to it,
    the operators' OAuth Connect flows, then the MCP gateway that forwards through it (stopped in reverse)."""
    ctx = app.state.ctx
    async with CallService(ctx) as calls, Alerts(ctx, calls.events), ConnectFlows(ctx).run(), gateway_lifetime(app):
        yield


class ToolvetAPI(FastAPI):
    """FastAPI, with the MCP endpoint's exact path answered ahead of the middleware stack.

    A ``tools/call`` through ``/mcp`` is the latency-critical request; the stack's six layers
    (Starlette's error and exception middleware, FastAPI's body limit and exit stack, toolvet's
    error logging, the router) each wrap the request and every ``send`` of its response. ``/mcp``
    needs none of them: the gateway enforces its own access, and is wrapped in
    :class:`~toolvet.api.errors.UnexpectedErrors` and the request limits
    (:class:`~toolvet.api.limits.RequestLimits`) only. Any other path, ``/mcp`` under a proxy's
    prefix included, takes the stack and the router, where ``/mcp`` is routed too.
    """

    #: The MCP endpoint's app, set by ``mount_gateway``.
    mcp_app: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        await serve_with_id(scope, receive, send, self._route)  # every request, /mcp included, under its id

    async def _route(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.mcp_app is not None and scope["path"] == "/mcp":
            await self.mcp_app(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)


def create_app(ctx: Context) -> ToolvetAPI:
    """The API over ``ctx``. Every router in ``routes.ROUTERS`` is mounted under ``/api/v1`` behind
    bearer-token authentication; permissions are checked by the services themselves."""
    app = ToolvetAPI(
        title="toolvet",
        version=__version__,
        description="Registry and gateway for MCP tools. "
        "Every `/api/v1` route needs `Authorization: Bearer tv_...`, except a call of a `noauth` tool "
        "(`POST /api/v1/calls`, `POST /api/v1/decide`).",
        openapi_url="/openapi.json",
        docs_url="/docs",
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.ctx = ctx
    max_bytes, max_depth = ctx.settings.max_body_bytes, ctx.settings.max_json_depth
    app.add_middleware(RequestLimits, max_bytes=max_bytes, max_depth=max_depth)  # inside the error logging
    errors.install(app)
    app.add_middleware(SecurityHeaders)  # outermost of toolvet's: a refusal or a 500 carries them too
    app.add_api_route("/healthz", healthz, methods=["GET"], tags=["health"])
    app.add_api_route("/readyz", readyz, methods=["GET"], tags=["health"],
                      responses={503: {"description": "The database is not reachable."}})
    app.include_router(metrics_route.router)  # at the root, where scrapers look; the route checks its token
    for router in ROUTERS:
        app.include_router(router, prefix=API_PREFIX, dependencies=[Depends(get_principal)])
    for router in OPEN_ROUTERS:
        app.include_router(router, prefix=API_PREFIX)
    mount_console(app, ctx)
    mount_gateway(app, ctx)
    if isinstance(app.mcp_app, UnexpectedErrors):  # /mcp skips the stack: the same bounds, its own shape
        app.mcp_app.app = RequestLimits(app.mcp_app.app, max_bytes=max_bytes, max_depth=max_depth, mcp=True)
    return app
