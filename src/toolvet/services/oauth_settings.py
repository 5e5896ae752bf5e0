"""An OAuth-protected upstream's settings as the registry keeps them (``auth = oauth2``): what the REST and
CLI views show, and the change of grant, client or scope. Database and schemas only, so the registry's
commands need not load the OAuth flows (``services.oauth``) or the HTTP stack."""

from __future__ import annotations

import json
from typing import Any

from toolvet.db.models import Server, ServerOAuth
from toolvet.errors import InvalidInput
from toolvet.schemas.oauth import AuthMode, OAuthGrant, OAuthOut, OAuthSettings, OAuthStatus
from toolvet.services.context import Context


def oauth_out(row: ServerOAuth | None) -> OAuthOut | None:
    if row is None:
        return None
    return OAuthOut(grant=OAuthGrant(row.grant), client_id=row.client_id, scope=row.scope,
                    status=OAuthStatus(row.status), error=row.error, expires_at=row.expires_at)


def auth_mode(server: Server) -> AuthMode:
    return AuthMode.NONE if server.oauth is None else AuthMode.OAUTH2


def apply_settings(ctx: Context, server: Server, auth: AuthMode | None, settings: OAuthSettings | None) -> None:
    """Give ``server`` the asked-for auth: ``none`` drops its OAuth row, ``oauth2`` creates or changes
    it. Changing how toolvet authorizes (grant, client, scope) forgets the tokens: they were issued
    for the old settings."""
    if auth is AuthMode.NONE:
        server.oauth = None
        return
    if auth is None and settings is None:
        return
    if server.oauth is None and settings is None:
        settings = OAuthSettings()
    if settings is None:
        return
    row = server.oauth
    sealed = opened(ctx, row)
    client_secret = settings.client_secret if settings.client_secret is not None else sealed.get("client_secret")
    if row is not None and (row.grant, row.client_id, row.scope, sealed.get("client_secret")) == (
            settings.grant.value, settings.client_id, settings.scope, client_secret):
        return
    if settings.grant is OAuthGrant.CLIENT_CREDENTIALS and not (settings.client_id and client_secret):
        raise InvalidInput("client credentials need a client_id and a client_secret", "oauth")
    if row is None:
        row = ServerOAuth(version=0)
        server.oauth = row
    row.grant, row.client_id, row.scope = settings.grant.value, settings.client_id, settings.scope
    row.secret = ctx.secrets.seal({"client_secret": client_secret} if client_secret else {})
    row.status, row.error, row.expires_at = OAuthStatus.NOT_CONNECTED.value, None, None
    row.version = (row.version or 0) + 1


def opened(ctx: Context, row: ServerOAuth | None) -> dict[str, Any]:
    if row is None or not row.secret:
        return {}
    return {key: json.loads(value) if key == "grant" else value for key, value in ctx.secrets.open(row.secret).items()}
