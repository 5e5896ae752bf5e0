"""Leases fail over in seconds: a live holder renews all it holds, a holder that died on this host
frees its leases at once, and one killed with -9 elsewhere loses them when they lapse, to a live
process's scheduler (SQLite and PostgreSQL)."""

from __future__ import annotations

import itertools
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from datetime import timedelta

import anyio
import pytest
from sqlalchemy import update

from tests.services.test_scheduler import LISTING, Recorder, RecordingScheduler, scheduling, tuned
from tests.upstreams import raw_listing_server
from toolvet.db.models import Lease
from toolvet.db.types import utcnow
from toolvet.services import leases, servers
from toolvet.services.discovery_writes import LEASED_ELSEWHERE

pytestmark = pytest.mark.anyio

#: Holds a lease as a process on another host would, renewing it, until killed.
HOLDER_SCRIPT = textwrap.dedent("""
    import os, anyio
    from toolvet.db.engine import Database
    from toolvet.services import leases

    async def main():
        db = Database(os.environ["URL"])
        assert leases.acquire(db, "discover:up", float(os.environ["SECONDS"]), os.environ["HOLDER"])
        print("held", flush=True)
        await leases.keep_renewed(db, float(os.environ["SECONDS"]), os.environ["HOLDER"])

    anyio.run(main)
""")


def test_renewing_extends_every_lease_of_the_holder_and_no_other(ctx):
    assert leases.acquire(ctx.db, "a", -1, holder="elsewhere:1:x")  # lapsed already
    assert leases.acquire(ctx.db, "b", -1, holder="elsewhere:1:x")
    assert leases.acquire(ctx.db, "c", -1, holder="elsewhere:2:y")
    assert leases.renew(ctx.db, 60, holder="elsewhere:1:x") == {"a", "b"}
    assert not leases.acquire(ctx.db, "a", 60, holder="me")  # renewed: live again
    assert leases.acquire(ctx.db, "c", 60, holder="me")  # not renewed: lapsed, taken


async def test_loops_renewing_one_holders_leases_share_one_renewal_a_beat(ctx, monkeypatch):
    # A sweep, the scheduler and the alerts of one process each keep the process's leases renewed:
    # three loops for "mine", beside one loop for "other" over the same beats. Each renewal renews
    # every lease of its holder, so "mine" needs no more renewals than "other" (three times as many
    # before the loops shared them).
    calls: list[str] = []
    real = leases.renew

    def counted(db, seconds, holder=leases.HOLDER):
        calls.append(holder)
        return real(db, seconds, holder)

    monkeypatch.setattr(leases, "renew", counted)
    assert leases.acquire(ctx.db, "a", 30, holder="mine")
    assert leases.acquire(ctx.db, "b", 30, holder="other")
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(leases.keep_renewed, ctx.db, 0.6, "mine")
            tg.start_soon(leases.keep_renewed, ctx.db, 0.6, "other")
            while calls.count("other") < 6:
                await anyio.sleep(0.05)
            tg.cancel_scope.cancel()
    assert 5 <= calls.count("mine") <= calls.count("other") + 1, calls


async def test_when_the_loop_that_renewed_stops_another_goes_on_renewing(ctx, monkeypatch):
    renewed: list[float] = []
    real = leases.renew

    def counted(db, seconds, holder=leases.HOLDER):
        renewed.append(time.monotonic())
        return real(db, seconds, holder)

    monkeypatch.setattr(leases, "renew", counted)
    assert leases.acquire(ctx.db, "a", 1.5, holder="mine")
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            first = anyio.CancelScope()
            tg.start_soon(_renewing_in, first, ctx.db)
            await anyio.sleep(0.05)
            tg.start_soon(leases.keep_renewed, ctx.db, 1.5, "mine")
            while len(renewed) < 2:
                await anyio.sleep(0.02)
            first.cancel()
            stopped = time.monotonic()
            while len([t for t in renewed if t > stopped]) < 3:
                await anyio.sleep(0.02)
            tg.cancel_scope.cancel()
    after = [stopped, *[t for t in renewed if t > stopped]]
    assert max(b - a for a, b in itertools.pairwise(after)) < 1.5  # never a gap the lease would lapse in
    assert not leases.acquire(ctx.db, "a", 60, holder="someone else")


