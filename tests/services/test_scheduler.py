"""The scheduler inside ``toolvet serve``: interval re-discovery, list-changed watchers with debounce,
and servers it must leave alone - against real upstreams, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from cryptography.fernet import Fernet
from sqlalchemy import select

from tests.upstreams import announcing_http_server, change_tools, demo_server, raw_listing_server
from toolvet.db.models import DiscoveryRun
from toolvet.schemas.tools import DiscoveryRunOut
from toolvet.services import servers
from toolvet.services.context import Context
from toolvet.services.events import LIST_CHANGED, UPSTREAM
from toolvet.services.scheduler import Scheduler
from toolvet.services.secrets import SecretBox

pytestmark = pytest.mark.anyio

LISTING = {None: {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}}


def tuned(ctx: Context, **settings: Any) -> Context:
    """The same database and secrets with other settings (fast timers for tests)."""
    return Context(settings=ctx.settings.model_copy(update=settings), db=ctx.db, secrets=ctx.secrets)


class Recorder:
    """Collects run reports and ``request`` calls; lets a test wait until a predicate holds."""

    def __init__(self) -> None:
        self.runs: list[DiscoveryRunOut] = []
        self.requests: list[str] = []
        self._changed = anyio.Event()

    def run(self, report: DiscoveryRunOut) -> None:
        self.runs.append(report)
        self._poke()

    def _poke(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def until(self, predicate: Callable[[], bool]) -> None:
        while not predicate():
            await self._changed.wait()

    def of(self, server: str, trigger: str) -> list[DiscoveryRunOut]:
        return [r for r in self.runs if r.server == server and r.trigger == trigger and r.id is not None]


class RecordingScheduler(Scheduler):
    """A Scheduler that also records each list-changed request it receives."""

    def __init__(self, ctx: Context, recorder: Recorder) -> None:
        super().__init__(ctx, on_run=recorder.run)
        self.recorder = recorder

    def request(self, name: str) -> None:
        super().request(name)
        self.recorder.requests.append(name)
        self.recorder._poke()


@asynccontextmanager
async def scheduling(ctx: Context) -> AsyncIterator[tuple[RecordingScheduler, Recorder]]:
    recorder = Recorder()
    scheduler = RecordingScheduler(ctx, recorder)
    async with anyio.create_task_group() as tg:
        await tg.start(scheduler.run)
        yield scheduler, recorder
        tg.cancel_scope.cancel()


async def test_a_registered_server_is_discovered_again_and_again_without_anyone_asking(ctx, admin):
    fast = tuned(ctx, discovery_interval=0.2)
    with raw_listing_server(LISTING) as up:
        servers.create_server(fast, admin, {"name": "up", "url": up.url})
        async with scheduling(fast) as (scheduler, recorder):
            with anyio.fail_after(20):
                await recorder.until(lambda: len(recorder.of("up", "schedule")) >= 3)
    runs = recorder.of("up", "schedule")
    assert all(r.status == "ok" for r in runs)
    assert runs[0].added == 1 and runs[1].unchanged == 1
    assert scheduler.passes >= len(runs) - 1  # counted when the sweep returns, after its on_run calls
    assert servers.get_server(ctx, admin, "up").last_discovery_status == "ok"


@pytest.mark.parametrize("handshake_only", [False, True], ids=["2026-07-28", "handshake"])
async def test_list_changed_announcements_lead_to_one_debounced_pass(ctx, admin, handshake_only):
    # Wide enough that three announcements, each a round trip through the upstream and the watcher, land
    # inside it on a loaded machine (one CI run on PostgreSQL took 1.44 s for them).
    debounce = 4.0
    slow = tuned(ctx, discovery_interval=3600, discovery_debounce=debounce)
    server = demo_server()
    with announcing_http_server(server, handshake_only=handshake_only) as (up, announcer):
        servers.create_server(slow, admin, {"name": "up", "url": up.url})
        async with scheduling(slow) as (scheduler, recorder):
            with anyio.fail_after(30):
                await recorder.until(lambda: len(recorder.of("up", "schedule")) == 1)
                await announcer.wait_ready(announcer.stream_open if handshake_only else announcer.listening)
                assert scheduler.watched().keys() == {"up"}
                first = anyio.current_time()
                for index in range(3):  # three announcements inside one debounce window
                    change_tools(server, f"added_{index}")
                    await announcer.announce()
                    await recorder.until(lambda n=index: len(recorder.requests) > n)
                assert anyio.current_time() - first < debounce  # all three landed inside the window
                await recorder.until(lambda: len(recorder.of("up", "list-changed")) == 1)
                waited = anyio.current_time() - first
            assert not scheduler._requested  # nothing left over for a second pass
    [changed] = recorder.of("up", "list-changed")
    assert changed.status == "ok" and changed.added == 3
    assert debounce <= waited < debounce + 10
    with ctx.db.transaction() as session:
        triggers = session.scalars(select(DiscoveryRun.trigger).order_by(DiscoveryRun.id)).all()
    assert triggers == ["schedule", "list-changed"]


async def test_disabled_and_manual_servers_are_never_contacted_and_watchers_follow_edits(ctx, admin):
    fast = tuned(ctx, discovery_interval=0.2)
    with raw_listing_server(LISTING) as off, raw_listing_server(LISTING) as hand, \
            raw_listing_server(LISTING) as live:
        servers.create_server(fast, admin, {"name": "off", "url": off.url, "enabled": False})
        servers.create_server(fast, admin, {"name": "hand", "url": hand.url, "discovery": "manual"})
        servers.create_server(fast, admin, {"name": "live", "url": live.url})
        async with scheduling(fast) as (scheduler, recorder):
            with anyio.fail_after(20):
                await recorder.until(lambda: len(recorder.of("live", "schedule")) >= 2)
                assert scheduler.watched().keys() == {"live"}
                servers.update_server(fast, admin, "live", {"url": live.url + "?edited=1"})
                await recorder.until(lambda: scheduler.watched().get("live") is not None
                                     and scheduler.watched()["live"].url == live.url + "?edited=1")
                servers.update_server(fast, admin, "live", {"enabled": False})
                while scheduler.watched():  # the next tick (≤ 0.2 s) cancels the disabled server's watcher
                    await anyio.sleep(0.05)
    assert off.requests == [] and hand.requests == []
    assert {r.server for r in recorder.runs} == {"live"}


async def test_a_server_whose_secrets_do_not_open_fails_alone_and_the_sweep_goes_on(ctx, admin):
    fast = tuned(ctx, discovery_interval=3600)
    with raw_listing_server(LISTING) as good, raw_listing_server(LISTING) as other:
        servers.create_server(fast, admin, {"name": "good", "url": good.url})
        # Registered by a process with another key (a replica that generated its own): unreadable here.
        elsewhere = Context(settings=fast.settings, db=fast.db, secrets=SecretBox(Fernet.generate_key()))
        servers.create_server(elsewhere, admin, {"name": "sealed", "url": other.url,
                                                 "headers": {"Authorization": "Bearer x"}})
        async with scheduling(fast) as (scheduler, recorder):
            with anyio.fail_after(20):
                await recorder.until(lambda: bool(recorder.of("good", "schedule")
                                                  and recorder.of("sealed", "schedule")))
            assert "sealed" not in scheduler.watched()
    assert recorder.of("good", "schedule")[0].status == "ok"
    sealed = recorder.of("sealed", "schedule")[0]
    assert sealed.status == "failed" and "cannot be decrypted" in (sealed.error or "")
    assert other.rpc_methods() == []  # never contacted with headers it could not have


async def test_a_change_the_gateway_heard_from_a_server_leads_to_one_debounced_pass(ctx, admin):
    """A server that says on a call's session that its lists changed (the gateway publishes it on the bus,
    ``events.UPSTREAM``) is listed again after the debounce, as a watcher's signal would have it."""
    slow = tuned(ctx, discovery_interval=3600, discovery_debounce=0.5)
    with raw_listing_server(LISTING) as up:
        servers.create_server(slow, admin, {"name": "up", "url": up.url})
        async with scheduling(slow) as (scheduler, recorder):
            with anyio.fail_after(30):
                await recorder.until(lambda: len(recorder.of("up", "schedule")) == 1)
                for _ in range(3):  # three signals inside one debounce window: one pass
                    slow.bus.publish({"type": LIST_CHANGED, "server": "up"}, UPSTREAM)
                slow.bus.publish({"type": "something-else", "server": "up"}, UPSTREAM)
                await recorder.until(lambda: len(recorder.of("up", "list-changed")) == 1)
            assert recorder.requests == ["up", "up", "up"]
            assert not scheduler._requested
