"""``toolvet server add --auth oauth2``, ``server connect`` and how the CLI shows OAuth, against the
Authlib-built client-credentials server and the SDK-built authorization-code one."""

from __future__ import annotations

import json

from tests.cli.conftest import Toolvet
from tests.servers.oauth_machine_server import CLIENT_ID, CLIENT_SECRET, machine_server
from tests.servers.oauth_server import protected_server


def test_a_client_credentials_server_connects_from_the_cli_and_is_discovered(home, toolvet: Toolvet) -> None:
    with machine_server() as upstream:
        toolvet.ok("server", "add", "meter", "--url", upstream.url, "--oauth-grant", "client_credentials",
                   "--oauth-client-id", CLIENT_ID, "--oauth-client-secret", CLIENT_SECRET)
        listed = toolvet.ok("server", "list").stdout
        assert "oauth2: not connected" in listed
        assert "connected server meter (client credentials)" in toolvet.ok("server", "connect", "meter").stdout
        assert upstream.authority.resources == [upstream.url]
        assert "oauth2: connected" in toolvet.ok("server", "list").stdout
        shown = toolvet.ok("server", "show", "meter", "--json").stdout
        assert json.loads(shown)["oauth"]["client_id"] == CLIENT_ID
        [token] = upstream.authority.tokens
        assert CLIENT_SECRET not in shown and token not in shown
        discovered = toolvet.ok("discover", "meter").stdout
        assert discovered.startswith("meter: ok (+1 "), discovered


def test_a_client_credentials_server_gets_its_token_by_itself_when_discovered(home, toolvet: Toolvet) -> None:
    with machine_server() as upstream:
        toolvet.ok("server", "add", "meter", "--url", upstream.url, "--oauth-grant", "client_credentials",
                   "--oauth-client-id", CLIENT_ID, "--oauth-client-secret", CLIENT_SECRET)
        assert toolvet.ok("discover", "meter").stdout.startswith("meter: ok (+1 ")
        upstream.authority.tokens.clear()  # the server forgets its tokens: toolvet gets a new one on the 401
        assert toolvet.ok("discover", "meter").stdout.startswith("meter: ok (+0 ~0 =1 ")
        assert len(upstream.authority.resources) == 2


def test_a_wrong_client_secret_is_a_reason_not_a_crash(home, toolvet: Toolvet) -> None:
    with machine_server() as upstream:
        toolvet.ok("server", "add", "meter", "--url", upstream.url, "--oauth-grant", "client_credentials",
                   "--oauth-client-id", CLIENT_ID, "--oauth-client-secret", "wrong")
        error = toolvet.fails("server", "connect", "meter")
        assert "meter" in error and "invalid_client" in error
        assert CLIENT_SECRET not in error and "wrong" not in error


def test_connect_prints_where_a_person_clicks_connect(home, toolvet: Toolvet, monkeypatch) -> None:
    monkeypatch.setenv("TOOLVET_PUBLIC_URL", "https://toolvet.example")
    with protected_server() as upstream:
        toolvet.ok("server", "add", "locked", "--url", upstream.url, "--auth", "oauth2")
        printed = toolvet.ok("server", "connect", "locked").stdout
        assert "https://toolvet.example/console/servers/locked#oauth" in printed
        assert "needs reconnect: not connected yet" in toolvet("discover", "locked").stdout
        toolvet.ok("server", "set", "locked", "--oauth-scope", "tools")
        oauth = toolvet.json("server", "show", "locked")["oauth"]
        assert (oauth["grant"], oauth["scope"], oauth["status"]) == ("authorization_code", "tools", "not connected")
        toolvet.ok("server", "set", "locked", "--auth", "none")
        assert toolvet.json("server", "show", "locked")["oauth"] is None
        assert "auth = none" in toolvet.fails("server", "connect", "locked")


def test_oauth_is_refused_where_it_cannot_work(home, toolvet: Toolvet) -> None:
    assert "oauth2 is for streamable-http" in toolvet.fails(
        "server", "add", "legacy", "--url", "http://127.0.0.1:9/sse", "--transport", "sse", "--auth", "oauth2")
    assert "client_id and a client_secret" in toolvet.fails(
        "server", "add", "m", "--url", "http://127.0.0.1:9/mcp", "--oauth-grant", "client_credentials")
