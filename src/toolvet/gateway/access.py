"""Who may call what on ``/mcp``: the token, and each tool's ``securitySchemes`` (docs/gateway.md#access).

The rule is the services' (``services.access``), the same one ``POST /api/v1/calls``, approvals and
``/decide`` ask. Here it is asked at the HTTP layer, in :class:`AccessGate`, a small ASGI middleware
in front of the MCP app: it reads the JSON-RPC body of a POST (bounded), answers **401** (no or bad
token) or **403** (``insufficient_scope``) with an RFC 6750 ``WWW-Authenticate`` header pointing at
the RFC 9728 metadata, and otherwise hands the request on with the caller's principal in the ASGI scope, where the
MCP handlers read it back (:func:`principal_of`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Final

import anyio.to_thread
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from toolvet.cache import MISSING, Loader
from toolvet.errors import RateLimited, ToolvetError
from toolvet.jsontext import loads
from toolvet.services import rate_limit, tokens
from toolvet.services.access import NEEDS_TOKEN, Requirement, refusal
from toolvet.services.auth import Principal
from toolvet.services.context import Context
from toolvet.web import replay

PRINCIPAL_KEY: Final = "toolvet.principal"
METADATA_PATH: Final = "/.well-known/oauth-protected-resource"
#: The JSON-RPC error code of a request refused by the rate limit (a server-defined code).
RATE_LIMITED: Final = -32029
MAX_BODY: Final = 4 * 1024 * 1024  # the SDK's own limit; a bigger body is refused before parsing
#: The JSON-RPC error code of a call refused for a missing OAuth scope (one of the codes JSON-RPC leaves
#: to servers): the 403 carries the refusal as a JSON-RPC error too, since clients show a JSON-RPC error's
#: message and only a generic line for a bare HTTP status.
INSUFFICIENT_SCOPE_CODE: Final = -32003

def principal_of(request: Any) -> Principal | None:
    """The principal :class:`AccessGate` put on this MCP message's HTTP request (None: no token)."""
    scope = getattr(request, "scope", None)
    if not isinstance(scope, Mapping):
        return None
    principal = scope.get(PRINCIPAL_KEY)
    return principal if isinstance(principal, Principal) else None


def base_url(scope: Scope) -> str:
    """toolvet's own base URL as the client addressed it (scheme and ``Host``)."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
    host = headers.get("host")
    if not host:
        server = scope.get("server") or ("127.0.0.1", 80)
        host = f"{server[0]}:{server[1]}"
    return f"{scope.get('scheme', 'http')}://{host}"


AUTHORIZATION_SERVER_PATH: Final = "/.well-known/oauth-authorization-server"


def metadata(
    scope: Scope, scopes_supported: Iterable[str], resource: str = "/mcp", authorization_server: str | None = None
) -> dict[str, Any]:
    """RFC 9728 protected-resource metadata for the MCP endpoint at path ``resource``. toolvet mints its
    own tokens, so it is its own authorization server unless one is configured."""
    base = base_url(scope)
    return {
        "resource": f"{base}{resource}",
        "authorization_servers": [authorization_server or base],
        "scopes_supported": sorted(set(scopes_supported)),
        "bearer_methods_supported": ["header"],
        "resource_name": "toolvet MCP gateway",
    }


def authorization_server_metadata(scope: Scope, scopes_supported: Iterable[str]) -> dict[str, Any]:
    """RFC 8414 metadata of toolvet as the authorization server of its own tokens.

    toolvet's tokens are not obtained by an OAuth grant: an operator creates one (``toolvet token
    create``, ``POST /api/v1/tokens``) and gives it to the app. So no grant type is offered; the
    document says where tokens come from, so a client that follows the challenge learns why it
    cannot get one by itself.
    """
    base = base_url(scope)
    return {
        "issuer": base,
        "token_endpoint": f"{base}/api/v1/tokens",
        "token_endpoint_auth_methods_supported": ["none"],
        "grant_types_supported": [],
        "response_types_supported": [],
        "scopes_supported": sorted(set(scopes_supported)),
        "service_documentation": f"{base}/docs",
        "op_policy_uri": f"{base}/docs",
    }


def _quoted(text: str) -> str:
    """``text`` as an RFC 6750 ``error_description`` value: quoted, of the characters it allows
    (printable ASCII but the quote and the backslash); any other character becomes '?'."""
    return '"' + "".join(ch if " " <= ch <= "~" and ch not in '"\\' else "?" for ch in text) + '"'


def _challenge(
    scope: Scope, status: int, error: str, description: str, scopes: Iterable[str] = (),
    request_id: Any = None,
) -> JSONResponse:
    """A 401/403 with its RFC 6750 challenge. A 403 for a ``tools/call`` answers as a JSON-RPC error
    for that request (``request_id``), whose message names the tool and the scopes, and repeats the
    reason as the challenge's ``error_description``."""
    parts = [f'resource_metadata="{base_url(scope)}{METADATA_PATH}{scope.get("path") or "/mcp"}"']
    if error:
        parts.insert(0, f'error="{error}"')
    wanted = " ".join(sorted(scopes))
    if wanted:
        parts.append(f'scope="{wanted}"')
    body: dict[str, Any] = {"error": error or "unauthorized", "error_description": description}
    if status == 403:
        parts.append(f"error_description={_quoted(description)}")
        body = {
            "jsonrpc": "2.0", "id": request_id,
            "error": {"code": INSUFFICIENT_SCOPE_CODE, "message": description,
                      "data": {"error": error, "scope": wanted}},
        }
    return JSONResponse(body, status_code=status, headers={"WWW-Authenticate": "Bearer " + ", ".join(parts)})


