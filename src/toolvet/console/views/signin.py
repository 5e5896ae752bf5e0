"""Signing in with a token, and out again."""

from __future__ import annotations

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from toolvet.console.session import sign_in
from toolvet.console.visit import PREFIX, Visit, bare, safe_next, set_session_cookie
from toolvet.errors import Unauthenticated
from toolvet.services.context import Context


async def login(request: Request) -> Response:
    """GET: the sign-in form. POST: check the token and start a session (no CSRF yet: no session)."""
    ctx: Context = request.app.state.ctx
    target = safe_next(request.query_params.get("next"))
    if request.method == "GET":
        return bare("login.html", next=target, error=None)
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
