"""Old call rows and call audit entries are pruned in bounded batches; operators' actions stay forever.
On SQLite and PostgreSQL, and through the scheduler of ``toolvet serve``."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

import anyio
import pytest
from sqlalchemy import select

from toolvet.db.models import AuditEntry, PendingCall
from toolvet.db.types import utcnow
from toolvet.services.context import Context
from toolvet.services.retention import Pruned, prune
from toolvet.services.scheduler import Scheduler

NOW = utcnow()
OLD = NOW - timedelta(days=31)
RECENT = NOW - timedelta(days=29)


def add_call(ctx: Context, created: datetime, status: str, expires: datetime | None = None) -> str:
    call_id = uuid.uuid4().hex
    with ctx.db.transaction() as session:
        session.add(PendingCall(id=call_id, user="alice", scope="default", server_type="up", tool_name="t",
                                arguments={}, fingerprint="sha256:" + "0" * 64, status=status, auto_allow=True,
                                reasons=[], created_at=created, expires_at=expires))
    return call_id


def add_entry(ctx: Context, at: datetime, action: str) -> int:
    with ctx.db.transaction() as session:
        entry = AuditEntry(at=at, actor="test", action=action, object_type="tool", object_id="tool:up/t")
        session.add(entry)
        session.flush()
        return entry.id


def call_ids(ctx: Context) -> set[str]:
    with ctx.db.transaction() as session:
        return set(session.scalars(select(PendingCall.id)).all())


def entry_ids(ctx: Context) -> set[int]:
    with ctx.db.transaction() as session:
        return set(session.scalars(select(AuditEntry.id)).all())


def tuned(ctx: Context, **settings: Any) -> Context:
    return Context(settings=ctx.settings.model_copy(update=settings), db=ctx.db, secrets=ctx.secrets)


def test_calls_past_retention_go_and_recent_or_still_pending_ones_stay(ctx: Context) -> None:
    old = {add_call(ctx, OLD, status) for status in ("done", "failed", "invalid", "denied", "expired")}
    expired_pending = add_call(ctx, OLD, "pending", expires=OLD + timedelta(minutes=15))
    waiting = add_call(ctx, OLD, "pending", expires=NOW + timedelta(days=1))  # a long approval_ttl
    recent = add_call(ctx, RECENT, "done")
    pruned = prune(ctx, NOW)
    assert pruned.calls == len(old) + 1
    assert call_ids(ctx) == {waiting, recent}
    assert expired_pending not in call_ids(ctx)


def test_only_call_record_entries_leave_the_audit_log(ctx: Context) -> None:
    records = {add_entry(ctx, OLD, action) for action in ("call.pending", "call.run", "call.invalid")}
    kept = {add_entry(ctx, OLD, action) for action in ("call.approve", "call.deny", "server.create",
                                                        "tool.review", "token.create")}
    kept.add(add_entry(ctx, RECENT, "call.run"))
    assert prune(ctx, NOW).audit_entries == len(records)
    assert entry_ids(ctx) == kept


def test_pruning_goes_in_bounded_batches_and_the_next_run_goes_on(ctx: Context) -> None:
    for _ in range(5):
        add_call(ctx, OLD, "done")
        add_entry(ctx, OLD, "call.run")
    assert prune(ctx, NOW, batch=2, max_batches=2) == Pruned(calls=4, audit_entries=4)
    assert prune(ctx, NOW, batch=2, max_batches=2) == Pruned(calls=1, audit_entries=1)
    assert call_ids(ctx) == set() and prune(ctx, NOW, batch=2) == Pruned(0, 0)


def test_zero_days_keeps_everything(ctx: Context) -> None:
    call = add_call(ctx, NOW - timedelta(days=3650), "done")
    entry = add_entry(ctx, NOW - timedelta(days=3650), "call.run")
    assert prune(tuned(ctx, call_retention_days=0, call_audit_retention_days=0), NOW) == Pruned(0, 0)
    assert call_ids(ctx) == {call} and entry_ids(ctx) == {entry}


def test_shorter_retention_settings_prune_sooner(ctx: Context) -> None:
    add_call(ctx, NOW - timedelta(days=2), "done")
    add_entry(ctx, NOW - timedelta(days=2), "call.run")
    assert prune(tuned(ctx, call_retention_days=1, call_audit_retention_days=1), NOW) == Pruned(1, 1)


@pytest.mark.anyio
async def test_the_scheduler_prunes_on_its_first_tick(ctx: Context) -> None:
    add_call(ctx, OLD, "done")
    add_entry(ctx, OLD, "call.run")
    kept = add_entry(ctx, OLD, "server.create")
    seen: list[Pruned] = []
    done = anyio.Event()

    def on_prune(pruned: Pruned) -> None:
        seen.append(pruned)
        done.set()

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            await tg.start(Scheduler(ctx, on_prune=on_prune).run)
            await done.wait()
            tg.cancel_scope.cancel()
    assert seen == [Pruned(calls=1, audit_entries=1)]
    assert call_ids(ctx) == set() and entry_ids(ctx) == {kept}
