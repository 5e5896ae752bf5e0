"""Another site (a page on another loopback port) can neither frame the console nor sign a browser in."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from tests.console.conftest import Console, sign_in
from tests.upstreams import serve
from toolvet.console.session import COOKIE

INNER = "<!doctype html><title>inner</title><p id=inner>the other site's own page</p>"


def other_site(console: Console) -> Starlette:
    """An attacker's pages: one framing the console (next to a frame of its own), one posting a sign-in."""

    async def framer(request: Request) -> HTMLResponse:
        return HTMLResponse(
            "<!doctype html><title>framer</title>"
            f'<iframe id=console src="{console.at("/console/tools")}"></iframe>'
            '<iframe id=own src="/inner"></iframe>'
        )

    async def inner(request: Request) -> HTMLResponse:
        return HTMLResponse(INNER)

    async def forged_sign_in(request: Request) -> HTMLResponse:
        token = request.query_params["token"]
        return HTMLResponse(
            "<!doctype html><title>forged</title>"
            f'<form id=f method=post action="{console.at("/console/login")}">'
            f'<input name=token value="{token}"><button>go</button></form>'
        )

    return Starlette(routes=[Route("/framer", framer), Route("/inner", inner), Route("/forged", forged_sign_in)])


@pytest.fixture
def attacker(console: Console) -> Iterator[str]:
    with serve(other_site(console), "") as running:
        yield running.url


def frame_text(page: Any, name: str) -> str:
    frame = page.frame_locator(f"iframe#{name}")
    return str(frame.locator("body").inner_text(timeout=5_000))


def test_a_page_on_another_port_cannot_frame_the_console(page: Any, console: Console, attacker: str) -> None:
    sign_in(page, console)  # a signed-in operator visits the other site
    with page.expect_console_message(lambda message: "frame-ancestors" in message.text) as refusal:
        page.goto(f"{attacker}/framer", wait_until="load")
    assert "violates the following Content Security Policy directive" in refusal.value.text
    # The other site's own frame loads: frames work on that page, only the console's is refused.
    assert "the other site's own page" in frame_text(page, "own")
    framed = page.locator("iframe#console").element_handle().content_frame()
    assert not framed.url.startswith(console.url)  # Chromium shows its error page instead
    assert "toolvet" not in framed.content()


def test_a_sign_in_form_posted_from_another_site_starts_no_session(page: Any, console: Console,
                                                                   attacker: str) -> None:
    page.goto(f"{attacker}/forged?token={console.tokens['operator']}")
    with page.expect_navigation():
        page.click("button")
    assert "Refused" in page.content()
    assert not [c for c in page.context.cookies() if c["name"] == COOKIE]
