"""HTTP plumbing every HTTP door of toolvet shares (the REST API, the console, the MCP endpoints):
the one table from toolvet's error tree to HTTP statuses, the error body, and the guard that answers
any unexpected exception with a generic 500 and logs it once."""

from __future__ import annotations

import logging
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolvet.errors import (
    Conflict,
    Forbidden,
    InvalidInput,
    NotFound,
    RateLimited,
    ToolvetError,
    Unauthenticated,
    UpstreamError,
)

__all__ = ["ERROR_TABLE", "INTERNAL_MESSAGE", "UnexpectedErrors", "error_body", "replay", "status_for"]

log = logging.getLogger("toolvet.api")

#: Looked up along the error's class hierarchy, so ReadOnlyField (an InvalidInput) is a 422 and any
#: ToolvetError not listed falls back to 400.
ERROR_TABLE: dict[type[ToolvetError], tuple[int, str]] = {
    NotFound: (404, "not_found"),
    Conflict: (409, "conflict"),
    InvalidInput: (422, "invalid_input"),
    Unauthenticated: (401, "unauthenticated"),
    Forbidden: (403, "forbidden"),
    RateLimited: (429, "rate_limited"),
    UpstreamError: (502, "upstream_error"),
    ToolvetError: (400, "bad_request"),
}
INTERNAL_MESSAGE = "an unexpected error occurred; it has been logged"


def status_for(exc: ToolvetError) -> tuple[int, str]:
    """The HTTP status and error type of one of our errors."""
    for cls in type(exc).__mro__:
        if cls in ERROR_TABLE:
            return ERROR_TABLE[cls]
    raise AssertionError("ToolvetError is in the table")  # pragma: no cover


def error_body(kind: str, message: str, field: str | None = None) -> dict[str, Any]:
    """The body every error response carries."""
    return {"error": {"type": kind, "message": message, "field": field}}


class UnexpectedErrors:
    """Any other exception: logged with its traceback, answered with a generic 500 and no details.

    An ASGI middleware rather than an ``Exception`` handler, because Starlette re-raises after such a
    handler, and the server would then log the same error a second time."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception:
            log.exception("unexpected error serving %s %s", scope.get("method"), scope.get("path"))
            if started:
                raise
            await JSONResponse(error_body("internal", INTERNAL_MESSAGE), status_code=500)(
                scope, receive, send
            )


def replay(body: bytes, receive: Receive) -> Receive:
    """A receive that hands the app the body a middleware already read, then the client's later messages."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
