"""The FastAPI application: routers under ``/api/v1``, an unauthenticated health check, OpenAPI."""

from __future__ import annotations

from fastapi import Depends, FastAPI

from toolvet import __version__
from toolvet.api import errors
from toolvet.api.deps import get_principal
from toolvet.api.routes import ROUTERS
from toolvet.services.context import Context

API_PREFIX = "/api/v1"


def healthz() -> dict[str, str]:
    """Liveness: answers without a token and without touching the database."""
    return {"status": "ok"}


def create_app(ctx: Context) -> FastAPI:
    """The API over ``ctx``. Every router in ``routes.ROUTERS`` is mounted under ``/api/v1`` behind
    bearer-token authentication; permissions are checked by the services themselves."""
    app = FastAPI(
        title="toolvet",
        version=__version__,
        description="Registry and gateway for MCP tools. "
        "Every `/api/v1` route needs `Authorization: Bearer tv_...`.",
        openapi_url="/openapi.json",
        docs_url="/docs",
        redoc_url=None,
    )
    app.state.ctx = ctx
    errors.install(app)
    app.add_api_route("/healthz", healthz, methods=["GET"], tags=["health"])
    for router in ROUTERS:
        app.include_router(router, prefix=API_PREFIX, dependencies=[Depends(get_principal)])
    return app
