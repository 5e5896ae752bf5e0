"""OAuth 2.1 to upstream servers, on the MCP SDK's client auth (``mcp.client.auth``).

The SDK's providers do every protocol step: protected-resource metadata (RFC 9728) from the
server's 401, authorization-server metadata (RFC 8414), dynamic client registration (RFC 7591),
PKCE, the token requests with the RFC 8707 ``resource``, and refresh. toolvet drives a provider's
public ``async_auth_flow`` itself, one bounded request at a time, only to *obtain* a token: the
MCP requests that follow carry the token as a header set by :class:`TokenSource`, so a streamed
answer is never buffered whole by an auth flow, and the token's state lives in the database, not
in a provider's memory.

- :class:`Grant` is what is kept per server (sealed by the caller): tokens, their expiry, the
  registered client and the discovered metadata, and a version for compare-and-set.
- :class:`GrantStore` is how the caller keeps it (``services.oauth`` over the database).
- :class:`TokenSource` hands out ``Authorization`` values: the stored token while it is fresh,
  else one refresh per process at a time (others wait on it), saved with compare-and-set so two
  processes refreshing at once end up with one token and no false "needs reconnect".
- :func:`obtain` runs a provider's flow to its token: client credentials without a person, the
  authorization code with the :class:`Consent` hooks the console's Connect supplies.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal, Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import anyio
import httpx2
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, OAuthFlowError, OAuthTokenError
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.auth.utils import (
    build_protected_resource_metadata_discovery_urls,
    extract_field_from_www_auth,
    handle_protected_resource_response,
    union_scopes,
)
from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from pydantic import AnyUrl, ValidationError

from toolvet.upstream.errors import ChannelError, NeedsReconnect

__all__ = ["Consent", "Grant", "GrantStore", "OAuthConfig", "TokenSource", "obtain", "token_auth_method",
           "union_scopes"]

GrantType = Literal["client_credentials", "authorization_code"]
#: The body of a request sent only to be told 401 (what starts discovery); its answer is small.
_PROBE: Final = b'{"jsonrpc":"2.0","id":"toolvet-oauth","method":"ping"}'
_PROBE_HEADERS: Final = {"content-type": "application/json", "accept": "application/json, text/event-stream",
                         "accept-encoding": "identity"}
#: Any answer the flow reads (metadata, registration, token, the probe's 401) is refused past this.
_MAX_FLOW_BYTES: Final = 256 * 1024
#: Requests one flow may make (discovery fallbacks, registration, redirects, token): a loop bound.
_MAX_FLOW_STEPS: Final = 24


@dataclass(frozen=True)
class OAuthConfig:
    """How toolvet authorizes to one server (the operator's settings)."""

    server_url: str
    grant: GrantType
    client_id: str | None = None
    client_secret: str | None = None
    scope: str | None = None
    #: Where the authorization server sends the person back (authorization code only).
    redirect_uri: str | None = None
    client_name: str = "toolvet"


@dataclass(frozen=True)
class Grant:
    """What toolvet holds for one server: the tokens and what the flow learnt to refresh them."""

    tokens: dict[str, Any] | None = None
    #: Seconds since the epoch when the access token expires; None when the server gave no lifetime.
    expires_at: float | None = None
    client_info: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    resource_metadata: dict[str, Any] | None = None
    #: Set when the last refresh was refused: the reason shown until someone Connects again.
    needs_reconnect: str | None = None
    #: A process is refreshing until then (seconds since the epoch): the others wait for its token.
    claimed_until: float | None = None
    #: What the server asked for when it refused a token as too narrow (``insufficient_scope``), with
    #: what was asked before: the scope the next authorization asks for, besides the operator's.
    scope_asked: str | None = None
    #: Bumped by every save; a save names the version it read (compare-and-set).
    version: int = 0

    @property
    def access_token(self) -> str | None:
        return None if self.tokens is None else self.tokens.get("access_token")

    def fresh(self, skew: float, now: float | None = None) -> bool:
        """Whether the access token may still be sent ``skew`` seconds from now."""
        if self.access_token is None or self.needs_reconnect:
            return False
        return self.expires_at is None or (now or time.time()) + skew < self.expires_at


class GrantStore(Protocol):
    """Where one server's grant is kept."""

    async def load(self) -> Grant: ...

    async def save(self, grant: Grant, read_version: int) -> bool:
        """Store ``grant`` as version ``read_version + 1`` if the stored one is still
        ``read_version``; False (nothing written) when another writer came first."""
        ...


@dataclass
class Consent:
    """The person's part of the authorization-code flow: where to send them, and how their
    answer comes back."""

    redirect: Callable[[str], Awaitable[None]]
    callback: Callable[[], Awaitable[AuthorizationCodeResult]]


class _Memory:
    """The SDK's TokenStorage over one grant being built (the caller saves it afterwards)."""

    def __init__(self, grant: Grant) -> None:
        self.grant = grant

    async def get_tokens(self) -> OAuthToken | None:
        tokens = self.grant.tokens
        return None if tokens is None else OAuthToken.model_validate(tokens)

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.grant = replace(self.grant, tokens=tokens.model_dump(mode="json", exclude_none=True),
                             needs_reconnect=None)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        info = self.grant.client_info
        return None if info is None else OAuthClientInformationFull.model_validate(info)

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.grant = replace(self.grant, client_info=client_info.model_dump(mode="json", exclude_none=True))


async def _send(client: httpx2.AsyncClient, request: httpx2.Request) -> httpx2.Response:
    """One request of a flow, its answer read whole but bounded (the SDK's parsers read it), and
    uncompressed (a bound on compressed bytes bounds nothing)."""
    request.headers["accept-encoding"] = "identity"
    response = await client.send(request, stream=True, follow_redirects=False)
    try:
        if response.headers.get("content-encoding", "identity").strip().lower() not in ("", "identity"):
            raise ChannelError(f"OAuth: {request.url.host} compressed its answer although toolvet asked for none")
        chunks: list[bytes] = []
        total = 0
        async for chunk in response.aiter_raw():
            total += len(chunk)
            if total > _MAX_FLOW_BYTES:
                raise ChannelError(f"OAuth: an answer from {request.url.host} exceeds {_MAX_FLOW_BYTES} bytes")
            chunks.append(chunk)
    finally:
        await response.aclose()
    return httpx2.Response(response.status_code, headers=response.headers, content=b"".join(chunks),
                           request=request)


async def _issuer(client: httpx2.AsyncClient, server_url: str) -> str | None:
    """The authorization server the resource names first (RFC 9728), for client credentials: the
    SDK sends the client's secret only to the issuer it is told."""
    for url in build_protected_resource_metadata_discovery_urls(None, server_url):
        prm = await handle_protected_resource_response(await _send(client, httpx2.Request("GET", url)))
        if prm is not None and prm.authorization_servers:
            return str(prm.authorization_servers[0])
    return None


async def _provider(
    client: httpx2.AsyncClient, config: OAuthConfig, storage: _Memory, consent: Consent | None
) -> OAuthClientProvider:
    if config.grant == "client_credentials":
        if not (config.client_id and config.client_secret):
            raise NeedsReconnect("client credentials need a client id and secret")
        issuer = (storage.grant.metadata or {}).get("issuer") or await _issuer(client, config.server_url)
        if issuer is None:
            raise NeedsReconnect("the server publishes no protected-resource metadata naming its authorization server")
        return ClientCredentialsOAuthProvider(config.server_url, storage, config.client_id, config.client_secret,
                                              scope=config.scope, issuer=str(issuer))
    metadata = OAuthClientMetadata(
        redirect_uris=[AnyUrl(config.redirect_uri)] if config.redirect_uri else None,
        token_endpoint_auth_method="client_secret_post" if config.client_secret else "none",
        grant_types=["authorization_code", "refresh_token"], scope=config.scope, client_name=config.client_name,
        application_type="web",
    )
    if config.client_id and storage.grant.client_info is None:
        # A client registered by hand at the authorization server: no dynamic registration.
        await storage.set_client_info(OAuthClientInformationFull(
            client_id=config.client_id, client_secret=config.client_secret, redirect_uris=metadata.redirect_uris,
            grant_types=metadata.grant_types, token_endpoint_auth_method=metadata.token_endpoint_auth_method,
            scope=config.scope))
    callback = consent.callback if consent else None
    if consent is not None and config.client_id and config.client_secret:
        callback = _authenticating(consent.callback, lambda: provider, storage)
    redirect = consent.redirect if consent else None
    if consent is not None and config.scope:
        redirect = _widened(consent.redirect, config.scope, lambda: provider)
    provider = OAuthClientProvider(config.server_url, metadata, storage, redirect_handler=redirect,
                                   callback_handler=callback)
    return provider


def _widened(
    redirect: Callable[[str], Awaitable[None]], scope: str, provider: Callable[[], OAuthClientProvider]
) -> Callable[[str], Awaitable[None]]:
    """The consent's redirect, asking also for ``scope`` (the operator's, and what the server asked for
    when it refused a token as too narrow). The flow picks the scope the server's challenge names,
    whatever the client was configured with; toolvet asks for both, so neither the server's need nor
    the operator's choice is dropped."""

    async def going(url: str) -> None:
        parts = urlsplit(url)
        query = parse_qsl(parts.query, keep_blank_values=True)
        asked = next((value for key, value in query if key == "scope"), None)
        wanted = union_scopes(asked, scope) or scope
        query = [(key, value) for key, value in query if key != "scope"] + [("scope", wanted)]
        provider().context.client_metadata.scope = wanted  # what a token without a scope was granted
        await redirect(urlunsplit(parts._replace(query=urlencode(query))))

    return going


def token_auth_method(metadata: OAuthMetadata | None) -> Literal["client_secret_basic", "client_secret_post"]:
    """How a client registered by hand with a secret authenticates at the token endpoint: HTTP Basic
    where the authorization server takes it (RFC 8414's default when its metadata names no methods,
    and the method every server must take by RFC 6749), the secret in the form where it takes only that."""
    supported = (metadata.token_endpoint_auth_methods_supported if metadata else None) or ["client_secret_basic"]
    if "client_secret_basic" not in supported and "client_secret_post" in supported:
        return "client_secret_post"
    return "client_secret_basic"


def _authenticating(
    callback: Callable[[], Awaitable[AuthorizationCodeResult]], provider: Callable[[], OAuthClientProvider],
    storage: _Memory,
) -> Callable[[], Awaitable[AuthorizationCodeResult]]:
    """The consent's callback, which also sets a hand-registered client's token-endpoint authentication
    from the authorization server's metadata: the flow has read the metadata by the time the person
    answers, and sends the token request right after (a registered client's method is the server's
    answer to its registration, so only a hand-registered one needs this)."""

    async def answered() -> AuthorizationCodeResult:
        result = await callback()
        context = provider().context
        info = context.client_info
        method = token_auth_method(context.oauth_metadata)
        if info is not None and info.token_endpoint_auth_method != method:
            info = info.model_copy(update={"token_endpoint_auth_method": method})
            context.client_info = info
            await storage.set_client_info(info)
        return result

    return answered


def _restore(provider: OAuthClientProvider, grant: Grant) -> None:
    """Give a fresh provider what earlier flows learnt, so it refreshes at the right endpoint with
    the right ``resource`` instead of starting over."""
    context = provider.context
    try:
        if grant.metadata:
            context.oauth_metadata = OAuthMetadata.model_validate(grant.metadata)
            context.auth_server_url = str(context.oauth_metadata.issuer)
        if grant.resource_metadata:
            context.protected_resource_metadata = ProtectedResourceMetadata.model_validate(grant.resource_metadata)
    except ValidationError:
        context.oauth_metadata = context.protected_resource_metadata = None
    # Tokens are loaded by the provider itself; an expiry in the past makes it refresh first (not
    # 0: the SDK reads a falsy expiry as "never expires").
    context.token_expiry_time = 1.0 if grant.tokens else None


async def obtain(
    client: httpx2.AsyncClient, config: OAuthConfig, grant: Grant, *, consent: Consent | None = None,
    refresh_only: bool = False,
) -> Grant:
    """A new grant for the server: refreshed from ``grant`` where it holds a refresh token, else
    (client credentials, or a person's consent through ``consent``) obtained from scratch.

    ``refresh_only`` forbids starting over, for refreshes of an authorization-code grant, which
    without a person can only end in :class:`NeedsReconnect`.
    """
    storage = _Memory(replace(grant, needs_reconnect=None))
    provider = await _provider(client, config, storage, consent)
    _restore(provider, grant)
    probe = httpx2.Request("POST", config.server_url, content=_PROBE, headers=_PROBE_HEADERS)
    flow = provider.async_auth_flow(probe)
    refreshing = grant.tokens is not None
    try:
        outgoing = await flow.__anext__()
        for _ in range(_MAX_FLOW_STEPS):
            if outgoing is probe:
                if "authorization" in outgoing.headers:
                    break  # the flow holds a token: the probe itself need not be sent
                if refreshing and (refresh_only or (config.grant == "authorization_code" and consent is None)):
                    raise NeedsReconnect("the authorization server refused to refresh the token")
            outgoing = await flow.asend(await _send(client, outgoing))
        else:
            raise NeedsReconnect(f"the OAuth flow took more than {_MAX_FLOW_STEPS} requests")
    except StopAsyncIteration:
        if storage.grant.tokens is None:
            raise NeedsReconnect("the server answered without asking for authorization (no 401): "
                                 "if it needs none, set its auth to none") from None
        raise NeedsReconnect("the server still refuses toolvet after authorization") from None
    except (OAuthFlowError, OAuthTokenError, ValidationError, ValueError) as exc:
        raise NeedsReconnect(f"OAuth failed: {exc}") from None
    except httpx2.HTTPError as exc:
        raise ChannelError(f"OAuth: {type(exc).__name__} talking to the authorization server: {exc}") from exc
    finally:
        await flow.aclose()
    context = provider.context
    return replace(
        storage.grant,
        expires_at=context.token_expiry_time,
        metadata=context.oauth_metadata.model_dump(mode="json", exclude_none=True) if context.oauth_metadata else None,
        resource_metadata=(context.protected_resource_metadata.model_dump(mode="json", exclude_none=True)
                           if context.protected_resource_metadata else None),
        needs_reconnect=None,
    )


@dataclass(eq=False)
class TokenSource:
    """The ``Authorization`` header for one server's requests, refreshed before expiry and once on a 401.

    One per server and process (it is part of the server's :class:`~toolvet.upstream.target.Target`,
    compared by identity). Within a process its lock makes callers at expiry wait for one refresh;
    across processes a refresh is first *claimed* by a compare-and-set of the stored version, so
    only the claimant spends the refresh token (servers rotate them: a second use would fail) and
    the others wait, bounded, for what it stores.
    """

    config: OAuthConfig
    store: GrantStore
    #: A client for the flow's requests: made per refresh (refreshes are rare), guarded like any upstream's.
    client: Callable[[], httpx2.AsyncClient]
    #: Refresh this many seconds before the token expires.
    skew: float = 60.0
    #: How long a process waits for another one's refresh.
    wait: float = 30.0
    _lock: anyio.Lock = field(default_factory=anyio.Lock)

    async def authorization(self) -> str:
        """``Bearer <token>``: the stored token while fresh, else a refreshed one."""
        grant = await self.store.load()
        if grant.fresh(self.skew):
            return f"Bearer {grant.access_token}"
        return await self.renew(None)

    def _usable(self, grant: Grant, rejected: str | None, skew: float) -> bool:
        return grant.fresh(skew) and f"Bearer {grant.access_token}" != rejected

    async def renew(self, rejected: str | None) -> str:
        """A new token because the current one expires or was just ``rejected`` (a 401 on it)."""
        async with self._lock:
            grant = await self.store.load()
            if self._usable(grant, rejected, self.skew):
                return f"Bearer {grant.access_token}"  # another caller refreshed meanwhile
            if grant.needs_reconnect:
                raise NeedsReconnect(grant.needs_reconnect)
            if grant.tokens is None and self.config.grant == "authorization_code":
                raise NeedsReconnect("not connected yet: an operator must Connect the server")
            if grant.claimed_until is not None and grant.claimed_until > time.time():
                return await self._other_refresh(rejected)
            claim = replace(grant, claimed_until=time.time() + self.wait)
            if not await self.store.save(claim, grant.version):
                return await self._other_refresh(rejected)
            claimed = replace(claim, version=grant.version + 1)
            try:
                async with self.client() as client:
                    new = await obtain(client, self.config, claimed,
                                       refresh_only=self.config.grant == "authorization_code")
            except NeedsReconnect as exc:
                await self.store.save(replace(claimed, needs_reconnect=exc.reason, claimed_until=None), claimed.version)
                raise
            except BaseException:
                with anyio.CancelScope(shield=True):  # the claim is given back, so others need not wait it out
                    await self.store.save(replace(claimed, claimed_until=None), claimed.version)
                raise
            new = replace(new, claimed_until=None)
            if await self.store.save(new, claimed.version):
                return f"Bearer {new.access_token}"
            current = await self.store.load()  # a person Connected meanwhile: theirs wins
            if self._usable(current, None, 0):
                return f"Bearer {current.access_token}"
            raise NeedsReconnect(current.needs_reconnect or "the authorization changed while it was refreshed")

    async def step_up(self, rejected: str, challenge: httpx2.Response) -> str:
        """The server refused the token ``rejected`` as too narrow (403 ``insufficient_scope``): a token
        for the wider scope it asks for, or NeedsReconnect. A machine client asks for one at once; an
        authorization-code grant needs a person, so the server is marked ``needs reconnect`` and the
        next Connect asks for the wider scope. The caller sends its request again once, not more."""
        challenged = extract_field_from_www_auth(challenge, "scope")
        async with self._lock:
            grant = await self.store.load()
            if self._usable(grant, rejected, 0):
                return f"Bearer {grant.access_token}"  # widened meanwhile
            granted = (grant.tokens or {}).get("scope")
            wanted = union_scopes(union_scopes(grant.scope_asked, granted), challenged)
            if wanted == grant.scope_asked and grant.scope_asked is not None and granted == wanted:
                raise ChannelError(f"the server refuses a token granted the scope it asked for ({wanted!r})")
            if self.config.grant == "authorization_code":
                reason = (f"the server asks for more access than was granted (scope {challenged or '?'!r}): "
                          "Connect again to grant it")
                await self.store.save(replace(grant, scope_asked=wanted, needs_reconnect=reason), grant.version)
                raise NeedsReconnect(reason)
            wider = replace(self.config, scope=union_scopes(self.config.scope, wanted))
            async with self.client() as client:
                new = await obtain(client, wider, replace(grant, tokens=None, expires_at=None))
            new = replace(new, scope_asked=wanted, claimed_until=None)
            if not await self.store.save(new, grant.version):
                raise ChannelError("the authorization changed while a wider token was asked for")
            return f"Bearer {new.access_token}"

    async def _other_refresh(self, rejected: str | None) -> str:
        """Another process claimed the refresh: wait (bounded) for the token it stores."""
        with anyio.move_on_after(self.wait):
            while True:
                await anyio.sleep(0.05)
                current = await self.store.load()
                if current.needs_reconnect:
                    raise NeedsReconnect(current.needs_reconnect)
                if current.claimed_until is not None and current.claimed_until > time.time():
                    continue  # still refreshing: the token it holds is the one being replaced
                if self._usable(current, rejected, 0):
                    return f"Bearer {current.access_token}"
                break  # given back or lapsed without a token: the next request claims anew
        raise ChannelError(f"another toolvet process is refreshing the token and did not finish within {self.wait:g} s")
