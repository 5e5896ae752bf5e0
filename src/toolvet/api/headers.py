"""Browser-facing security headers on every answer of the API and the console.

No page of toolvet may be framed (``frame-ancestors 'none'`` and ``X-Frame-Options: DENY``, against
clickjacking an operator into approving a call); nothing is sniffed into another type; the referrer
leaves the origin only as ``same-origin`` allows. The console's pages load scripts, styles and
everything else from toolvet alone, and run no inline script. The API's JSON answers load nothing.
``/docs`` (FastAPI's Swagger UI) needs its CDN and its inline bootstrap script, and gets a policy that
allows exactly those.
"""

from __future__ import annotations

from typing import Final

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONSOLE_POLICY: Final = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'"
)
API_POLICY: Final = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
DOCS_CDN: Final = "https://cdn.jsdelivr.net"
DOCS_POLICY: Final = (
    f"default-src 'none'; script-src {DOCS_CDN} 'unsafe-inline'; style-src {DOCS_CDN} 'unsafe-inline'; "
    "img-src 'self' data: https://fastapi.tiangolo.com; connect-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
COMMON: Final = (
    ("X-Frame-Options", "DENY"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "same-origin"),
)


def policy_for(path: str) -> str:
    """The Content-Security-Policy of the answer to ``path``."""
    if path == "/console" or path.startswith("/console/") or path == "/":
        return CONSOLE_POLICY
    if path == "/docs" or path.startswith("/docs/"):
        return DOCS_POLICY
    return API_POLICY


class SecurityHeaders:
    """ASGI middleware: adds the headers above to every HTTP answer that does not set them itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        policy = policy_for(scope["path"])

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("Content-Security-Policy", policy)
                for name, value in COMMON:
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)
