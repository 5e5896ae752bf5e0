"""Discovery leases on SQLite and PostgreSQL: one key at a time and a sweep's keys together."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select, update

from toolvet.db.models import Lease
from toolvet.db.types import utcnow
from toolvet.services import leases
from toolvet.services.context import Context


def holders(ctx: Context) -> dict[str, str]:
    with ctx.db.engine.connect() as conn:
        return {row.key: row.holder for row in conn.execute(select(Lease.key, Lease.holder))}


def take(ctx: Context, keys: list[str], holder: str, seconds: float = 60) -> set[str]:
    with ctx.db.engine.begin() as conn:
        return leases.acquire_many(conn, keys, seconds, holder)


def test_free_keys_are_all_taken_in_one_call(ctx):
    assert take(ctx, ["a", "b", "c"], "one") == {"a", "b", "c"}
    assert holders(ctx) == {"a": "one", "b": "one", "c": "one"}


def test_a_live_lease_of_another_holder_is_left_alone(ctx):
    assert leases.acquire(ctx.db, "b", 60, holder="two")
    assert take(ctx, ["a", "b", "c"], "one") == {"a", "c"}
    assert take(ctx, ["a", "b", "c"], "three") == set()
    assert holders(ctx) == {"a": "one", "b": "two", "c": "one"}


def test_a_lapsed_lease_is_taken_over_and_an_own_one_renewed(ctx):
    assert take(ctx, ["lapsed"], "two") == {"lapsed"}
    assert take(ctx, ["mine"], "one", seconds=5) == {"mine"}
    with ctx.db.engine.begin() as conn:
        conn.execute(update(Lease).where(Lease.key == "lapsed").values(expires_at=utcnow() - timedelta(seconds=1)))
    assert take(ctx, ["lapsed", "mine", "new"], "one", seconds=600) == {"lapsed", "mine", "new"}
    assert holders(ctx) == {"lapsed": "one", "mine": "one", "new": "one"}
    with ctx.db.engine.connect() as conn:
        expiry = conn.scalar(select(Lease.expires_at).where(Lease.key == "mine"))
    assert expiry > utcnow() + timedelta(seconds=500)


def test_a_lease_taken_with_others_is_released_like_one_taken_alone(ctx):
    assert take(ctx, ["a", "b"], "one") == {"a", "b"}
    leases.release(ctx.db, "a", holder="one")
    leases.release(ctx.db, "b", holder="someone else")  # not theirs: nothing happens
    assert holders(ctx) == {"b": "one"}
    assert take(ctx, [], "one") == set()
