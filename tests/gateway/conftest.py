"""The whole toolvet app served by uvicorn on loopback (lifespan on), with real SDK upstreams.

The gateway is reached the way a real client reaches it: the SDK's own ``Client`` over streamable HTTP.
These fixtures run on SQLite only (the app runs in a server thread with its own event loop).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import pytest
from cryptography.fernet import Fernet
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.upstreams import serve
from toolvet.api.app import create_app
from toolvet.schemas.tools import TokenCreate
from toolvet.services import discovery, servers, tokens
from toolvet.services.auth import Principal, Role
from toolvet.services.context import Context
from toolvet.settings import Settings

ADMIN = Principal(actor="test:admin", role=Role.ADMIN)
BOUND = 30.0


@dataclass
class Toolvet:
    """A served toolvet: its context, base URL and tokens."""

    ctx: Context
    alice: str  # consumer token for user alice, scope default
    ops: str  # operator token
    scoped: str  # consumer token (user carol) holding the OAuth scope "files.read"

    base: str = ""

    @property
    def mcp(self) -> str:
        return f"{self.base}/mcp"

    @contextmanager
    def serve(self) -> Iterator[Toolvet]:
        """Run the whole app (lifespan on) on a loopback port; register upstreams before, so the
        gateway's first reading of the registry already holds them."""
        with serve(create_app(self.ctx), "") as served:
            self.base = served.url
            yield self

    def http(self, token: str | None = None) -> httpx2.AsyncClient:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx2.AsyncClient(headers=headers, timeout=BOUND)

    @asynccontextmanager
    async def client(
        self, token: str | None = None, *, mode: str = "2026-07-28", **kwargs: Any
    ) -> AsyncIterator[Client]:
        """The SDK's own client against toolvet's ``/mcp`` (response cache off: lists are re-read)."""
        async with self.http(token) as http:
            transport = streamable_http_client(self.mcp, http_client=http)
            async with Client(transport, mode=mode, cache=None, **kwargs) as client:
                yield client

    async def register(self, name: str, url: str) -> None:
        servers.create_server(self.ctx, ADMIN, {"name": name, "url": url})
        with anyio.fail_after(BOUND):
            runs = await discovery.discover(self.ctx, ADMIN, [name])
        assert runs[0].status == "ok", runs[0].error


@contextmanager
def open_toolvet(home: os.PathLike[str], **overrides: Any) -> Iterator[Toolvet]:
    """A Toolvet on SQLite in ``home`` with its tokens; ``overrides`` are further settings."""
    settings = Settings(
        home=home,
        database_url=f"sqlite:///{home}/toolvet.sqlite3",
        secret_key=Fernet.generate_key().decode(),
        **{"approval_wait": 10.0, **overrides},
    )
    ctx = Context.open(settings)
    try:
        make = tokens.create_token
        alice = make(ctx, ADMIN, TokenCreate(role="consumer", user="alice", name="alice")).token
        ops = make(ctx, ADMIN, TokenCreate(role="operator", name="ops")).token
        scoped = make(
            ctx, ADMIN, TokenCreate(role="consumer", user="carol", name="carol", oauth_scopes=["files.read"])
        ).token
        yield Toolvet(ctx, alice, ops, scoped)
    finally:
        ctx.close()


@pytest.fixture
def toolvet(tmp_path: os.PathLike[str]) -> Iterator[Toolvet]:
    with open_toolvet(tmp_path) as served:
        yield served
