"""Big sweeps write through a writer process: the same outcome as writing in this process, on SQLite
and PostgreSQL, and a sweep that outlives its writer process."""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from sqlalchemy import func, select

from tests.upstreams import raw_listing_server
from toolvet.db.models import DiscoveryRun, Lease
from toolvet.services import discovery, discovery_writer, leases, servers, tools
from toolvet.services.context import Context
from toolvet.services.discovery_writer import InlineWriter, ProcessWriter, writer_for
from toolvet.services.discovery_writes import LEASED_ELSEWHERE
from toolvet.settings import Settings

pytestmark = pytest.mark.anyio

SERVERS = 3


def tool(name: str, description: str = "Does a thing.", **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": description,
            "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}, **extra}


@pytest.fixture
def wctx(settings: Settings) -> Iterator[Context]:
    """A context whose every sweep of two or more servers goes through a writer process."""
    context = Context.open(settings.model_copy(update={"discovery_writer_min_servers": 2}))
    try:
        yield context
    finally:
        context.close()


async def sweep(ctx: Context, admin: Any) -> list[Any]:
    with anyio.fail_after(60):
        return await discovery.discover(ctx, admin)


def counts(run: Any) -> tuple[Any, ...]:
    return (run.status, run.added, run.changed, run.unchanged, run.retired, run.rejected)


async def test_a_sweep_through_the_writer_process_stores_what_an_inline_one_would(wctx, admin):
    pages: dict[str | None, Any] = {None: {"tools": [tool("a"), tool("b", securitySchemes=[{"type": "noauth"}])]}}
    with raw_listing_server(pages) as up:
        for index in range(SERVERS):
            servers.create_server(wctx, admin, {"name": f"up{index}", "url": up.url})
        first = await sweep(wctx, admin)
        assert isinstance(wctx.discovery_writer, ProcessWriter)
        writer_pid = await wctx.discovery_writer.pid()
        assert writer_pid != os.getpid()
        again = await sweep(wctx, admin)  # likely unchanged: sent without its tools, takes the fast path
        pages[None] = {"tools": [tool("a", "Now does another thing."), tool("c")]}
        changed = await sweep(wctx, admin)  # the fast path fails: sent again, whole
        assert await wctx.discovery_writer.pid() == writer_pid  # one writer process, kept across sweeps
        # What its steps took, for the benchmarks: wall time (waits included) at least their CPU time.
        wall, cpu = await wctx.discovery_writer.call(discovery_writer.busy)
        assert wall + 0.01 >= cpu > 0
    assert [counts(r) for r in first] == [("ok", 2, 0, 0, 0, 0)] * SERVERS
    assert [counts(r) for r in again] == [("ok", 0, 0, 2, 0, 0)] * SERVERS
    assert [counts(r) for r in changed] == [("ok", 1, 1, 0, 1, 0)] * SERVERS
    assert {r.runner for r in first + again + changed} == {leases.HOLDER}  # this process's passes
    b = tools.get_tool(wctx, admin, "up0", "b")
    assert b.retired_at is not None and b.definition["securitySchemes"] == [{"type": "noauth"}]
    assert tools.get_tool(wctx, admin, "up2", "a").description == "Now does another thing."
    with wctx.db.transaction() as session:
        assert session.scalar(select(func.count()).select_from(Lease)) == 0
        assert session.scalar(select(func.count()).select_from(DiscoveryRun)) == 3 * SERVERS


async def test_a_server_leased_by_another_process_is_skipped_by_the_writer_process(wctx, admin):
    with raw_listing_server({None: {"tools": [tool("a")]}}) as up:
        for index in range(SERVERS):
            servers.create_server(wctx, admin, {"name": f"up{index}", "url": up.url})
        assert leases.acquire(wctx.db, "discover:up1", 60, holder="elsewhere")
        runs = await sweep(wctx, admin)
    assert [r.status for r in runs] == ["ok", "skipped", "ok"]
    assert runs[1].error == LEASED_ELSEWHERE


async def test_a_sweep_outlives_its_writer_process(wctx, admin, caplog):
    with raw_listing_server({None: {"tools": [tool("a")]}}) as up:
        for index in range(SERVERS):
            servers.create_server(wctx, admin, {"name": f"up{index}", "url": up.url})
        await sweep(wctx, admin)
        writer = wctx.discovery_writer
        assert isinstance(writer, ProcessWriter)
        pid = await writer.pid()
        os.kill(pid, signal.SIGKILL)
        with caplog.at_level(logging.WARNING, logger="toolvet.discovery"):
            runs = await sweep(wctx, admin)
        assert [counts(r) for r in runs] == [("ok", 0, 0, 1, 0, 0)] * SERVERS
        assert "writer process died" in caplog.text
        assert not writer.alive
        runs = await sweep(wctx, admin)  # the next big sweep starts a new writer process
        assert isinstance(wctx.discovery_writer, ProcessWriter) and wctx.discovery_writer.alive
        assert await wctx.discovery_writer.pid() != pid
    assert [r.status for r in runs] == ["ok"] * SERVERS


def test_small_sweeps_and_a_zero_threshold_stay_in_this_process(settings):
    context = Context.open(settings.model_copy(update={"discovery_writer_min_servers": 0}))
    try:
        assert isinstance(writer_for(context, 10_000), InlineWriter)
    finally:
        context.close()
    context = Context.open(settings)  # the default threshold
    try:
        assert isinstance(writer_for(context, 1), InlineWriter)
        assert context.discovery_writer is None  # no process was started
    finally:
        context.close()


async def test_leases_taken_ahead_for_passes_that_never_start_are_given_back(ctx, admin, monkeypatch):
    """A sweep leases its next passes together; when it fails, the ones not started are released."""

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk full")

    with raw_listing_server({None: {"tools": [tool("a")]}}) as up:
        for index in range(40):  # more than discovery_concurrency (16): leases are taken ahead
            servers.create_server(ctx, admin, {"name": f"up{index:02d}", "url": up.url})
        monkeypatch.setattr(discovery_writer, "apply_listing", broken)
        with pytest.raises(BaseException) as raised:
            await sweep(ctx, admin)
        monkeypatch.undo()
    assert "disk full" in repr(raised.value) or any("disk full" in repr(e) for e in raised.value.exceptions)
    with ctx.db.transaction() as session:
        assert session.scalar(select(func.count()).select_from(Lease)) == 0


async def test_withheld_listings_go_to_the_writer_together(wctx, admin, monkeypatch):
    """Likely-unchanged listings go without their tools, several per round trip to the writer; one
    whose fast path fails after all (an operator deleted a tool) is sent again whole."""
    batches: list[int] = []
    run = ProcessWriter._run

    async def counting(self: ProcessWriter, fn: Any, *args: Any) -> Any:
        if fn is discovery_writer._child_apply:  # the withheld listings in each group sent
            batches.append(sum(1 for item in args[0] if item[6]))
        return await run(self, fn, *args)

    with raw_listing_server({None: {"tools": [tool("a"), tool("b")]}}) as up:
        for index in range(24):
            servers.create_server(wctx, admin, {"name": f"up{index:02d}", "url": up.url})
        await sweep(wctx, admin)
        assert isinstance(wctx.discovery_writer, ProcessWriter)
        await wctx.discovery_writer.pid()  # up: every apply now goes to it
        tools.delete_tool(wctx, admin, "up07", "b")
        monkeypatch.setattr(ProcessWriter, "_run", counting)
        runs = await sweep(wctx, admin)
    by_server = {r.server: counts(r) for r in runs}
    assert by_server.pop("up07") == ("ok", 1, 0, 1, 0, 0)  # b added again, by the whole listing
    assert set(by_server.values()) == {("ok", 0, 0, 2, 0, 0)}
    assert sum(batches) == 24 and max(batches) > 1  # every listing went withheld, several per trip
    assert tools.get_tool(wctx, admin, "up07", "b").name == "b"


async def test_a_big_sweep_runs_with_the_heap_it_found_frozen_and_thaws_it_after(wctx, admin):
    """The objects alive when a big sweep starts are left out of the collector's passes during it
    (services.heap); after it they are collected again as ever, and so is a cycle made meanwhile."""
    import gc
    import weakref

    class Cycle:
        me: Any = None

    frozen_during: list[int] = []
    with raw_listing_server({None: {"tools": [tool("a")]}}) as up:
        for index in range(3):
            servers.create_server(wctx, admin, {"name": f"up{index}", "url": up.url})
        # 0, or what the interpreter froze itself (CPython 3.12.1 starts with 375; the first unfreeze empties it)
        before = gc.get_freeze_count()
        old = Cycle()
        old.me = old
        gone = weakref.ref(old)
        del old  # garbage, but only the collector can see it: frozen during the sweep, collected after
        with anyio.fail_after(60):
            await discovery.discover(wctx, admin, on_run=lambda run: frozen_during.append(gc.get_freeze_count()))
    assert len(frozen_during) == 3 and min(frozen_during) > before
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert gone() is None


def test_nested_frozen_blocks_thaw_the_heap_when_the_last_ends():
    import gc

    from toolvet.services.heap import frozen_during

    with frozen_during():
        with frozen_during():
            assert gc.get_freeze_count() > 0
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0


async def test_fetches_stay_within_discovery_concurrency_while_fetched_passes_wait_for_the_writer(
        settings, admin, monkeypatch):
    """The bound is on fetching: a pass whose listing is fetched frees its slot while it waits for the
    writer, so the next fetches go on (up to WRITE_BACKLOG listings a slot wait), and never more than
    ``discovery_concurrency`` listings are fetched at once."""
    fetching = most_fetching = waiting = most_waiting = 0
    fetch, apply = discovery.fetch_listing, InlineWriter.apply

    async def counted_fetch(*args: Any, **kwargs: Any) -> Any:
        nonlocal fetching, most_fetching
        fetching += 1
        most_fetching = max(most_fetching, fetching)
        try:
            return await fetch(*args, **kwargs)
        finally:
            fetching -= 1

    async def slow_apply(self: InlineWriter, *args: Any, **kwargs: Any) -> Any:
        nonlocal waiting, most_waiting
        waiting += 1
        most_waiting = max(most_waiting, waiting)
        try:
            await anyio.sleep(0.2)  # a writer busy with other passes, long beside a loopback fetch
            return await apply(self, *args, **kwargs)
        finally:
            waiting -= 1

    context = Context.open(settings.model_copy(update={"discovery_concurrency": 3}))
    try:
        monkeypatch.setattr(discovery, "fetch_listing", counted_fetch)
        monkeypatch.setattr(InlineWriter, "apply", slow_apply)
        with raw_listing_server({None: {"tools": [tool("a")]}}) as up:
            for index in range(30):
                servers.create_server(context, admin, {"name": f"up{index:02d}", "url": up.url})
            runs = await sweep(context, admin)
    finally:
        context.close()
    assert [counts(r) for r in runs] == [("ok", 1, 0, 0, 0, 0)] * 30
    assert most_fetching == 3
    assert 3 < most_waiting <= 3 * (1 + discovery.WRITE_BACKLOG)


async def test_two_groups_are_in_flight_to_the_writer_process_and_every_apply_is_answered(wctx, admin, monkeypatch):
    """While the writer process writes one group of applies, the next is sent (PIPELINE); never more,
    and every pass gets its own outcome."""
    in_flight = most = 0
    sent: list[str] = []
    run = ProcessWriter._run

    async def slow_trip(self: ProcessWriter, fn: Any, *args: Any) -> Any:
        nonlocal in_flight, most
        if fn is not discovery_writer._child_apply:
            return await run(self, fn, *args)
        in_flight += 1
        most = max(most, in_flight)
        sent.extend(item[1] for item in args[0])
        try:
            await anyio.sleep(0.2)  # a round trip long enough for the next applies to gather
            return await run(self, fn, *args)
        finally:
            in_flight -= 1

    with raw_listing_server({None: {"tools": [tool("a"), tool("b")]}}) as up:
        for index in range(40):
            servers.create_server(wctx, admin, {"name": f"up{index:02d}", "url": up.url})
        assert isinstance(writer_for(wctx, 40), ProcessWriter)
        await wctx.discovery_writer.pid()  # up: every apply goes to it
        monkeypatch.setattr(ProcessWriter, "_run", slow_trip)
        runs = await sweep(wctx, admin)
    assert most == discovery_writer.PIPELINE
    assert sorted(sent) == [f"up{index:02d}" for index in range(40)]  # each sent once, whole
    assert {r.server: counts(r) for r in runs} == {f"up{index:02d}": ("ok", 2, 0, 0, 0, 0) for index in range(40)}


async def test_once_the_writer_process_is_up_a_sweep_takes_its_leases_there(wctx, admin, monkeypatch):
    """Leases go to the writer process with the applies, first in first out: taken in a thread of this
    process they fought the writer for SQLite's write lock, each side's busy handler sleeping."""
    steps: list[str] = []
    run = ProcessWriter._run

    async def recording(self: ProcessWriter, fn: Any, *args: Any) -> Any:
        steps.append(fn.__name__)
        return await run(self, fn, *args)

    def not_here(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a lease taken in this process while the writer process is up")

    with raw_listing_server({None: {"tools": [tool("a")]}}) as up:
        for index in range(60):  # more than one chunk of leases (3 x discovery_concurrency)
            servers.create_server(wctx, admin, {"name": f"up{index:02d}", "url": up.url})
        assert isinstance(writer_for(wctx, 60), ProcessWriter)
        await wctx.discovery_writer.pid()  # up
        monkeypatch.setattr(ProcessWriter, "_run", recording)
        monkeypatch.setattr(discovery_writer, "begin_passes", not_here)  # this process's own lease step
        runs = await sweep(wctx, admin)
    assert {counts(r) for r in runs} == {("ok", 1, 0, 0, 0, 0)} and len(runs) == 60
    assert steps.count("_child_begin") >= 2 and "_child_apply" in steps


async def test_passes_waiting_to_write_here_go_to_the_writer_process_once_it_is_up(wctx, admin, monkeypatch):
    """While the writer process starts, passes write in this process one at a time; those still waiting
    their turn when it is up go to it instead of writing here for seconds after."""
    written_here: list[str] = []
    inline_apply = InlineWriter.apply

    async def slow_here(self: InlineWriter, server_id: int, name: str, *args: Any, **kwargs: Any) -> Any:
        written_here.append(name)
        await anyio.sleep(0.3)  # a pass slowed by this process's event loop, as in a big sweep
        return await inline_apply(self, server_id, name, *args, **kwargs)

    monkeypatch.setattr(InlineWriter, "apply", slow_here)
    with raw_listing_server({None: {"tools": [tool("a")]}}) as up:
        for index in range(40):
            servers.create_server(wctx, admin, {"name": f"up{index:02d}", "url": up.url})
        runs = await sweep(wctx, admin)  # its writer process starts with the sweep (about a second)
    assert {counts(r) for r in runs} == {("ok", 1, 0, 0, 0, 0)} and len(runs) == 40
    # 40 passes at 0.3 s each would take 12 s here; the process took the rest once it was up.
    assert 1 <= len(written_here) < 30
