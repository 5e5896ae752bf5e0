"""Signing in, what a reader may do, and CSRF on every form."""

from __future__ import annotations

from typing import Any

from tests.console.conftest import ADMIN, Console, sign_in
from toolvet.console.session import COOKIE
from toolvet.schemas.servers import ServerCreate
from toolvet.services import servers


def test_a_bad_token_is_refused_and_a_consumer_token_cannot_sign_in(page: Any, console: Console) -> None:
    page.goto(console.at("/console/tools"))
    assert "/console/login" in page.url
    for token in ("tv_not-a-real-token", console.tokens["consumer"]):
        page.fill("input[name=token]", token)
        page.click("button:has-text('Sign in')")
        assert page.locator("[role=alert]").is_visible()
        assert "/console/login" in page.url
    assert not [c for c in page.context.cookies() if c["name"] == COOKIE]


def test_the_session_cookie_is_http_only_lax_and_never_holds_the_token(page: Any, console: Console) -> None:
    sign_in(page, console)
    [cookie] = [c for c in page.context.cookies() if c["name"] == COOKIE]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax" and cookie["path"] == "/console"
    assert console.tokens["operator"] not in cookie["value"]
    assert page.locator("header").get_by_text("token:operator").is_visible()


def test_the_root_redirects_to_the_console(page: Any, console: Console) -> None:
    sign_in(page, console)
    page.goto(console.url + "/")
    assert page.url.endswith("/console/tools")


def test_a_reader_sees_everything_but_has_no_forms_that_change_things(page: Any, console: Console) -> None:
    servers.create_server(
        console.ctx,
        ADMIN,
        ServerCreate(name="docs", url="http://127.0.0.1:9/mcp", headers={"X-Key": "s3cret"}),
    )
    sign_in(page, console, "reader")
    for path in (
        "/console/servers",
        "/console/servers/docs",
        "/console/tools",
        "/console/calls",
        "/console/audit",
    ):
        page.goto(console.at(path))
        # The only POST form a reader gets is signing out.
        actions = page.locator("form[method=post]").evaluate_all("fs => fs.map(f => f.action)")
        assert all(a.endswith("/console/logout") for a in actions), (path, actions)
    assert "s3cret" not in page.content()


def test_a_forged_post_by_a_reader_is_refused(page: Any, console: Console) -> None:
    servers.create_server(console.ctx, ADMIN, ServerCreate(name="docs", url="http://127.0.0.1:9/mcp"))
    sign_in(page, console, "reader")
    page.goto(console.at("/console/servers/docs"))
    csrf = page.locator("input[name=csrf]").first.get_attribute("value")
    answer = page.request.post(
        console.at("/console/servers/docs"),
        form={"csrf": csrf, "transport": "streamable-http", "url": "http://evil.invalid/mcp"},
    )
    assert answer.status == 403
    assert servers.get_server(console.ctx, ADMIN, "docs").url == "http://127.0.0.1:9/mcp"


def test_a_post_without_or_with_a_wrong_csrf_token_is_refused(page: Any, console: Console) -> None:
    servers.create_server(console.ctx, ADMIN, ServerCreate(name="docs", url="http://127.0.0.1:9/mcp"))
    sign_in(page, console, "operator")
    form = {"transport": "streamable-http", "url": "http://evil.invalid/mcp", "enabled": "on"}
    for extra in ({}, {"csrf": "forged"}):
        answer = page.request.post(console.at("/console/servers/docs"), form={**form, **extra})
        assert answer.status == 403
        assert "security token" in answer.text()
    assert servers.get_server(console.ctx, ADMIN, "docs").url == "http://127.0.0.1:9/mcp"


def test_signing_out_ends_the_session(page: Any, console: Console) -> None:
    sign_in(page, console)
    page.click("button:has-text('Sign out')")
    page.goto(console.at("/console/servers"))
    assert "/console/login" in page.url
