"""toolvet as the client under test of the official conformance suite's client scenarios.

``conformance client --command "python -m tests.conformance.client" --scenario NAME`` starts a test
server of its own (an MCP server, and for the ``auth/*`` scenarios an authorization server beside it),
runs this program with the server's URL as its last argument and the scenario's name in
``MCP_CONFORMANCE_SCENARIO`` (credentials, where a scenario has some, in ``MCP_CONFORMANCE_CONTEXT``),
and checks what arrived.

This program uses toolvet the way an operator and an app would: a fresh toolvet on SQLite in a
temporary folder, served on loopback; the URL registered as an upstream (``auth = oauth2`` for the
``auth/*`` scenarios, with the grant and client the context names); an operator's consent given in the
console (Connect, then the authorization server's redirect back to toolvet's callback) where the grant
is the authorization code; one discovery pass; then every tool discovered called through toolvet's
``/mcp/servers/{name}`` by the MCP SDK's client, as an app would (in the handshake era, or at 2026-07-28
when ``TOOLVET_CONFORMANCE_APP_MODE`` says so), answering an elicitation the upstream sends through
toolvet with the defaults of the schema it asks for. Everything toolvet says to the server is toolvet's
own upstream client (protocol, transport, OAuth): that is what the suite judges.

It prints what it did and exits non-zero when a step failed, so a scenario's stderr tells why.
"""

from __future__ import annotations

import html
import json
import logging
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitRequestParams, ElicitResult

from tests.oauth_console import ADMIN, CSRF, Toolvet, authorize_url, running_toolvet, signed_in
from toolvet.schemas.tools import TokenCreate
from toolvet.services import discovery, preferences, servers, tokens

NAME: Final = "upstream"
BOUND: Final = 20.0
#: Arguments for the tools the scenarios offer; any other tool is called with none.
ARGUMENTS: Final[dict[str, dict[str, Any]]] = {"add_numbers": {"a": 5, "b": 3}}


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def oauth_settings(scenario: str, context: dict[str, Any]) -> dict[str, Any] | None:
    """The server's OAuth settings for a scenario: ``None`` outside ``auth/*``; client credentials where
    the context carries a secret for a machine client; else the authorization code, with the
    pre-registered client the context names, if any."""
    if not scenario.startswith("auth/"):
        return None
    settings: dict[str, Any] = {}
    if context.get("client_id"):
        settings["client_id"] = context["client_id"]
    if context.get("client_secret"):
        settings["client_secret"] = context["client_secret"]
    if scenario.startswith("auth/client-credentials"):
        settings["grant"] = "client_credentials"
    return settings


def connect(toolvet: Toolvet) -> None:
    """An operator's consent: sign in to the console, click Connect, follow the authorization server's
    redirects back to toolvet's callback; the page it lands on must say the server is connected."""
    with signed_in(toolvet) as browser:
        page = browser.get(f"/console/servers/{NAME}")
        csrf = CSRF.search(page.text)
        if csrf is None:
            raise SystemExit(f"no Connect form on the server's page: {page.status_code}")
        landed = browser.get(authorize_url(browser, NAME, csrf.group(1)), follow_redirects=True)
        say(f"connect: landed on {landed.url.path} ({landed.status_code}): {_flash(landed.text)}")
        if f"Connected {NAME}." not in landed.text:
            raise SystemExit("the consent did not connect the server")


def _flash(text: str) -> str:
    found = re.search(r'class="flash[^"]*"[^>]*>(.*?)<', text, re.S)
    return html.unescape(found.group(1).strip()) if found else text[:200]


def _defaults(params: ElicitRequestParams) -> ElicitResult:
    """Accept an elicitation with the default of every field its schema gives one (what a client that
    applies SEP-1034 defaults sends when the person changes nothing)."""
    schema = getattr(params, "requested_schema", None) or {}
    content = {key: spec["default"] for key, spec in schema.get("properties", {}).items() if "default" in spec}
    return ElicitResult(action="accept", content=content)


async def call_every_tool(url: str, token: str) -> list[str]:
    """List the server's tools through toolvet and call each one, as an app would; the tools whose
    call failed because the server needs an operator to Connect it again."""

    async def elicit(_context: Any, params: ElicitRequestParams) -> ElicitResult:
        return _defaults(params)

    endpoint = f"{url}/mcp/servers/{NAME}"
    async with httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=BOUND) as http:
        transport = streamable_http_client(endpoint, http_client=http)
        mode = os.environ.get("TOOLVET_CONFORMANCE_APP_MODE", "legacy")
        async with Client(transport, mode=mode, elicitation_callback=elicit) as client:
            listed = await client.list_tools()
            say(f"tools through toolvet: {[tool.name for tool in listed.tools]}")
            reconnect: list[str] = []
            for tool in listed.tools:
                result = await client.call_tool(tool.name, ARGUMENTS.get(tool.name, {}))
                say(f"call {tool.name}: is_error={result.is_error} {result.content!r:.300}")
                if result.is_error and "needs reconnect" in repr(result.content):
                    reconnect.append(tool.name)
            return reconnect


async def run(server_url: str, scenario: str, context: dict[str, Any], home: Path) -> None:
    with running_toolvet(home) as toolvet:
        ctx, url = toolvet.ctx, toolvet.url
        app = tokens.create_token(ctx, ADMIN, TokenCreate(role="consumer", user="app", name="app")).token
        preferences.set_permission_mode(ctx, ADMIN, "app", "allow")
        settings = oauth_settings(scenario, context)
        server: dict[str, Any] = {"name": NAME, "url": server_url}
        if settings is not None:
            server |= {"auth": "oauth2", "oauth": settings}
        servers.create_server(ctx, ADMIN, server)
        say(f"registered {server_url} ({'oauth2 ' + json.dumps(settings) if settings is not None else 'no auth'})")
        if settings is not None and settings.get("grant") != "client_credentials":
            await anyio.to_thread.run_sync(connect, toolvet)
        with anyio.fail_after(BOUND):
            [pass_] = await discovery.discover(ctx, ADMIN, [NAME])
        say(f"discovery: {pass_.status} (+{pass_.added}) {pass_.error or ''}")
        if pass_.status != "ok":
            raise SystemExit(1)
        with anyio.fail_after(BOUND):
            reconnect = await call_every_tool(url, app)
        if reconnect and settings is not None:
            # What an operator does when a server says it needs more access: Connect it again (toolvet
            # asks for the wider scope), and the app calls again.
            await anyio.to_thread.run_sync(connect, toolvet)
            with anyio.fail_after(BOUND):
                again = await call_every_tool(url, app)
            if again:
                raise SystemExit(f"still needs reconnect after connecting again: {again}")


def main() -> None:
    server_url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    logging.basicConfig(level=os.environ.get("TOOLVET_CONFORMANCE_LOG", "WARNING"), stream=sys.stderr)
    say(f"scenario {scenario!r} at {server_url}; context keys {sorted(context)}")
    with tempfile.TemporaryDirectory(prefix="toolvet-conformance-") as home:
        anyio.run(run, server_url, scenario, context, Path(home))


if __name__ == "__main__":
    main()
