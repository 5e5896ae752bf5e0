"""An MCP server for machines: OAuth 2.1 client credentials, its authorization server built with Authlib.

The token endpoint is Authlib's ``AuthorizationServer`` with its ``ClientCredentialsGrant`` (client
authentication by ``client_secret_basic`` or ``client_secret_post``, scope checks, bearer tokens);
the MCP server is an ``MCPServer`` whose ``TokenVerifier`` reads the tokens Authlib saved, bound to
the RFC 8707 ``resource`` the client named. RFC 8414 metadata names the token endpoint. One app on
one loopback port, like :mod:`tests.servers.oauth_server`.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from authlib.oauth2.rfc6749 import AuthorizationServer, ClientMixin, OAuth2Request
from authlib.oauth2.rfc6749.grants import ClientCredentialsGrant
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route

from tests.servers.oauth_server import SCOPE
from tests.upstreams import Upstream, bound_socket, serve

CLIENT_ID = "toolvet-machine"
CLIENT_SECRET = "s3cret-for-tests"


@dataclass
class Client(ClientMixin):  # type: ignore[misc]
    client_id: str
    client_secret: str

    def get_client_id(self) -> str:
        return self.client_id

    def get_allowed_scope(self, scope: str) -> str:
        return " ".join(s for s in (scope or SCOPE).split() if s == SCOPE)

    def check_client_secret(self, client_secret: str) -> bool:
        return client_secret == self.client_secret

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method in ("client_secret_basic", "client_secret_post")

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type == "client_credentials"


@dataclass
class MachineAuthority(AuthorizationServer):  # type: ignore[misc]
    """Authlib's authorization server over one client; the tokens it issued, with their ``resource``."""

    issuer: str
    lifetime: int = 3600
    tokens: dict[str, AccessToken] = field(default_factory=dict)
    #: Every token request's ``resource`` (RFC 8707), in order.
    resources: list[str | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(scopes_supported=[SCOPE])
        self.client = Client(CLIENT_ID, CLIENT_SECRET)
        self.register_token_generator("default", BearerTokenGenerator(
            access_token_generator=lambda **_: secrets.token_urlsafe(24),
            expires_generator=lambda *_: self.lifetime))
        self.register_grant(ClientCredentialsGrant)

    def query_client(self, client_id: str) -> Client | None:
        return self.client if client_id == CLIENT_ID else None

    def save_token(self, token: dict[str, Any], request: OAuth2Request) -> None:
        resource = request.payload.data.get("resource")
        self.resources.append(resource)
        self.tokens[token["access_token"]] = AccessToken(
            token=token["access_token"], client_id=CLIENT_ID, scopes=token.get("scope", "").split(),
            expires_at=int(time.time()) + int(token["expires_in"]), resource=resource)

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        return None

    def create_oauth2_request(self, request: OAuth2Request) -> OAuth2Request:
        return request  # built from the Starlette request by the route, whose form is read async

    def handle_response(self, status: int, body: Any, headers: list[tuple[str, str]]) -> Response:
        return JSONResponse(body, status_code=status, headers=dict(headers))

    async def verify_token(self, token: str) -> AccessToken | None:
        found = self.tokens.get(token)
        return None if found is None or (found.expires_at or 0) < time.time() else found


@dataclass
class MachineUpstream:
    upstream: Upstream
    authority: MachineAuthority

    @property
    def url(self) -> str:
        return self.upstream.url


@contextmanager
def machine_server() -> Iterator[MachineUpstream]:
    """Serve Authlib's token endpoint and the protected MCP server on one free loopback port."""
    sock = bound_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    authority = MachineAuthority(base)
    auth = AuthSettings.model_validate({"issuer_url": base, "resource_server_url": f"{base}/mcp",
                                        "required_scopes": [SCOPE], "validate_token_resource": True})
    server = MCPServer("machine", token_verifier=authority, auth=auth)

    @server.tool()
    def meter_reading() -> str:
        """A reading only an authorized machine may take."""
        return "42 kWh"

    mcp_app = server.streamable_http_app(json_response=True)

    async def token(request: Request) -> Response:
        form = {key: str(value) for key, value in (await request.form()).items()}
        oauth_request = OAuth2Request(request.method, str(request.url), headers=request.headers)
        oauth_request.payload = BasicOAuth2Payload(form)
        response: Response = authority.create_token_response(oauth_request)
        return response

    async def metadata(request: Request) -> Response:
        # The SDK's metadata model requires an authorization endpoint; this server never serves one.
        return JSONResponse({"issuer": base, "token_endpoint": f"{base}/token",
                             "authorization_endpoint": f"{base}/authorize",
                             "grant_types_supported": ["client_credentials"], "response_types_supported": [],
                             "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
                             "scopes_supported": [SCOPE]})

    routes = [Route("/token", token, methods=["POST"]),
              Route("/.well-known/oauth-authorization-server", metadata), Mount("/", app=mcp_app)]
    app = Starlette(routes=routes, lifespan=lambda _app: mcp_app.router.lifespan_context(mcp_app))
    with serve(app, "/mcp", sock) as upstream:
        yield MachineUpstream(upstream, authority)
