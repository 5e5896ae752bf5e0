"""The REST API's error handlers: every error, ours or the framework's, rendered as
``{"error": {"type": ..., "message": ..., "field": ...}}`` through the one table in :mod:`toolvet.web`."""

from __future__ import annotations

import logging
from http import HTTPStatus

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from toolvet.errors import (
    InvalidInput,
    RateLimited,
    ToolvetError,
    Unauthenticated,
)
from toolvet.services.servers import invalid_from_errors
from toolvet.web import UnexpectedErrors, error_body, status_for

log = logging.getLogger("toolvet.api")

AUTHENTICATE_HEADERS = {"WWW-Authenticate": 'Bearer realm="toolvet"'}
_REQUEST_PARTS = ("body", "query", "path", "header", "cookie")


def render(exc: ToolvetError) -> JSONResponse:
    """One of our errors as its HTTP response."""
    status, kind = status_for(exc)
    field = exc.field if isinstance(exc, InvalidInput) else None
    headers = AUTHENTICATE_HEADERS if isinstance(exc, Unauthenticated) else None
    if isinstance(exc, RateLimited):
        headers = {"Retry-After": str(exc.retry_after)}
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


def install(app: FastAPI) -> None:
    """Register the handlers and the catch-all on ``app``."""
    app.add_exception_handler(ToolvetError, _toolvet_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_middleware(UnexpectedErrors)
