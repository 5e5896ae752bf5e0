"""Bounds on request bodies: a size cap and a JSON nesting limit, checked before any parser runs.

The size cap: ``Content-Length`` checked first; a chunked body (or a form) read through Starlette's
:class:`~starlette.middleware.body_limit.RequestBodyLimitMiddleware`, which counts it as it arrives;
a body of a declared length counted as :class:`RequestLimits` reads it (nothing read past the cap
either way, and no limiter wrapped around an ``/mcp`` call's receive and send).
:class:`RequestLimits` reads the body, which the cap keeps small, and measures its nesting
on the raw bytes: Python's JSON parser recurses, so a body nested a few thousand deep would
otherwise end in a ``RecursionError`` deep inside whichever parser met it first.

The REST API and the console answer a refusal as the API's JSON error; ``/mcp`` answers a JSON-RPC
error object, which an MCP client can show.
"""

from __future__ import annotations

from typing import Any, Final

from starlette.exceptions import HTTPException
from starlette.middleware.body_limit import RequestBodyLimitMiddleware
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from toolvet.jsontext import json_depth_exceeds
from toolvet.web import error_body, replay

#: A JSON string (escapes included) or a bracket: brackets inside strings do not nest anything.
_FORMS: Final = ("application/x-www-form-urlencoded", "multipart/form-data")
_FORMS_BYTES: Final = tuple(form.encode() for form in _FORMS)

def rest_refusal(max_bytes: int, max_depth: int, status: int) -> JSONResponse:
    """The REST API's error for a refused body: 413 too large, 422 nested too deep."""
    if status == 413:
        return JSONResponse(error_body("content_too_large", f"the request body is larger than the limit of "
                                       f"{max_bytes} bytes (TOOLVET_MAX_BODY_BYTES)", "body"), status_code=413)
    return JSONResponse(error_body("invalid_input", f"body: the JSON is nested deeper than the limit of "
                                   f"{max_depth} levels (TOOLVET_MAX_JSON_DEPTH)", "body"), status_code=422)


def mcp_refusal(max_bytes: int, max_depth: int, status: int) -> JSONResponse:
    """A JSON-RPC error object for ``/mcp`` (id null: the request was never read): 413, or 400."""
    if status == 413:
        code, message = -32600, f"request body larger than the limit of {max_bytes} bytes (TOOLVET_MAX_BODY_BYTES)"
    else:
        code, message = -32700, f"parse error: JSON nested deeper than the limit of {max_depth} levels " \
            "(TOOLVET_MAX_JSON_DEPTH)"
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return JSONResponse(body, status_code=413 if status == 413 else 400)


def is_mcp_path(path: str) -> bool:
    """The MCP endpoint and the paths under it, which answer refusals in JSON-RPC."""
    return path == "/mcp" or path.startswith("/mcp/")


class RequestLimits:
    """ASGI middleware: the size cap, then the depth limit, on every HTTP request with a body.

    The body is read here (through Starlette's limiter, so never past the cap), its nesting measured,
    and handed on whole to the app. A body of a form content type is left to the form parser, which
    reads it under the same cap. ``mcp`` marks an app that is the MCP endpoint alone: every body is
    JSON there and every refusal is JSON-RPC; otherwise that holds for :func:`is_mcp_path` paths."""

    def __init__(self, app: ASGIApp, *, max_bytes: int, max_depth: int, mcp: bool = False) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_depth = max_depth
        self.mcp = mcp
        self.limited = RequestBodyLimitMiddleware(self._checked, max_body_size=max_bytes)

    def _refuse(self, scope: Scope, status: int) -> JSONResponse:
        render = mcp_refusal if self.mcp or is_mcp_path(scope["path"]) else rest_refusal
        return render(self.max_bytes, self.max_depth, status)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length, chunked, kind = _body_headers(scope)
        if (length is None and not chunked) or length == b"0":
            await self.app(scope, receive, send)  # no body: HTTP/1.1 has one only with either header
            return
        if length is not None and length.isdigit():
            if int(length) > self.max_bytes:
                await self._refuse(scope, 413)(scope, receive, send)  # refused before a byte is read
                return
            if not chunked and (self.mcp or not kind.lower().startswith(_FORMS_BYTES)):
                # A declared length within the cap, read here: the body is counted as it arrives
                # (_checked), with no limiter wrapped around every receive and send of the request.
                await self._checked(scope, receive, send)
                return
        await self.limited(scope, receive, send)

    async def _checked(self, scope: Scope, receive: Receive, send: Send) -> None:
        mcp = self.mcp or is_mcp_path(scope["path"])
        kind = _body_headers(scope)[2].decode("latin-1").split(";", 1)[0].strip().lower()
        if not mcp and kind.startswith(_FORMS):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        try:
            while more:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > self.max_bytes:  # only a body longer than it declared gets here
                    await self._refuse(scope, 413)(scope, receive, send)
                    return
                chunks.append(chunk)
                more = message.get("more_body", False)
        except HTTPException as exc:  # the limiter's: the chunked body went past the cap
            if exc.status_code != 413:
                raise
            await self._refuse(scope, 413)(scope, receive, send)
            return
        body = b"".join(chunks)
        json_like = mcp or not kind or kind == "application/json" or kind.endswith("+json")
        if json_like and json_depth_exceeds(body, self.max_depth):
            await self._refuse(scope, 400)(scope, receive, send)
            return
        await self.app(scope, replay(body, receive), send)


def _body_headers(scope: Scope) -> tuple[bytes | None, bool, bytes]:
    """Content-Length, whether Transfer-Encoding is set, and Content-Type, from one pass over the
    raw headers (this runs ahead of every ``/mcp`` request)."""
    length: bytes | None = None
    chunked = False
    kind = b""
    for name, value in scope["headers"]:
        name = name.lower()
        if name == b"content-length":
            length = value
        elif name == b"transfer-encoding":
            chunked = True
        elif name == b"content-type":
            kind = value
    return length, chunked, kind

