"""The one table from toolvet's error tree to HTTP, and the handlers that render every error, ours
or the framework's, as ``{"error": {"type": ..., "message": ..., "field": ...}}``."""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolvet.errors import (
    Conflict,
    Forbidden,
    InvalidInput,
    NotFound,
    ToolvetError,
    Unauthenticated,
    UpstreamError,
)
from toolvet.services.servers import invalid_from_errors

log = logging.getLogger("toolvet.api")

#: Looked up along the error's class hierarchy, so ReadOnlyField (an InvalidInput) is a 422 and any
#: ToolvetError not listed falls back to 400.
ERROR_TABLE: dict[type[ToolvetError], tuple[int, str]] = {
    NotFound: (404, "not_found"),
    Conflict: (409, "conflict"),
    InvalidInput: (422, "invalid_input"),
    Unauthenticated: (401, "unauthenticated"),
    Forbidden: (403, "forbidden"),
    UpstreamError: (502, "upstream_error"),
    ToolvetError: (400, "bad_request"),
}
AUTHENTICATE_HEADERS = {"WWW-Authenticate": 'Bearer realm="toolvet"'}
INTERNAL_MESSAGE = "an unexpected error occurred; it has been logged"
_REQUEST_PARTS = ("body", "query", "path", "header", "cookie")


def status_for(exc: ToolvetError) -> tuple[int, str]:
    """The HTTP status and error type of one of our errors."""
    for cls in type(exc).__mro__:
        if cls in ERROR_TABLE:
            return ERROR_TABLE[cls]
    raise AssertionError("ToolvetError is in the table")  # pragma: no cover


def error_body(kind: str, message: str, field: str | None = None) -> dict[str, Any]:
    """The body every error response carries."""
    return {"error": {"type": kind, "message": message, "field": field}}


def render(exc: ToolvetError) -> JSONResponse:
    """One of our errors as its HTTP response."""
    status, kind = status_for(exc)
    field = exc.field if isinstance(exc, InvalidInput) else None
    headers = AUTHENTICATE_HEADERS if isinstance(exc, Unauthenticated) else None
    return JSONResponse(error_body(kind, exc.message, field), status_code=status, headers=headers)


def invalid_from_request(exc: RequestValidationError) -> InvalidInput:
    """FastAPI's validation error as ours, naming the field without its ``body``/``query`` prefix."""
    first = dict(exc.errors()[0])
    if first.get("type") == "json_invalid":
        return InvalidInput(
            f"the request body is not valid JSON ({first.get('msg', 'decode error')})", "body"
        )
    loc = tuple(first.get("loc", ()))
    if loc and loc[0] in _REQUEST_PARTS:
        loc = loc[1:]
    if not loc and first.get("type") == "missing":
        return InvalidInput("a JSON body is required", "body")
    error = invalid_from_errors([{**first, "loc": loc}])
    # Nothing more precise to name (e.g. a JSON array where an object belongs): the body itself.
    return error if error.field else InvalidInput(error.reason, "body")


async def _toolvet_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ToolvetError)
    return render(exc)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return render(invalid_from_request(exc))


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    """The framework's own errors (unknown route, wrong method) in our body shape."""
    assert isinstance(exc, HTTPException)
    phrase = HTTPStatus(exc.status_code).phrase
    message = exc.detail if isinstance(exc.detail, str) else phrase
    return JSONResponse(
        error_body(phrase.lower().replace(" ", "_").replace("-", "_"), message),
        status_code=exc.status_code,
        headers=exc.headers,
    )


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


def install(app: FastAPI) -> None:
    """Register the handlers and the catch-all on ``app``."""
    app.add_exception_handler(ToolvetError, _toolvet_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_middleware(UnexpectedErrors)
