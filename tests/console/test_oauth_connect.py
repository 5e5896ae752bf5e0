"""Connect in a real Chromium: an operator adds an OAuth-protected server in the console, clicks
Connect, allows toolvet at the authorization server's consent page, lands back on the server page
connected, and discovery lists the protected server's tools."""

from __future__ import annotations

from typing import Any

from tests.console.conftest import ADMIN, Console, new_page, screenshot, sign_in
from tests.servers.oauth_machine_server import CLIENT_ID, CLIENT_SECRET, machine_server
from tests.servers.oauth_server import protected_server
from toolvet.services import servers


def test_an_operator_connects_an_oauth_server_from_the_console(browser: Any, console: Console) -> None:
    page = new_page(browser)
    with protected_server() as upstream:
        sign_in(page, console)
        page.goto(console.at("/console/servers/new"))
        page.fill("input[name=name]", "locked")
        page.fill("input[name=url]", upstream.url)
        page.select_option("select[name=auth]", "oauth2")
        page.click("button:has-text('Add server')")
        page.wait_for_url("**/console/servers/locked")
        assert "not connected" in page.locator("#oauth").inner_text()

        page.click("#connect")
        page.wait_for_url(f"{upstream.authority.issuer}/consent*")
        assert "Allow toolvet?" in page.locator("h1").inner_text()
        page.click("#allow")
        page.wait_for_url("**/console/servers/locked")
        assert "Connected locked." in page.locator(".flash").inner_text()
        assert "connected" in page.locator("#oauth .badge").inner_text()
        assert page.locator("#connect").inner_text() == "Reconnect"
        screenshot(page, "oauth-connected")

        page.click("button:has-text('Discover now')")
        assert "Discovered locked: ok; 1 added" in page.locator(".flash").inner_text()
        shown = servers.get_server(console.ctx, ADMIN, "locked")
        assert shown.oauth is not None and shown.oauth.status.value == "connected"

        upstream.authority.revoke_everything()
        page.goto(console.at("/console/servers/locked"))
        page.click("button:has-text('Discover now')")
        assert "needs reconnect" in page.locator(".flash").inner_text()
        page.goto(console.at("/console/servers/locked"))
        assert "needs reconnect" in page.locator("#oauth").inner_text()
        screenshot(page, "oauth-needs-reconnect")
    page.context.close()


def test_connect_on_a_client_credentials_server_gets_its_token_at_once(browser: Any, console: Console) -> None:
    page = new_page(browser)
    with machine_server() as upstream:
        sign_in(page, console)
        servers.create_server(console.ctx, ADMIN, {
            "name": "meter", "url": upstream.url, "auth": "oauth2",
            "oauth": {"grant": "client_credentials", "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}})
        page.goto(console.at("/console/servers/meter"))
        assert "client credentials" in page.locator("#oauth").inner_text()
        page.click("#connect")
        page.wait_for_url("**/console/servers/meter")
        assert "Connected meter." in page.locator(".flash").inner_text()
        assert "connected" in page.locator("#oauth .badge").inner_text()
        assert CLIENT_SECRET not in page.content()
        assert len(upstream.authority.tokens) == 1
    page.context.close()
