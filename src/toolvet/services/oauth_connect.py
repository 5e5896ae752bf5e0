"""Connecting an OAuth-protected server: the operator's **Connect** (authorization code + PKCE) and
``toolvet server connect`` (which, for client credentials, needs nobody).

A Connect runs the SDK's authorization-code flow in a task of the running app: the flow discovers
the authorization server, registers toolvet where it must, and hands back the URL the operator is
sent to; it then waits for the callback. The callback's ``state`` is good once, for the console
session that started it, for ``oauth_connect_seconds``: an unknown, reused, expired or foreign state
is refused and stores nothing. The flow's tokens are stored sealed; they replace whatever was there.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from urllib.parse import parse_qs, urlsplit

import anyio
import anyio.abc
import anyio.to_thread
from mcp.shared.auth import AuthorizationCodeResult

from toolvet.db.models import ServerOAuth
from toolvet.errors import Forbidden, InvalidInput, UpstreamError
from toolvet.schemas.oauth import OAuthGrant
from toolvet.services import audit
from toolvet.services.auth import Permission, Principal
from toolvet.services.context import Context
from toolvet.services.oauth import config_of, flow_client, grant_of, load_oauth_server, write_grant
from toolvet.services.oauth_settings import oauth_out
from toolvet.upstream.errors import NeedsReconnect, describe
from toolvet.upstream.oauth import Consent, Grant, OAuthConfig, obtain


def session_key(secret: str) -> str:
    """What a flow is bound to: a digest of the console session's own secret."""
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(eq=False)
class _Pending:
    server: str
    session: str
    expires: float
    answer: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)
    url: str | None = None
    state: str | None = None
    result: AuthorizationCodeResult | None = None
    #: Why the flow failed (None: it stored its tokens).
    failure: str | None = "the flow did not finish"


def _server_plan(ctx: Context, principal: Principal, name: str, grant: OAuthGrant | None) -> tuple[OAuthConfig, int]:
    principal.require(Permission.MANAGE_HTTP_SERVERS)
    with ctx.db.transaction() as session:
        server = load_oauth_server(session, name, grant)
        return config_of(ctx, server), server.id


def _store_now(ctx: Context, principal: Principal, name: str, server_id: int, obtained: Grant) -> None:
    """Store a freshly obtained grant over whatever is stored (a person just consented), and say so
    in the audit log (the grant's state only, never a token)."""
    with ctx.db.transaction() as session:
        row = session.get(ServerOAuth, server_id)
        if row is None:
            raise UpstreamError(f"{name}: the server no longer uses OAuth")
        before = oauth_out(row)
        # What the server asked for beyond the first grant stays asked for by later Connects.
        fresh = replace(obtained, needs_reconnect=None, scope_asked=grant_of(ctx, row).scope_asked)
        if not write_grant(ctx, session, server_id, fresh, row.version):
            raise UpstreamError(f"{name}: its authorization changed while it was being stored; connect again")
        session.refresh(row)
        audit.record(session, principal, "server.connect", "server", f"server:{name}", before, oauth_out(row))


async def _store(ctx: Context, principal: Principal, name: str, server_id: int, obtained: Grant) -> None:
    await anyio.to_thread.run_sync(_store_now, ctx, principal, name, server_id, obtained)


async def connect_now(ctx: Context, principal: Principal, name: str) -> None:
    """Get a client-credentials server its token now (``toolvet server connect``)."""
    config, server_id = await anyio.to_thread.run_sync(_server_plan, ctx, principal, name,
                                                       OAuthGrant.CLIENT_CREDENTIALS)
    try:
        async with flow_client(ctx) as client:
            obtained = await obtain(client, config, Grant())
    except Exception as exc:
        raise UpstreamError(f"{name}: {describe(exc, config.server_url)}") from None
    await _store(ctx, principal, name, server_id, obtained)


class ConnectFlows:
    """The Connect flows of this process, waiting for their callbacks. ``async with flows.run()``."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._pending: dict[str, _Pending] = {}
        self._tg: anyio.abc.TaskGroup | None = None

    @asynccontextmanager
    async def run(self) -> AsyncIterator[ConnectFlows]:
        async with anyio.create_task_group() as tg:
            self._tg = tg
            self.ctx.connects = self
            try:
                yield self
            finally:
                self.ctx.connects = None
                self._tg = None
                tg.cancel_scope.cancel()

    async def start(self, principal: Principal, name: str, session: str) -> str:
        """Begin a Connect of ``name`` for the console session ``session``; the URL to send the
        operator to."""
        if self._tg is None:
            raise UpstreamError("Connect needs the running toolvet (toolvet serve)")
        config, server_id = await anyio.to_thread.run_sync(_server_plan, self.ctx, principal, name,
                                                           OAuthGrant.AUTHORIZATION_CODE)
        seconds = self.ctx.settings.oauth_connect_seconds
        pending = _Pending(name, session, time.monotonic() + seconds)
        url_known = anyio.Event()

        async def redirect(url: str) -> None:
            state = (parse_qs(urlsplit(url).query).get("state") or [""])[0]
            pending.url, pending.state = url, state
            self._pending[state] = pending
            url_known.set()

        async def callback() -> AuthorizationCodeResult:
            with anyio.move_on_after(max(pending.expires - time.monotonic(), 0)):
                await pending.answer.wait()
            if pending.result is None:
                raise NeedsReconnect("no consent within oauth_connect_seconds")
            return pending.result

        async def drive() -> None:
            try:
                async with flow_client(self.ctx) as client:
                    obtained = await obtain(client, config, Grant(), consent=Consent(redirect, callback))
                await _store(self.ctx, principal, name, server_id, obtained)
                pending.failure = None
            except Exception as exc:
                pending.failure = describe(exc, config.server_url)
            finally:
                self._pending.pop(pending.state or "", None)
                pending.done.set()
                url_known.set()

        self._tg.start_soon(drive)
        with anyio.move_on_after(self.ctx.settings.read_timeout * 2):
            await url_known.wait()
        if pending.url is None:
            raise UpstreamError(f"{name}: cannot start the OAuth flow: {pending.failure}")
        return pending.url

    async def finish(self, state: str, code: str | None, iss: str | None, error: str | None,
                     session: str) -> tuple[str, str | None]:
        """The callback: hand the code to its flow, wait for the tokens; (server, failure or None)."""
        pending = self._pending.get(state)
        if pending is None or time.monotonic() > pending.expires:
            raise InvalidInput("this authorization is unknown, used or expired: click Connect again", "state")
        if pending.session != session:
            raise Forbidden("this authorization was started in another console session")
        del self._pending[state]  # single use
        if error or not code:
            pending.answer.set()  # the flow ends without a result
            return pending.server, f"the authorization server said: {error or 'no code'}"
        pending.result = AuthorizationCodeResult(code=code, state=state, iss=iss)
        pending.answer.set()
        with anyio.move_on_after(self.ctx.settings.read_timeout * 2):
            await pending.done.wait()
        return pending.server, pending.failure
