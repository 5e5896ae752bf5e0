"""The API in process over ASGI, on both databases (the ``ctx`` fixture is parametrized), with real
tokens of each role minted through the tokens service."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import httpx2
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from toolvet.api import create_app
from toolvet.db.models import AuditEntry, Server, Tool
from toolvet.schemas.tools import TokenCreate
from toolvet.services import servers, tokens
from toolvet.services.auth import Principal
from toolvet.services.context import Context

Headers = dict[str, str]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def app(ctx: Context) -> FastAPI:
    return create_app(ctx)


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://toolvet") as c:
        yield c


@pytest.fixture
async def served(app: FastAPI) -> AsyncIterator[httpx2.AsyncClient]:
    """A client of the app with its lifespan running (the call service, the alert sender, the gateway)."""
    async with app.router.lifespan_context(app), httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=app), base_url="http://toolvet", timeout=30.0
    ) as c:
        yield c


def bearer(token: str) -> Headers:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def mint(ctx: Context, admin: Principal) -> Callable[..., str]:
    """Mint a real token: ``mint("operator")`` -> ``tv_...``; named ``<role>-token`` unless told."""

    def _mint(role: str, *, name: str | None = None, user: str | None = None) -> str:
        data = TokenCreate(role=role, name=name or f"{role}-token", user=user)
        return tokens.create_token(ctx, admin, data).token

    return _mint


@pytest.fixture
def as_admin(mint: Callable[..., str]) -> Headers:
    return bearer(mint("admin"))


@pytest.fixture
def as_operator(mint: Callable[..., str]) -> Headers:
    return bearer(mint("operator"))


@pytest.fixture
def as_reader(mint: Callable[..., str]) -> Headers:
    return bearer(mint("reader"))


@pytest.fixture
def as_consumer(mint: Callable[..., str]) -> Headers:
    return bearer(mint("consumer", user="alice"))


@pytest.fixture
def manual_server(ctx: Context, admin: Principal) -> str:
    """An HTTP server whose tools are registered by hand; its name."""
    servers.create_server(
        ctx, admin, {"name": "hand", "url": "http://127.0.0.1:1/mcp", "discovery": "manual"}
    )
    return "hand"


@pytest.fixture
def row_counts(ctx: Context) -> Callable[[], dict[str, int]]:
    """How many servers, tools and audit entries the database holds now."""

    def _counts() -> dict[str, int]:
        with ctx.db.transaction() as session:
            return {
                model.__tablename__: session.scalar(select(func.count()).select_from(model)) or 0
                for model in (Server, Tool, AuditEntry)
            }

    return _counts
