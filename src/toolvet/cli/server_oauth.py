"""The OAuth options of ``toolvet server add|set``, and ``toolvet server connect``."""

from __future__ import annotations

from typing import Annotated, Any

import anyio
import typer

from toolvet.cli import render
from toolvet.cli.runtime import local
from toolvet.schemas.oauth import OAuthGrant
from toolvet.services import servers

AuthOpt = Annotated[str | None, typer.Option(
    "--auth", help="none (static headers only) or oauth2 (toolvet authorizes with OAuth 2.1).")]
GrantOpt = Annotated[OAuthGrant | None, typer.Option(
    "--oauth-grant", help="authorization_code (default: a person Connects once) or client_credentials.")]
ClientIdOpt = Annotated[str | None, typer.Option(
    "--oauth-client-id", help="A client registered by hand; unset: toolvet registers itself dynamically.")]
ClientSecretOpt = Annotated[str | None, typer.Option(
    "--oauth-client-secret", help="The client's secret. Write-only: never shown again.")]
ScopeOpt = Annotated[str | None, typer.Option("--oauth-scope", help="Scopes to ask for, space-separated.")]


def oauth_fields(auth: str | None, grant: OAuthGrant | None, client_id: str | None, client_secret: str | None,
                 scope: str | None, current: dict[str, Any] | None = None) -> dict[str, Any]:
    """The OAuth options given, as service input (``current``: the server's shown settings, which
    options not given keep)."""
    fields: dict[str, Any] = {}
    if auth is not None:
        fields["auth"] = auth
    if any(v is not None for v in (grant, client_id, client_secret, scope)):
        settings = {k: v for k, v in (current or {}).items() if k in ("grant", "client_id", "scope")}
        given = {"grant": grant.value if grant else None, "client_id": client_id, "client_secret": client_secret,
                 "scope": scope}
        settings.update({k: v for k, v in given.items() if v is not None})
        fields["oauth"] = settings
        fields.setdefault("auth", "oauth2")
    return fields


def connect(name: Annotated[str, typer.Argument(help="The server's name.")]) -> None:
    """Authorize toolvet at an OAuth-protected server: a client-credentials server gets its token now;
    for an authorization-code one, the URL where an operator clicks Connect is printed."""
    from toolvet.services.oauth_connect import connect_now  # the OAuth flows: not for `server list`

    with local() as (ctx, me):
        server = servers.get_server(ctx, me, name)
        if server.oauth is not None and server.oauth.grant is OAuthGrant.CLIENT_CREDENTIALS:
            anyio.run(connect_now, ctx, me, name)
            render.say(f"connected server {name} (client credentials)")
            return
        servers.require_oauth(server)
        url = f"{ctx.settings.resolved_public_url()}/console/servers/{name}#oauth"
    render.say(f"open {url} in a browser signed in to the console, and click Connect")
