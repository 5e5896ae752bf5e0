"""Signing in with a token, and out again."""

from __future__ import annotations

from urllib.parse import urlsplit

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from toolvet.console.session import sign_in
from toolvet.console.visit import PREFIX, Visit, bare, safe_next, set_session_cookie
from toolvet.errors import Unauthenticated
from toolvet.services.context import Context


def cross_site(request: Request) -> bool:
    """Whether a browser sent this request from another site's page.

    Signing in has no session yet to hold a CSRF token, so a forged sign-in (into the attacker's
    account, to watch what the victim does there) is refused by where it came from: browsers send
    ``Origin`` with every form POST, and ``Sec-Fetch-Site`` too. A client that sends neither is not
    a browser another site can drive."""
    origin = request.headers.get("origin")
    if origin is not None:
        return origin == "null" or urlsplit(origin).netloc.lower() != request.headers.get("host", "").lower()
    return request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none")


async def login(request: Request) -> Response:
    """GET: the sign-in form. POST: check where it came from and the token, and start a session."""
    ctx: Context = request.app.state.ctx
    target = safe_next(request.query_params.get("next"))
    if request.method == "GET":
        return bare("login.html", next=target, error=None)
    if cross_site(request):
        return bare("error.html", 403, title="Refused",
                    message="A sign-in from another site's page is refused. Open the console and sign in there.")
    form = await request.form()
    token = form.get("token")
    target = safe_next(str(form.get("next") or ""))
    try:
        _, session = await anyio.to_thread.run_sync(sign_in, ctx, token if isinstance(token, str) else "")
    except Unauthenticated as exc:
        return bare("login.html", 401, next=target, error=exc.message)
    response = RedirectResponse(target, status_code=303)
    set_session_cookie(request, response, ctx, session)
    return response


async def logout(visit: Visit) -> Response:
    """End the session (a POST with the CSRF token, so another site cannot sign you out)."""
    response = RedirectResponse(f"{PREFIX}/login", status_code=303)
    set_session_cookie(visit.request, response, visit.ctx, None)
    return response