class TokenCache:
    """Authenticated tokens for :data:`toolvet.cache.READ_TTL`: a call then costs no database read for
    its token. The entries are the process's (``Context.principals``), which revoking a token in this
    process clears at once; a token revoked by another process (the CLI) stops working here within
    READ_TTL."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        # One read per token at a time: when its entry expires, every request in flight with it misses
        # together, and each read the database in a worker thread (sixteen at concurrency 16).
        self._loader: Loader[str, Principal] = Loader(self._authenticate, ctx.principals)

    async def principal(self, token: str) -> Principal:
        """The token's principal; raises the service's Unauthorized for a bad or revoked token."""
        if (hit := self.ctx.principals.get(token)) is not MISSING:
            return hit
        return await self._loader.get(token)

    async def _authenticate(self, token: str) -> Principal:
        return await anyio.to_thread.run_sync(tokens.authenticate, self.ctx, token)


def _authorization(scope: Scope) -> str | None:
    """The request's first ``Authorization`` header (ASGI header names are lower-case), read off the
    raw headers: this runs ahead of every ``/mcp`` request."""
    for name, value in scope["headers"]:
        if name == b"authorization":
            return str(value.decode("latin-1"))
    return None


#: Looks up what a ``tools/call`` of a listed name needs (None: no such tool; the handler answers it).
Lookup = Callable[[str], Awaitable[Requirement | None]]
#: Whether a caller without a token may use the endpoint at all (it offers ``noauth`` tools).
Anonymous = Callable[[], Awaitable[bool]]


class AccessGate:
    """ASGI middleware in front of the MCP app: bearer token in, 401/403 out, principal on the scope."""

    def __init__(self, app: ASGIApp, tokens_: TokenCache, lookup: Lookup, anonymous: Anonymous) -> None:
        self.app = app
        self.tokens = tokens_
        self.lookup = lookup
        self.anonymous = anonymous

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        principal: Principal | None = None
        header = _authorization(scope)
        if header:
            kind, _, token = header.partition(" ")
            if kind.lower() != "bearer" or not token.strip():
                await _challenge(scope, 401, "invalid_request", "use Authorization: Bearer <token>")(
                    scope, receive, send
                )
                return
            try:
                principal = await self.tokens.principal(token.strip())
            except ToolvetError:
                await _challenge(scope, 401, "invalid_token", "the token is unknown or revoked")(
                    scope, receive, send
                )
                return
        elif not await self.anonymous():
            # Nothing here is for a caller without a token: challenge it (RFC 9728), so a client learns
            # where to get one instead of seeing an empty endpoint.
            await _challenge(scope, 401, "", "this MCP endpoint needs a bearer token")(scope, receive, send)
            return
        if principal is not None and self.tokens.ctx.settings.rate_limit_per_minute > 0:
            try:
                await anyio.to_thread.run_sync(rate_limit.admit, self.tokens.ctx, principal)
            except RateLimited as exc:
                error = {"code": RATE_LIMITED, "message": exc.message, "data": {"retryAfter": exc.retry_after}}
                await JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, status_code=429,
                                   headers={"Retry-After": str(exc.retry_after)})(scope, receive, send)
                return
        scope[PRINCIPAL_KEY] = principal
        if scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body.extend(message.get("body", b""))
            more = message.get("more_body", False)
            if len(body) > MAX_BODY:
                await JSONResponse({"error": "request body too large"}, status_code=413)(scope, receive, send)
                return
        refusal = await self._refusal(scope, bytes(body), principal)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, replay(bytes(body), receive), send)

    async def _refusal(self, scope: Scope, body: bytes, principal: Principal | None) -> JSONResponse | None:
        try:
            parsed = loads(body) if body else None
        except (ValueError, RecursionError):
            return None  # the MCP app answers the parse error itself (the depth limit comes first)
        messages = parsed if isinstance(parsed, list) else [parsed]
        for message in messages:
            if not isinstance(message, dict) or message.get("method") != "tools/call":
                continue
            params = message.get("params")
            name = params.get("name") if isinstance(params, dict) else None
            if not isinstance(name, str):
                continue
            need = await self.lookup(name) or NEEDS_TOKEN
            reason = refusal(principal, need, name)
            if reason is None:
                continue
            if principal is None:
                return _challenge(scope, 401, "", reason)
            return _challenge(scope, 403, "insufficient_scope", reason, need.scopes, message.get("id"))
        return None

