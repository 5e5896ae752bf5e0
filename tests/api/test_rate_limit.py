"""The per-token rate limit: past it a request is refused 429 with Retry-After, counted across every
app sharing the database (PostgreSQL), per token."""

from __future__ import annotations

import httpx2
import pytest

from tests.api.conftest import bearer
from toolvet.api import create_app
from toolvet.services.context import Context
from toolvet.services.rate_limit import RateLimiter

pytestmark = pytest.mark.anyio


async def test_a_token_past_its_limit_is_answered_429_with_retry_after(ctx, mint):
    ctx.settings.rate_limit_per_minute = 3
    reader, other = bearer(mint("reader")), bearer(mint("reader", name="other"))
    second = Context.open(ctx.settings)
    for each in (ctx, second):  # one clock, mid-window: the test never straddles two windows
        each.rate_limiter = RateLimiter(each, clock=lambda: 1_800_000_030.0)
    shared = ctx.db.engine.dialect.name == "postgresql"
    try:
        apps = [create_app(ctx), create_app(second)]
        async with (httpx2.AsyncClient(transport=httpx2.ASGITransport(app=apps[0]), base_url="http://a") as a,
                    httpx2.AsyncClient(transport=httpx2.ASGITransport(app=apps[1]), base_url="http://b") as b):
            on_a = [(await a.get("/api/v1/servers", headers=reader)).status_code for _ in range(3)]
            refused = await a.get("/api/v1/servers", headers=reader)
            on_b = await b.get("/api/v1/servers", headers=reader)
            another_token = await a.get("/api/v1/servers", headers=other)
    finally:
        second.close()
    assert on_a == [200, 200, 200]
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "30"
    assert refused.json()["error"]["type"] == "rate_limited"
    # The other app shares the count where the database is shared (PostgreSQL); SQLite counts per process.
    assert on_b.status_code == (429 if shared else 200)
    assert another_token.status_code == 200