async def _renewing_in(scope: anyio.CancelScope, db) -> None:
    with scope:
        await leases.keep_renewed(db, 1.5, "mine")


def test_a_lease_of_a_process_that_died_on_this_host_is_free_at_once(ctx):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True, timeout=30)
    holder = f"{socket.gethostname()[:30]}:{dead.stdout.strip()}:gone"
    assert leases.acquire(ctx.db, "discover:up", 3600, holder=holder)
    assert leases.acquire(ctx.db, "discover:up", 60, holder="me")
    alive = f"{socket.gethostname()[:30]}:{os.getpid()}:other"  # this process lives: its lease holds
    with ctx.db.engine.begin() as conn:
        conn.execute(update(Lease).values(holder=alive, expires_at=utcnow() + timedelta(hours=1)))
    assert not leases.acquire(ctx.db, "discover:up", 60, holder="me")


async def test_a_holder_killed_with_minus_9_loses_its_servers_to_a_live_scheduler_when_its_leases_lapse(
        ctx, admin):
    lease = 1.0
    fast = tuned(ctx, lease_seconds=lease, discovery_interval=3600)
    env = {**os.environ, "URL": ctx.settings.resolved_database_url(), "SECONDS": str(lease),
           "HOLDER": "another-host:1:alive"}  # not this host: only the lease's lapse can free it
    with raw_listing_server(LISTING) as up:
        servers.create_server(fast, admin, {"name": "up", "url": up.url})
        holder = subprocess.Popen([sys.executable, "-c", HOLDER_SCRIPT], env=env, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert holder.stdout is not None and holder.stdout.readline() == "held\n"
            async with scheduling(fast) as (_, recorder):
                with anyio.fail_after(30):
                    # While the holder lives, it renews: the scheduler's passes are skipped, more than
                    # one lease period long.
                    await recorder.until(lambda: sum(r.error == LEASED_ELSEWHERE for r in recorder.runs) >= 3)
                    assert recorder.of("up", "schedule") == []
                    holder.send_signal(signal.SIGKILL)
                    holder.wait(timeout=10)
                    await recorder.until(lambda: bool(recorder.of("up", "schedule")))
        finally:
            if holder.poll() is None:
                holder.kill()
            holder.communicate(timeout=10)
    assert recorder.of("up", "schedule")[0].status == "ok"


async def test_of_two_schedulers_on_one_database_one_watches_a_server_and_the_other_takes_over(ctx, admin):
    fast = tuned(ctx, lease_seconds=0.5, discovery_interval=0.3)  # a pass every tick: an event to wait on
    with raw_listing_server(LISTING) as up:
        servers.create_server(fast, admin, {"name": "up", "url": up.url})
        recorders = [Recorder(), Recorder()]
        schedulers = [RecordingScheduler(fast, recorder) for recorder in recorders]
        stops = [anyio.CancelScope(), anyio.CancelScope()]
        for index, scheduler in enumerate(schedulers):
            scheduler.holder = f"host-{index}:1:x"  # two processes, as far as the leases can tell

        async def run(index: int) -> None:
            with stops[index]:
                await schedulers[index].run()

        async with anyio.create_task_group() as tg:
            with anyio.fail_after(30):
                for index in (0, 1):
                    tg.start_soon(run, index)
                for recorder in recorders:  # both have synced their watchers since their second tick
                    await recorder.until(lambda r=recorder: len(r.runs) >= 2)
                watching = [index for index, s in enumerate(schedulers) if "up" in s.watched()]
                assert len(watching) == 1 and sorted([*schedulers[0].watched(), *schedulers[1].watched()]) == ["up"]
                holder, other = watching[0], 1 - watching[0]
                stops[holder].cancel()  # the holder stops: it gives its watch lease back
                await recorders[other].until(lambda: "up" in schedulers[other].watched())
            tg.cancel_scope.cancel()
