"""toolvet served on loopback as an operator's browser meets it, for OAuth tests: a toolvet that knows
its own public URL (the redirect URI it registers), a console session, and the Connect button."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
from cryptography.fernet import Fernet

from tests.upstreams import bound_socket, serve
from toolvet.api.app import create_app
from toolvet.schemas.tools import TokenCreate
from toolvet.services import tokens
from toolvet.services.auth import Principal, Role
from toolvet.services.context import Context
from toolvet.settings import Settings

ADMIN = Principal(actor="test:admin", role=Role.ADMIN)
CSRF = re.compile(r'name="csrf" value="([^"]+)"')
CONTINUE = re.compile(r'id="continue" href="([^"]+)"')


@dataclass
class Toolvet:
    url: str
    ctx: Context
    operator_token: str


@contextmanager
def running_toolvet(tmp_path: Path, database_url: str | None = None) -> Iterator[Toolvet]:
    """toolvet (API, console, gateway) on a loopback port it knows as its public URL."""
    sock = bound_socket()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    settings = Settings(home=tmp_path, database_url=database_url or f"sqlite:///{tmp_path}/toolvet.sqlite3",
                        secret_key=Fernet.generate_key().decode(), public_url=url)
    ctx = Context.open(settings)
    token = tokens.create_token(ctx, ADMIN, TokenCreate(role="operator", name="op")).token
    try:
        with serve(create_app(ctx), "", sock):
            yield Toolvet(url, ctx, token)
    finally:
        ctx.close()


@contextmanager
def signed_in(toolvet: Toolvet) -> Iterator[httpx2.Client]:
    """An operator's "browser": a client with a console session."""
    with httpx2.Client(base_url=toolvet.url, timeout=10.0) as browser:
        answer = browser.post("/console/login", data={"token": toolvet.operator_token, "next": "/console/servers"})
        assert answer.status_code == 303, answer.text
        yield browser


def authorize_url(browser: httpx2.Client, name: str, csrf: str) -> str:
    """Click Connect: toolvet's page that sends the browser on to the authorization server."""
    going = browser.post(f"/console/servers/{name}/connect", data={"csrf": csrf})
    assert going.status_code == 200, going.text
    link = CONTINUE.search(going.text)
    assert link is not None
    return html.unescape(link.group(1))
