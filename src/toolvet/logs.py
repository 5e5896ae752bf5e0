"""toolvet's logs: plain lines or one JSON object a line (``log_format``), each with the id of the
REST or MCP request it was written in.

Every HTTP request gets an id: the client's ``X-Request-Id`` when it sends a sensible one (at most
128 letters, digits and ``-_.:``), a fresh one otherwise. It is echoed in the response's
``X-Request-Id`` and set in :data:`REQUEST_ID` for the request's lifetime, so anything logged while
it runs names it. At ``INFO`` each request is also logged once it is answered (``toolvet.requests``:
method, path, status, milliseconds).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["REQUEST_ID", "REQUEST_ID_HEADER", "JsonFormatter", "configure", "request_id_of", "serve_with_id"]

#: The id of the request being served (None outside one).
REQUEST_ID: ContextVar[str | None] = ContextVar("toolvet_request_id", default=None)
REQUEST_ID_HEADER: Final = "X-Request-Id"
_HEADER_KEY: Final = b"x-request-id"
_SENSIBLE: Final = re.compile(r"[A-Za-z0-9._:-]{1,128}")
TEXT_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"

_HANDLER_NAME: Final = "toolvet"

requests_log = logging.getLogger("toolvet.requests")


class _RequestIdFilter(logging.Filter):
    """Stamps every record with the current request's id (``-`` outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = REQUEST_ID.get() or "-"
        return True


#: LogRecord attributes that are not a caller's ``extra``.
_STANDARD: Final = frozenset(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {
    "message", "asctime", "request_id", "color_message"}  # uvicorn's ANSI-coloured copy of the message


class JsonFormatter(logging.Formatter):
    """One JSON object a line: ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message``,
    ``request_id`` (when in a request), ``exception`` (when one is logged) and any ``extra`` fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = getattr(record, "request_id", None) or REQUEST_ID.get()
        if request_id and request_id != "-":
            entry["request_id"] = request_id
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


def configure(log_format: str, level: str, stream: Any = None) -> logging.Handler:
    """Send every log record (toolvet's, uvicorn's, the libraries') to one handler on ``stream``
    (stderr), formatted as ``log_format`` says; returns the handler."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT))
    handler.addFilter(_RequestIdFilter())
    handler.name = _HANDLER_NAME
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.name == _HANDLER_NAME]:  # a second serve in one process
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    return handler


def request_id_of(scope: Scope) -> str:
    """The client's sensible ``X-Request-Id``, or a fresh one."""
    for key, value in scope.get("headers", ()):
        if key == _HEADER_KEY:
            text: str = value.decode("latin-1")
            if _SENSIBLE.fullmatch(text):
                return text
            break
    return os.urandom(16).hex()  # as random as uuid4().hex, a quarter of its cost on the /mcp path


async def serve_with_id(scope: Scope, receive: Receive, send: Send, app: ASGIApp) -> None:
    """Serve one HTTP request with ``app`` under its id: :data:`REQUEST_ID` set, the id added to the
    response's headers, and (at ``INFO``) the request logged when it is answered. A plain coroutine,
    not a context manager or a middleware object: it runs on every ``/mcp`` call."""
    request_id = request_id_of(scope)
    header = (_HEADER_KEY, request_id.encode("latin-1"))
    token = REQUEST_ID.set(request_id)
    status = 0
    started = time.perf_counter()

    async def send_with_id(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            # A copy: the app may send one headers list more than once (a prepared response).
            message = {**message, "headers": [*message.get("headers", ()), header]}
        await send(message)

    try:
        await app(scope, receive, send_with_id)
    finally:
        if requests_log.isEnabledFor(logging.INFO):
            requests_log.info("%s %s %s %.1f ms", scope.get("method"), scope.get("path"), status,
                              (time.perf_counter() - started) * 1000,
                              extra={"method": scope.get("method"), "path": scope.get("path"), "status": status})
        REQUEST_ID.reset(token)
