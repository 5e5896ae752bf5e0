"""Two toolvet instances on one PostgreSQL database share one event bus (``LISTEN``/``NOTIFY``): call
events, the wake-up of a waiting call, and cache invalidation cross from one to the other."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from cryptography.fernet import Fernet
from sqlalchemy import text

from tests.conftest import new_pg_database
from tests.upstreams import modern_http_server
from toolvet.cache import MISSING
from toolvet.errors import Forbidden
from toolvet.schemas.calls import CallCreate, CallStatus
from toolvet.schemas.tools import TokenCreate
from toolvet.services import calls, discovery, preferences, servers, tokens, tools
from toolvet.services.auth import Principal, Role
from toolvet.services.calls import CallService
from toolvet.services.context import Context
from toolvet.services.events import CACHE, TOOLS
from toolvet.services.pg_bus import CHANNEL, MAX_PAYLOAD, PostgresBus
from toolvet.settings import Settings

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

ALICE = Principal(actor="token:alice", role=Role.CONSUMER, user="alice", scope="default")
ADMIN = Principal(actor="test:admin", role=Role.ADMIN)
BOUND = 20  # seconds any cross-instance step may take before the test fails


@pytest.fixture
def pair(pg_base_url: str, tmp_path: Path) -> Iterator[tuple[Context, Context]]:
    """Two instances (each its own home, one shared key) on one fresh database."""
    url, key = new_pg_database(pg_base_url), Fernet.generate_key().decode()
    a = Context.open(Settings(home=tmp_path / "a", database_url=url, secret_key=key))
    b = Context.open(Settings(home=tmp_path / "b", database_url=url, secret_key=key))
    yield a, b
    a.close()
    b.close()


@asynccontextmanager
async def running(*contexts: Context) -> AsyncIterator[list[CallService]]:
    """Each instance's call service, once its bus listens."""
    async with CallService(contexts[0]) as first, CallService(contexts[1]) as second:
        with anyio.fail_after(BOUND):
            for ctx in contexts:
                assert isinstance(ctx.bus, PostgresBus)
                await ctx.bus.listening.wait()
        yield [first, second]


async def registered(ctx: Context, url: str) -> None:
    servers.create_server(ctx, ADMIN, {"name": "up", "url": url})
    with anyio.fail_after(30):
        await discovery.discover(ctx, ADMIN, ["up"])


def add() -> CallCreate:
    return CallCreate(server_type="up", tool_name="tool_0", arguments={"a": 1, "b": 2})


async def test_an_event_published_on_one_instance_reaches_a_subscriber_on_the_other(pair):
    a, b = pair
    big = {"type": "tool-call-pending", "callId": "c2", "arguments": {"text": "x" * (2 * MAX_PAYLOAD)}}
    async with running(a, b), b.bus.subscribe() as inbox:
        a.bus.publish({"type": "tool-call-pending", "callId": "c1"})
        a.bus.publish(big)  # too big for one NOTIFY: stored, and its reference notified
        with anyio.fail_after(BOUND):
            assert await inbox.receive() == {"type": "tool-call-pending", "callId": "c1"}
            assert await inbox.receive() == big


async def test_a_decision_on_one_instance_wakes_the_call_waiting_on_the_other(pair, monkeypatch):
    a, b = pair
    monkeypatch.setattr(calls, "WAIT_POLL", 3600.0)  # only the bus can wake it within the bound
    outcome: dict[str, Any] = {}
    with modern_http_server() as up:
        await registered(a, up.url)
        async with running(a, b) as (on_a, on_b), on_b.events.subscribe() as inbox:

            async def wait_on_a() -> None:
                outcome["call"] = await on_a.submit(ALICE, add(), wait=3600)

            async with anyio.create_task_group() as tg:
                tg.start_soon(wait_on_a)
                with anyio.fail_after(BOUND):
                    pending = await inbox.receive()
                    assert pending["type"] == "tool-call-pending"
                    await on_b.approve(ADMIN, pending["callId"])
    assert outcome["call"].status is CallStatus.DONE
    assert outcome["call"].result["structuredContent"] == {"result": 3}


async def test_an_edit_on_one_instance_drops_the_other_instances_cache_at_once(pair):
    a, b = pair
    with modern_http_server() as up:
        await registered(a, up.url)
        preferences.set_permission_mode(a, ADMIN, "alice", "allow")
        async with running(a, b) as (_, on_b), b.bus.subscribe(CACHE) as changes:
            assert (await on_b.submit(ALICE, add())).status is CallStatus.DONE  # B has the tool cached now
            tools.update_tool(a, ADMIN, "up", "tool_0", {"enabled": False})
            with anyio.fail_after(BOUND):
                assert (await changes.receive())["what"] == ["tool"]
                # B's call service takes the same event in its own task: give it turns until it has dropped
                # the tool it cached (waiting for every task to block hung when some other task kept busy).
                while on_b._tools.cache.peek(("up", "tool_0")) is not MISSING:
                    await anyio.lowlevel.checkpoint()
            with pytest.raises(Forbidden, match="refused"):
                await on_b.submit(ALICE, add())


async def test_a_token_revoked_on_one_instance_is_refused_by_the_other_at_once(pair):
    a, b = pair
    created = tokens.create_token(a, ADMIN, TokenCreate(name="alice", role="consumer", user="alice"))
    async with running(a, b), b.bus.subscribe(CACHE) as changes:
        b.principals.put(created.token, tokens.authenticate(b, created.token))  # B's gateway cached it
        tokens.revoke_token(a, ADMIN, created.id)
        with anyio.fail_after(BOUND):
            assert "token" in (await changes.receive())["what"]
            # B's call service takes the same event in its own task: give it turns until it has dropped
            # the cached principal (waiting for every task to block hung when some other task kept busy).
            while b.principals.get(created.token) is not MISSING:
                await anyio.lowlevel.checkpoint()


async def test_a_discovered_change_is_announced_on_every_instance(pair):
    a, b = pair
    with modern_http_server() as up:
        async with running(a, b), b.bus.subscribe(TOOLS) as changes:
            await registered(a, up.url)
            with anyio.fail_after(BOUND):
                assert await changes.receive() == {"type": "tools-changed", "server": "up"}


async def test_a_dropped_listening_connection_reconnects_drops_the_caches_and_delivers_again(pair):
    a, b = pair
    async with running(a, b), b.bus.subscribe(CACHE) as changes, b.bus.subscribe() as inbox:
        assert isinstance(b.bus, PostgresBus)
        with b.db.engine.begin() as conn:  # the database ends B's listening session (a failover, a restart)
            ended = conn.scalar(text("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                     "WHERE query = :listen AND pid <> pg_backend_pid()"),
                                {"listen": f"LISTEN {CHANNEL}"})
        assert ended == 2  # A's and B's: both listen on this database
        with anyio.fail_after(BOUND):
            # What was published meanwhile is lost: B drops everything it cached.
            assert await changes.receive() == {"type": "changed", "what": ["*"]}
            await b.bus.listening.wait()
            a.bus.publish({"type": "tool-call-decided", "callId": "after"})
            assert await inbox.receive() == {"type": "tool-call-decided", "callId": "after"}
    assert b.bus.reconnections == 1
