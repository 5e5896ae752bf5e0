"""OAuth-protected upstreams end to end: toolvet served on loopback, the SDK-built authorization and
MCP servers of tests/servers/oauth_server.py beside it, an operator's consent driven with httpx2
following redirects, then discovery and calls carrying the tokens, refresh, and revoked refresh."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import pytest

from tests.oauth_console import ADMIN, CSRF, Toolvet, authorize_url, running_toolvet, signed_in
from tests.servers.oauth_server import SCOPE, ProtectedUpstream, protected_server
from tests.upstreams import modern_http_server
from toolvet.db.models import ServerOAuth
from toolvet.schemas.tools import TokenCreate
from toolvet.services import discovery, oauth, preferences, servers, tokens
from toolvet.services.context import Context
from toolvet.upstream.oauth import Grant

ALLOW = re.compile(r'href="(/consent/allow\?id=[^"]+)"')


def consent(browser: httpx2.Client, toolvet: Toolvet, name: str) -> httpx2.Response:
    """Click Connect, then Allow at the authorization server; the page toolvet ends on."""
    page = browser.get(f"/console/servers/{name}")
    csrf = CSRF.search(page.text)
    assert csrf is not None and 'id="connect"' in page.text
    at_consent = browser.get(authorize_url(browser, name, csrf.group(1)), follow_redirects=True)
    assert at_consent.status_code == 200 and "Allow" in at_consent.text, at_consent.text
    allow = ALLOW.search(at_consent.text)
    assert allow is not None
    return browser.get(str(at_consent.url.join(allow.group(1))), follow_redirects=True)


def add_protected(ctx: Context, upstream: ProtectedUpstream, name: str = "locked") -> None:
    servers.create_server(ctx, ADMIN, {"name": name, "url": upstream.url, "auth": "oauth2"})


def discover_one(ctx: Context, name: str = "locked") -> discovery.DiscoveryRunOut:
    [run] = anyio.run(discovery.discover, ctx, ADMIN, [name])
    return run


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[Toolvet, ProtectedUpstream]]:
    with protected_server() as upstream, running_toolvet(tmp_path) as toolvet:
        add_protected(toolvet.ctx, upstream)
        yield toolvet, upstream


def test_an_unconnected_server_fails_discovery_with_the_reason(pair: tuple[Toolvet, ProtectedUpstream]) -> None:
    toolvet, _ = pair
    run = discover_one(toolvet.ctx)
    assert run.status == "failed"
    assert "needs reconnect: not connected yet" in (run.error or "")


def test_connect_stores_tokens_sealed_and_discovery_uses_them(pair: tuple[Toolvet, ProtectedUpstream]) -> None:
    toolvet, upstream = pair
    with signed_in(toolvet) as browser:
        landed = consent(browser, toolvet, "locked")
        assert landed.url.path == "/console/servers/locked"
        assert "Connected locked." in landed.text
        assert "connected" in landed.text
    # Dynamic registration happened, and every token was asked for this server (RFC 8707).
    assert len(upstream.authority.clients) == 1
    assert upstream.authority.resources == [upstream.url]
    run = discover_one(toolvet.ctx)
    assert (run.status, run.added) == ("ok", 1), run.error
    [access] = upstream.authority.access
    [refresh] = upstream.authority.refresh
    with toolvet.ctx.db.transaction() as session:
        row = session.get(ServerOAuth, 1)
        assert row is not None and row.status == "connected" and row.secret
        assert access not in row.secret and refresh not in row.secret
    shown = httpx2.get(f"{toolvet.url}/api/v1/servers/locked", timeout=10.0,
                       headers={"authorization": f"Bearer {toolvet.operator_token}"})
    assert shown.json()["auth"] == "oauth2" and shown.json()["oauth"]["status"] == "connected"
    assert access not in shown.text and refresh not in shown.text
    logged = httpx2.get(f"{toolvet.url}/api/v1/audit", params={"action": "server.connect"}, timeout=10.0,
                        headers={"authorization": f"Bearer {toolvet.operator_token}"})
    [entry] = logged.json()["items"]
    assert entry["actor"] == "token:op" and entry["after"]["status"] == "connected"
    assert access not in logged.text and refresh not in logged.text


def test_a_refused_token_is_refreshed_once_and_the_request_retried(
    pair: tuple[Toolvet, ProtectedUpstream],
) -> None:
    toolvet, upstream = pair
    with signed_in(toolvet) as browser:
        consent(browser, toolvet, "locked")
    upstream.authority.revoke_access()  # the server forgets its access tokens; refresh tokens stay good
    run = discover_one(toolvet.ctx)
    assert run.status == "ok", run.error
    assert upstream.authority.refreshes == 1
    assert upstream.authority.resources == [upstream.url, upstream.url]


def test_a_revoked_refresh_token_makes_the_server_need_reconnect(pair: tuple[Toolvet, ProtectedUpstream]) -> None:
    toolvet, upstream = pair
    with signed_in(toolvet) as browser:
        consent(browser, toolvet, "locked")
        upstream.authority.revoke_everything()
        run = discover_one(toolvet.ctx)
        assert run.status == "failed"
        assert "needs reconnect" in (run.error or "")
        shown = servers.get_server(toolvet.ctx, ADMIN, "locked")
        assert shown.oauth is not None and shown.oauth.status.value == "needs reconnect"
        page = browser.get("/console/servers/locked")
        assert "needs reconnect" in page.text
        # Until someone connects again nothing is asked of the authorization server.
        assert "needs reconnect" in (discover_one(toolvet.ctx).error or "")
        assert upstream.authority.refreshes == 0
        landed = consent(browser, toolvet, "locked")  # Reconnect
        assert "Connected locked." in landed.text
    assert discover_one(toolvet.ctx).status == "ok"


def test_callers_at_expiry_share_one_refresh(tmp_path: Path) -> None:
    # Tokens that live 30 s are stale at once under the 60 s refresh skew; refreshed ones live an hour.
    with protected_server(first_lifetime=30) as upstream, running_toolvet(tmp_path) as toolvet:
        add_protected(toolvet.ctx, upstream)
        with signed_in(toolvet) as browser:
            consent(browser, toolvet, "locked")
        with toolvet.ctx.db.transaction() as session:
            source = oauth.token_source(toolvet.ctx, servers.load(session, "locked"))
        assert source is not None
        got: list[str] = []

        async def many() -> None:
            async def one() -> None:
                got.append(await source.authorization())

            with anyio.fail_after(20):
                async with anyio.create_task_group() as tg:
                    for _ in range(8):
                        tg.start_soon(one)

        anyio.run(many)
        assert (upstream.authority.refresh_requests, upstream.authority.refreshes) == (1, 1)
        assert len(set(got)) == 1 and got[0].removeprefix("Bearer ") in upstream.authority.access


def test_two_processes_refreshing_at_once_keep_one_token(tmp_path: Path, database_url: str) -> None:
    # On SQLite and PostgreSQL: the refresh is claimed by a compare-and-set of the grant's version.
    with protected_server(first_lifetime=30) as upstream, running_toolvet(tmp_path, database_url) as toolvet:
        add_protected(toolvet.ctx, upstream)
        with signed_in(toolvet) as browser:
            consent(browser, toolvet, "locked")
        other = Context.open(toolvet.ctx.settings)  # a second process's view of the same database
        try:
            sources = []
            for ctx in (toolvet.ctx, other):
                with ctx.db.transaction() as session:
                    sources.append(oauth.token_source(ctx, servers.load(session, "locked")))
            got: list[str] = []

            async def both() -> None:
                async def one(source: oauth.TokenSource) -> None:
                    got.append(await source.authorization())

                with anyio.fail_after(20):
                    async with anyio.create_task_group() as tg:
                        for source in sources:
                            assert source is not None
                            tg.start_soon(one, source)

            anyio.run(both)
        finally:
            other.close()
        # One process spent the (rotating) refresh token; the other waited for what it stored.
        assert (upstream.authority.refresh_requests, upstream.authority.refreshes) == (1, 1)
        assert len(set(got)) == 1
        assert servers.get_server(toolvet.ctx, ADMIN, "locked").oauth.status.value == "connected"  # type: ignore[union-attr]


def test_a_callback_state_is_single_use_and_bound_to_its_session(pair: tuple[Toolvet, ProtectedUpstream]) -> None:
    toolvet, _ = pair
    with signed_in(toolvet) as browser, signed_in(toolvet) as someone_else:
        page = browser.get("/console/servers/locked")
        csrf = CSRF.search(page.text)
        assert csrf is not None
        at_consent = browser.get(authorize_url(browser, "locked", csrf.group(1)), follow_redirects=True)
        allow = ALLOW.search(at_consent.text)
        assert allow is not None
        back = browser.get(str(at_consent.url.join(allow.group(1))))
        callback = back.headers["location"]
        assert callback.startswith(f"{toolvet.url}/console/oauth/callback?")
        foreign = someone_else.get(callback)
        assert foreign.status_code == 403
        assert browser.get(callback, follow_redirects=True).status_code == 200
        reused = browser.get(callback)
        assert reused.status_code == 422 and "unknown, used or expired" in reused.text
        assert browser.get("/console/oauth/callback?state=made-up&code=x").status_code == 422


def test_calls_carry_the_token_and_fail_with_needs_reconnect_once_it_is_revoked(
    pair: tuple[Toolvet, ProtectedUpstream],
) -> None:
    toolvet, upstream = pair
    consumer = tokens.create_token(toolvet.ctx, ADMIN, TokenCreate(role="consumer", name="c", user="ana")).token
    with signed_in(toolvet) as browser:
        consent(browser, toolvet, "locked")
    assert discover_one(toolvet.ctx).status == "ok"
    preferences.set_permission_mode(toolvet.ctx, ADMIN, "ana", "allow")
    call = {"server_type": "locked", "tool_name": "secret_word", "arguments": {}}
    with httpx2.Client(base_url=toolvet.url, timeout=20.0,
                       headers={"authorization": f"Bearer {consumer}"}) as client:
        ran = client.post("/api/v1/calls", json=call)
        assert ran.status_code == 200, ran.text
        assert "swordfish" in ran.text
        # The upstream saw toolvet's own token, never the consumer's.
        sent = [r.headers.get("authorization", "") for r in upstream.upstream.requests if r.path == "/mcp"]
        assert all(consumer not in value for value in sent)
        assert any(value.removeprefix("Bearer ") in upstream.authority.access for value in sent)
        upstream.authority.revoke_everything()
        refused = client.post("/api/v1/calls", json=call)
        assert "needs reconnect" in refused.text, refused.text


def test_connecting_a_server_that_asks_for_no_authorization_says_so(tmp_path: Path) -> None:
    with modern_http_server() as plain, running_toolvet(tmp_path) as toolvet:
        servers.create_server(toolvet.ctx, ADMIN, {"name": "open", "url": plain.url, "auth": "oauth2"})
        with signed_in(toolvet) as browser:
            page = browser.get("/console/servers/open")
            csrf = CSRF.search(page.text)
            assert csrf is not None
            refused = browser.post("/console/servers/open/connect", data={"csrf": csrf.group(1)})
        assert refused.status_code == 502
        assert "without asking for authorization" in html.unescape(refused.text)
        assert "if it needs none, set its auth to none" in html.unescape(refused.text)


def test_a_refused_consent_is_reported_and_stores_nothing(pair: tuple[Toolvet, ProtectedUpstream]) -> None:
    toolvet, upstream = pair
    with signed_in(toolvet) as browser:
        page = browser.get("/console/servers/locked")
        csrf = CSRF.search(page.text)
        assert csrf is not None
        state = parse_qs(urlsplit(authorize_url(browser, "locked", csrf.group(1))).query)["state"][0]
        # What the authorization server sends back when the person clicks "Deny" (RFC 6749 4.1.2.1).
        back = browser.get("/console/oauth/callback", params={"state": state, "error": "access_denied"},
                           follow_redirects=True)
        assert "Connecting locked failed: the authorization server said: access_denied" in html.unescape(back.text)
    shown = servers.get_server(toolvet.ctx, ADMIN, "locked")
    assert shown.oauth is not None and shown.oauth.status.value == "not connected"
    assert upstream.authority.access == {}


def test_a_scope_the_server_asked_for_later_is_asked_for_by_every_later_connect(
    pair: tuple[Toolvet, ProtectedUpstream]
) -> None:
    # A server refused a token as too narrow and asked for more (a step-up): what it asked for is kept
    # with the grant, a Connect asks for it, and the Connect's grant keeps it for the next one.
    toolvet, _ = pair
    with toolvet.ctx.db.transaction() as session:
        row = session.get(ServerOAuth, 1)
        assert row is not None
        asked = Grant(scope_asked=SCOPE, needs_reconnect="the server asks for more access")
        assert oauth.write_grant(toolvet.ctx, session, 1, asked, row.version)
    with toolvet.ctx.db.transaction() as session:
        server = oauth.load_oauth_server(session, "locked")
        assert oauth.config_of(toolvet.ctx, server).scope == SCOPE
    with signed_in(toolvet) as browser:
        assert "Connected locked." in consent(browser, toolvet, "locked").text
    stored = anyio.run(oauth.DbGrantStore(toolvet.ctx, 1).load)
    assert stored.access_token is not None and stored.needs_reconnect is None
    assert stored.scope_asked == SCOPE
