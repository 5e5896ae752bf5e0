"""Liveness and readiness: ``/healthz`` never touches the database, ``/readyz`` says whether it answers."""

from __future__ import annotations

import socket

import httpx2
import pytest
from cryptography.fernet import Fernet

from toolvet.api.app import create_app
from toolvet.db.engine import Database
from toolvet.services.context import Context
from toolvet.services.secrets import SecretBox
from toolvet.settings import Settings

pytestmark = pytest.mark.anyio


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens there once the socket is closed


async def get(ctx: Context, path: str) -> httpx2.Response:
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=create_app(ctx)), base_url="http://t") as c:
        return await c.get(path)


async def test_readiness_answers_200_when_the_database_answers(ctx):
    ready = await get(ctx, "/readyz")
    assert ready.status_code == 200 and ready.json() == {"status": "ready"}


async def test_readiness_answers_503_and_liveness_200_when_the_database_is_unreachable(tmp_path):
    url = f"postgresql+psycopg://postgres@127.0.0.1:{closed_port()}/toolvet"
    key = Fernet.generate_key()
    ctx = Context(settings=Settings(home=tmp_path, database_url=url, secret_key=key.decode()),
                  db=Database(url), secrets=SecretBox(key))
    try:
        ready = await get(ctx, "/readyz")
        alive = await get(ctx, "/healthz")
    finally:
        ctx.close()
    assert ready.status_code == 503
    assert ready.json()["status"] == "unavailable" and "not reachable" in ready.json()["error"]
    assert alive.status_code == 200 and alive.json() == {"status": "ok"}
