"""An OAuth-protected MCP server and its authorization server, built with the SDK's auth support.

The authorization server is the SDK's (``mcp.server.auth.routes.create_auth_routes``: RFC 8414
metadata, RFC 7591 registration, authorize with PKCE, token, revoke) over :class:`Authority`, an
in-memory ``OAuthAuthorizationServerProvider``; the MCP server is an ``MCPServer`` whose
``TokenVerifier`` asks the same authority, and which serves RFC 9728 metadata and answers 401 with
its challenge. Both are one app on one loopback port.

The "person" is a consent page: ``/authorize`` sends the browser to ``/consent?id=...``, whose
**Allow** link redirects to the client's callback with a code. What the authority saw (the
``resource`` of each token request, refreshes, revocations) is kept for assertions.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html import escape
from typing import Any

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    ProviderTokenVerifier,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route

from tests.upstreams import Upstream, bound_socket, serve

SCOPE = "tools"


@dataclass
class Authority:
    """Clients, codes and tokens in memory; what was asked of it, for the tests to read."""

    issuer: str
    #: Lifetime of the tokens the code exchange issues, then of refreshed ones.
    first_lifetime: int = 3600
    refreshed_lifetime: int = 3600
    clients: dict[str, OAuthClientInformationFull] = field(default_factory=dict)
    consents: dict[str, tuple[OAuthClientInformationFull, AuthorizationParams]] = field(default_factory=dict)
    codes: dict[str, AuthorizationCode] = field(default_factory=dict)
    access: dict[str, AccessToken] = field(default_factory=dict)
    refresh: dict[str, RefreshToken] = field(default_factory=dict)
    #: The RFC 8707 ``resource`` of every token issued, in order.
    resources: list[str | None] = field(default_factory=list)
    refreshes: int = 0
    #: Refresh requests received, granted or not.
    refresh_requests: int = 0

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        consent = secrets.token_urlsafe(16)
        self.consents[consent] = (client, params)
        return f"{self.issuer}/consent?id={consent}"

    def allow(self, consent: str) -> str:
        """The person said yes: the callback URL with a fresh code."""
        client, params = self.consents.pop(consent)
        code = AuthorizationCode(
            code=secrets.token_urlsafe(24), scopes=params.scopes or [SCOPE], expires_at=time.time() + 300,
            client_id=client.client_id or "", code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri, redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        self.codes[code.code] = code
        return construct_redirect_uri(str(params.redirect_uri), code=code.code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, authorization_code: str) -> Any:
        code = self.codes.get(authorization_code)
        return code if code is not None and code.client_id == client.client_id else None

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: Any
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        return self._issue(client, authorization_code.scopes, authorization_code.resource, self.first_lifetime)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> Any:
        self.refresh_requests += 1
        token = self.refresh.get(refresh_token)
        return token if token is not None and token.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: Any, scopes: list[str], resource: str | None = None
    ) -> OAuthToken:
        self.refreshes += 1
        del self.refresh[refresh_token.token]  # rotated: a refresh token is good once
        return self._issue(client, scopes or refresh_token.scopes, resource or refresh_token.resource,
                           self.refreshed_lifetime)

    async def load_access_token(self, token: str) -> Any:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: Any) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def revoke_everything(self) -> None:
        """What an admin revoking the client's grant does: every access and refresh token ends."""
        self.access.clear()
        self.refresh.clear()

    def revoke_access(self) -> None:
        """Access tokens end (the server restarted its sessions, say); refresh tokens stay good."""
        self.access.clear()

    def _issue(self, client: OAuthClientInformationFull, scopes: list[str], resource: str | None,
               lifetime: int) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        client_id = client.client_id or ""
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + lifetime, resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        self.resources.append(resource)
        return OAuthToken(access_token=access, expires_in=lifetime, refresh_token=refresh, scope=" ".join(scopes))


@dataclass
class ProtectedUpstream:
    """The running pair: the MCP endpoint's URL, its authority, and the HTTP requests it got."""

    upstream: Upstream
    authority: Authority

    @property
    def url(self) -> str:
        return self.upstream.url


def _mcp_server(authority: Authority, base: str) -> MCPServer:
    auth = AuthSettings(issuer_url=AnyHttpUrl(base), resource_server_url=AnyHttpUrl(f"{base}/mcp"),
                        required_scopes=[SCOPE], validate_token_resource=True)
    server = MCPServer("protected", token_verifier=ProviderTokenVerifier(authority), auth=auth)

    @server.tool()
    def secret_word() -> str:
        """Says the word only an authorized caller may hear."""
        return "swordfish"

    return server


@contextmanager
def protected_server(*, first_lifetime: int = 3600, refreshed_lifetime: int = 3600) -> Iterator[ProtectedUpstream]:
    """Serve the authorization server and the protected MCP server on one free loopback port."""
    sock = bound_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    authority = Authority(base, first_lifetime, refreshed_lifetime)
    mcp_app = _mcp_server(authority, base).streamable_http_app(json_response=True)

    async def consent(request: Request) -> Response:
        consent_id = request.query_params.get("id", "")
        if consent_id not in authority.consents:
            return HTMLResponse("<p>unknown consent</p>", status_code=400)
        client, _ = authority.consents[consent_id]
        return HTMLResponse(f"<h1>Allow {escape(client.client_name or 'a client')}?</h1>"
                            f'<a id="allow" href="/consent/allow?id={escape(consent_id)}">Allow</a>')

    async def allow(request: Request) -> Response:
        return RedirectResponse(authority.allow(request.query_params.get("id", "")), status_code=302)

    routes = [
        *create_auth_routes(authority, AnyHttpUrl(base),
                            client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=[SCOPE]),
                            revocation_options=RevocationOptions(enabled=True)),
        Route("/consent", consent),
        Route("/consent/allow", allow),
        Mount("/", app=mcp_app),
    ]
    app = Starlette(routes=routes, lifespan=lambda _app: mcp_app.router.lifespan_context(mcp_app))
    with serve(app, "/mcp", sock) as upstream:
        yield ProtectedUpstream(upstream, authority)
