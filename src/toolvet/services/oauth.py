"""OAuth-protected upstreams (``auth = oauth2``): their settings, their grant in the database, and the
per-process :class:`~toolvet.upstream.oauth.TokenSource` every target of the server carries.

The grant (client secret, registered client, tokens, discovered metadata) is sealed with the secret
box like headers and never leaves toolvet; what is shown is the grant type, client id, scope, status
(``not connected``, ``connected``, ``needs reconnect``) and the token's expiry. A refresh writes the
grant only if the version it read is still stored (compare-and-set), see ``upstream.oauth``.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import UTC, datetime

import anyio.to_thread
import httpx2
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from toolvet.db.models import Server, ServerOAuth
from toolvet.errors import InvalidInput, NotFound
from toolvet.schemas.oauth import OAuthGrant, OAuthStatus
from toolvet.services.context import Context
from toolvet.services.oauth_settings import opened
from toolvet.upstream.guard import AddressGuard
from toolvet.upstream.http import http_client
from toolvet.upstream.oauth import Grant, OAuthConfig, TokenSource, union_scopes

CALLBACK_PATH = "/console/oauth/callback"


def grant_of(ctx: Context, row: ServerOAuth) -> Grant:
    """The grant stored (sealed) in ``row``."""
    stored = opened(ctx, row).get("grant") or {}
    fields = {key: stored.get(key) for key in ("tokens", "expires_at", "client_info", "metadata", "resource_metadata",
                                               "claimed_until", "scope_asked")}
    reconnect = (row.error or "refused") if row.status == OAuthStatus.NEEDS_RECONNECT else None
    return Grant(**fields, needs_reconnect=reconnect, version=row.version)


class DbGrantStore:
    """One server's grant in ``server_oauth``, read and written in worker threads."""

    def __init__(self, ctx: Context, server_id: int) -> None:
        self.ctx = ctx
        self.server_id = server_id

    def _load(self) -> Grant:
        with self.ctx.db.transaction() as session:
            row = session.get(ServerOAuth, self.server_id)
            if row is None:
                return Grant(needs_reconnect="the server no longer uses OAuth")
            return grant_of(self.ctx, row)

    async def load(self) -> Grant:
        return await anyio.to_thread.run_sync(self._load)

    def save_now(self, grant: Grant, read_version: int) -> bool:
        with self.ctx.db.transaction() as session:
            return write_grant(self.ctx, session, self.server_id, grant, read_version)

    async def save(self, grant: Grant, read_version: int) -> bool:
        return await anyio.to_thread.run_sync(self.save_now, grant, read_version)


def write_grant(ctx: Context, session: Session, server_id: int, grant: Grant, read_version: int) -> bool:
    """Store ``grant`` if ``read_version`` is still the stored version (one UPDATE: atomic on both
    databases); keeps the client secret."""
    row = session.get(ServerOAuth, server_id)
    if row is None:
        return False
    sealed = opened(ctx, row)
    blob = {key: value for key, value in asdict(grant).items() if key not in ("version", "needs_reconnect")}
    secret = {"grant": json.dumps(blob)}
    if sealed.get("client_secret"):
        secret["client_secret"] = sealed["client_secret"]
    if grant.needs_reconnect:
        status, error = OAuthStatus.NEEDS_RECONNECT, grant.needs_reconnect
    else:
        status, error = (OAuthStatus.CONNECTED if grant.access_token else OAuthStatus.NOT_CONNECTED), None
    expires = datetime.fromtimestamp(grant.expires_at, UTC) if grant.expires_at else None
    done = session.execute(
        update(ServerOAuth)
        .where(ServerOAuth.server_id == server_id, ServerOAuth.version == read_version)
        .values(secret=ctx.secrets.seal(secret), status=status.value, error=error, expires_at=expires,
                version=read_version + 1)
        .execution_options(synchronize_session=False)
    )
    return bool(getattr(done, "rowcount", 0) == 1)


def config_of(ctx: Context, server: Server) -> OAuthConfig:
    row = server.oauth
    assert row is not None and server.url is not None
    redirect = ctx.settings.resolved_public_url() + CALLBACK_PATH
    # What the server asked for when it refused a token as too narrow is asked for again, with the
    # operator's scope, by the next Connect (or by a machine client's next token).
    asked = grant_of(ctx, row).scope_asked
    return OAuthConfig(server_url=server.url, grant=row.grant,  # type: ignore[arg-type]
                       client_id=row.client_id, client_secret=opened(ctx, row).get("client_secret"),
                       scope=union_scopes(row.scope, asked), redirect_uri=redirect)


def flow_client(ctx: Context) -> httpx2.AsyncClient:
    """A client for an OAuth flow's requests, guarded like every upstream connection."""
    s = ctx.settings
    return http_client(timeout=httpx2.Timeout(s.read_timeout, connect=s.connect_timeout),
                       guard=AddressGuard(s.upstream_deny), max_connections=8, max_keepalive=8)


def token_source(ctx: Context, server: Server) -> TokenSource | None:
    """The server's token source in this process (the same object while its settings stay), or None
    for a server without OAuth."""
    if server.oauth is None or server.url is None:
        return None
    config = config_of(ctx, server)
    source = ctx.token_sources.get(server.id)
    if source is None or source.config != config:
        source = TokenSource(config, DbGrantStore(ctx, server.id), lambda: flow_client(ctx),
                             skew=ctx.settings.oauth_refresh_skew, wait=2 * ctx.settings.read_timeout)
        ctx.token_sources[server.id] = source
    return source


def load_oauth_server(session: Session, name: str, grant: OAuthGrant | None = None) -> Server:
    """The named server, which must use OAuth (with ``grant`` when given)."""
    server = session.scalar(select(Server).where(Server.name == name))
    if server is None:
        raise NotFound(f"server {name!r} not found")
    if server.oauth is None:
        raise InvalidInput(f"server {name!r} does not use OAuth (auth = none)", "auth")
    if grant is not None and server.oauth.grant != grant.value:
        raise InvalidInput(f"server {name!r} uses the {server.oauth.grant} grant", "oauth")
    return server
