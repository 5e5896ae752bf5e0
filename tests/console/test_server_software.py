"""A server's software on the console's add and edit forms, in process over ASGI: the form is read from the
page and posted back as a browser would (its CSRF token included), with only the software box changed."""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator
from html.parser import HTMLParser

import httpx2
import pytest

from toolvet.api import create_app
from toolvet.schemas.tools import TokenCreate
from toolvet.services import servers, tokens
from toolvet.services.auth import Principal
from toolvet.services.context import Context

pytestmark = pytest.mark.anyio

ALERT = re.compile(r'<p class="flash error" role="alert">(.*?)</p>', re.DOTALL)
SOFTWARE_FACT = re.compile(r'<dd id="software">(.*?)</dd>', re.DOTALL)


class _Form(HTMLParser):
    """What a browser submits for the form posting to ``action``: inputs (checked boxes only), selected
    options and textareas, as the page filled them in."""

    def __init__(self, action: str) -> None:
        super().__init__()
        self.action, self.inside = action, False
        self.fields: dict[str, str] = {}
        self._select: str | None = None
        self._textarea: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.inside = a.get("action") == self.action
        elif not self.inside or ("name" not in a and tag != "option"):
            return
        elif tag == "input" and (a.get("type") != "checkbox" or "checked" in a):
            self.fields[a["name"]] = a.get("value", "on" if a.get("type") == "checkbox" else "")
        elif tag == "select":
            self._select = a["name"]
        elif tag == "option" and self._select and (self._select not in self.fields or "selected" in a):
            self.fields[self._select] = a["value"]
        elif tag == "textarea":
            self._textarea = a["name"]
            self.fields[a["name"]] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.inside = False
        elif tag == "select":
            self._select = None
        elif tag == "textarea":
            self._textarea = None

    def handle_data(self, data: str) -> None:
        if self.inside and self._textarea:
            self.fields[self._textarea] += data


def form_of(page: httpx2.Response, action: str) -> dict[str, str]:
    parser = _Form(action)
    parser.feed(page.text)
    assert "csrf" in parser.fields and "software" in parser.fields, parser.fields
    return parser.fields


@pytest.fixture
async def browser(ctx: Context, admin: Principal) -> AsyncIterator[httpx2.AsyncClient]:
    """An operator signed in to the console of an app served in process."""
    token = tokens.create_token(ctx, admin, TokenCreate(role="operator", name="op")).token
    transport = httpx2.ASGITransport(app=create_app(ctx))
    async with httpx2.AsyncClient(transport=transport, base_url="http://toolvet") as client:
        signed_in = await client.post("/console/login", data={"token": token})
        assert signed_in.status_code == 303, signed_in.text
        yield client


async def test_the_server_form_sets_refuses_and_clears_the_software(
    browser: httpx2.AsyncClient, ctx: Context, admin: Principal
) -> None:
    new = form_of(await browser.get("/console/servers/new"), "/console/servers/new")
    assert new["software"] == ""
    added = await browser.post("/console/servers/new",
                               data={**new, "name": "crm-eu", "url": "http://crm-eu.example/mcp", "software": "crm"})
    assert added.status_code == 303 and added.headers["location"] == "/console/servers/crm-eu", added.text
    assert servers.get_server(ctx, admin, "crm-eu").software == "crm"

    page = await browser.get("/console/servers/crm-eu")
    fact = SOFTWARE_FACT.search(page.text)
    assert fact is not None and '<span class="mono">crm</span>' in fact.group(1)
    edit = form_of(page, "/console/servers/crm-eu")
    assert edit["software"] == "crm" and edit["url"] == "http://crm-eu.example/mcp"

    refused = await browser.post("/console/servers/crm-eu", data={**edit, "software": "CRM Software"})
    assert refused.status_code == 422
    alert = ALERT.search(refused.text)
    assert alert is not None and html.unescape(alert.group(1)).startswith("software: 'CRM Software' does not match ")
    assert form_of(refused, "/console/servers/crm-eu")["software"] == "CRM Software"  # filled back in to correct
    assert servers.get_server(ctx, admin, "crm-eu").software == "crm"

    cleared = await browser.post("/console/servers/crm-eu", data={**edit, "software": "  "})
    assert cleared.status_code == 303, cleared.text
    shown = servers.get_server(ctx, admin, "crm-eu")
    assert shown.software is None and shown.url == "http://crm-eu.example/mcp" and shown.enabled
    page = await browser.get("/console/servers/crm-eu")
    fact = SOFTWARE_FACT.search(page.text)
    assert fact is not None and fact.group(1) == "none"
    assert form_of(page, "/console/servers/crm-eu")["software"] == ""


async def test_a_bad_software_on_the_add_form_stores_nothing(
    browser: httpx2.AsyncClient, ctx: Context, admin: Principal
) -> None:
    new = form_of(await browser.get("/console/servers/new"), "/console/servers/new")
    refused = await browser.post("/console/servers/new",
                                 data={**new, "name": "crm-eu", "url": "http://crm-eu.example/mcp", "software": "-crm"})
    assert refused.status_code == 422
    alert = ALERT.search(refused.text)
    assert alert is not None and html.unescape(alert.group(1)).startswith("software: '-crm' does not match ")
    assert form_of(refused, "/console/servers/new")["name"] == "crm-eu"
    assert servers.list_servers(ctx, admin).total == 0


async def test_the_server_list_shows_the_software_and_its_search_finds_servers_by_it(
    browser: httpx2.AsyncClient, ctx: Context, admin: Principal,
) -> None:
    # Neither the names nor the URLs hold "crm": only the software does.
    servers.create_server(ctx, admin, {"name": "sales-eu", "url": "http://eu.example/mcp", "software": "crm"})
    servers.create_server(ctx, admin, {"name": "sales-us", "url": "http://us.example/mcp", "software": "crm"})
    servers.create_server(ctx, admin, {"name": "wiki", "url": "http://wiki.example/mcp"})
    page = await browser.get("/console/servers")
    assert page.status_code == 200
    assert re.findall(r'data-software="([^"]*)"', page.text) == ["crm", "crm"]
    found = await browser.get("/console/servers", params={"q": "crm"})
    assert re.findall(r'href="/console/servers/([a-z0-9-]+)"><strong>', found.text) == ["sales-eu", "sales-us"]
    # The search behind the list (services.servers.list_servers) is what finds them.
    assert [s.name for s in servers.list_servers(ctx, admin, q="CRM").items] == ["sales-eu", "sales-us"]
    assert [s.name for s in servers.list_servers(ctx, admin, q="wiki").items] == ["wiki"]
