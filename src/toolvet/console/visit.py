"""One visit to a console page: who is signed in, the form they sent, and how a page is answered.

``@page`` wraps every view: it opens the session (redirecting to sign-in without one), checks the
CSRF token of every POST before the view runs, runs service calls off the event loop, and renders
our errors as an HTML page with the status the API's one error table gives them.
"""

from __future__ import annotations

import functools
import json
import unicodedata
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import anyio.to_thread
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from toolvet.console.session import COOKIE, MAX_AGE, Session, open_cookie, principal_for
from toolvet.errors import ToolvetError
from toolvet.services.attention import Attention, attention
from toolvet.services.auth import Permission, Principal
from toolvet.services.context import Context
from toolvet.web import status_for

T = TypeVar("T")
PREFIX = "/console"
TEMPLATES = Path(__file__).parent / "templates"


def url_part(value: str) -> str:
    """A path segment or query value, every reserved character escaped (tool names are free text)."""
    return quote(str(value), safe="")


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S UTC") if value is not None else "never"


def reveal(text: Any) -> str:
    """Text with invisible and bidirectional control characters made visible as ``\\uXXXX``:
    a reviewer must see what the model will read."""
    return "".join(
        f"\\u{ord(ch):04x}" if ch not in "\n\t" and unicodedata.category(ch) in ("Cc", "Cf") else ch
        for ch in str(text)
    )


def pretty(value: Any) -> str:
    """JSON for reading: indented, non-ASCII kept, invisible characters revealed (escaped by autoescape)."""
    return reveal(json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False))


_SEVERITIES = ("info", "warning", "high")


def top_severity(findings: Any) -> str:
    """The most serious severity among a tool's findings ("" for none, "info" for findings without one)."""
    ranks = [_SEVERITIES.index(f["severity"]) for f in findings or [] if f.get("severity") in _SEVERITIES]
    return _SEVERITIES[max(ranks)] if ranks else ("info" if findings else "")


ENV = Environment(
    loader=FileSystemLoader(TEMPLATES),
    autoescape=select_autoescape(default=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
ENV.filters["q"] = url_part
ENV.filters["when"] = _when
ENV.filters["reveal"] = reveal
ENV.filters["pretty"] = pretty
ENV.filters["top_severity"] = top_severity


def set_session_cookie(request: Request, response: Response, ctx: Context, session: Session | None) -> None:
    """Write (or with None, clear) the session cookie: HttpOnly, SameSite=Lax, Secure over https."""
    if session is None:
        response.delete_cookie(COOKIE, path=PREFIX)
        return
    response.set_cookie(
        COOKIE,
        session.seal(ctx),
        max_age=MAX_AGE,
        path=PREFIX,
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )


def safe_next(value: str | None, default: str = PREFIX + "/") -> str:
    """Only a console path may be redirected to (no open redirect through ``next``)."""
    if value and value.startswith(PREFIX + "/") and not value.startswith("//") and "\\" not in value:
        return value
    return default


@dataclass
class Visit:
    """The signed-in request a view works with."""

    request: Request
    ctx: Context
    principal: Principal
    session: Session
    form: FormData | None = None
    #: What needs a person (the navigation's counts), read for every page shown.
    attention: Attention | None = None
    _session_out: Session | None = field(default=None, repr=False)

    def can(self, permission: str) -> bool:
        return self.principal.can(Permission(permission))

    async def run(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Call a synchronous service function as this principal, off the event loop."""
        return await anyio.to_thread.run_sync(
            functools.partial(function, self.ctx, self.principal, *args, **kwargs)
        )

    def field(self, name: str, default: str = "") -> str:
        value = self.form.get(name) if self.form is not None else self.request.query_params.get(name)
        return value if isinstance(value, str) else default

    def render(self, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        flash = (self.session.flash, self.session.flash_kind) if self.session.flash else None
        if flash:
            self._session_out = self.session.without_flash()
        html = ENV.get_template(template).render(
            principal=self.principal,
            csrf=self.session.csrf,
            flash=flash,
            can=self.can,
            path=self.request.url.path,
            here=self.here(),
            attention=self.attention,
            **context,
        )
        return HTMLResponse(html, status_code=status)

    def here(self) -> str:
        query = self.request.url.query
        return self.request.url.path + (f"?{query}" if query else "")

    def redirect(self, to: str, message: str = "", kind: str = "ok") -> RedirectResponse:
        """303 after a POST, carrying a one-time message in the session."""
        if message:
            self._session_out = self.session.with_flash(message, kind)
        return RedirectResponse(to, status_code=303)

    def finish(self, response: Response) -> Response:
        if self._session_out is not None:
            set_session_cookie(self.request, response, self.ctx, self._session_out)
        return response


View = Callable[[Visit], Awaitable[Response]]


def bare(template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """A page outside a session (sign-in, errors before sign-in)."""
    html = ENV.get_template(template).render(
        principal=None, flash=None, csrf="", can=lambda _: False, path="", here="", attention=None, **context
    )
    return HTMLResponse(html, status_code=status)


def page(view: View) -> Callable[[Request], Awaitable[Response]]:
    """Wrap a view: session, CSRF on POST, errors as pages."""

    @functools.wraps(view)
    async def endpoint(request: Request) -> Response:
        ctx: Context = request.app.state.ctx
        session = open_cookie(ctx, request.cookies.get(COOKIE))
        principal = await anyio.to_thread.run_sync(principal_for, ctx, session) if session else None
        if session is None or principal is None:
            if request.method != "GET":
                return bare(
                    "error.html",
                    401,
                    title="Signed out",
                    message="Your session has ended. Sign in again and repeat the change.",
                )
            redirect = RedirectResponse(f"{PREFIX}/login?next={url_part(request.url.path)}", status_code=303)
            set_session_cookie(request, redirect, ctx, None)
            return redirect
        form = None
        if request.method == "POST":
            form = await request.form()
            sent = form.get("csrf")
            if not session.csrf_ok(sent if isinstance(sent, str) else None):
                return bare(
                    "error.html",
                    403,
                    title="Refused",
                    message="The form's security token is missing or wrong. Reload the page and try again.",
                )
        visit = Visit(request, ctx, principal, session, form)
        if request.method == "GET" and principal.can(Permission.READ):
            visit.attention = await anyio.to_thread.run_sync(attention, ctx, principal)
        try:
            response = await view(visit)
        except ToolvetError as exc:
            status, _ = status_for(exc)
            response = visit.render(
                "error.html", status, title="Refused" if status == 403 else "Error", message=exc.message
            )
        return visit.finish(response)

    return endpoint
