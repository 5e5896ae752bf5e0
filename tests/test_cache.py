"""toolvet.cache.TtlCache: values for a fixed time, a bounded number of keys, on an injected clock."""

from __future__ import annotations

import pytest

from toolvet.cache import MISSING, READ_TTL, TtlCache


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_value_is_served_until_its_ttl_has_passed():
    clock = Clock()
    cache: TtlCache[str, int] = TtlCache(ttl=1.0, clock=clock)
    assert cache.get("a") is MISSING
    assert cache.put("a", 1) == 1
    clock.now += 0.999
    assert cache.get("a") == 1
    clock.now += 0.001
    assert cache.get("a") is MISSING


def test_none_is_a_value_worth_keeping():
    cache: TtlCache[str, int | None] = TtlCache(clock=Clock())
    cache.put("no such tool", None)
    assert cache.get("no such tool") is None


def test_putting_again_restarts_the_ttl():
    clock = Clock()
    cache: TtlCache[str, int] = TtlCache(ttl=1.0, clock=clock)
    cache.put("a", 1)
    clock.now += 0.8
    cache.put("a", 2)
    clock.now += 0.8
    assert cache.get("a") == 2


def test_peek_serves_an_expired_value_get_does_not():
    clock = Clock()
    cache: TtlCache[None, str] = TtlCache(ttl=1.0, max_size=1, clock=clock)
    assert cache.peek(None) is MISSING
    cache.put(None, "offered")
    clock.now += 5
    assert cache.get(None) is MISSING
    assert cache.peek(None) == "offered"


def test_a_full_cache_drops_its_oldest_entry():
    cache: TtlCache[int, int] = TtlCache(max_size=3, clock=Clock())
    for key in range(5):
        cache.put(key, key * 10)
    assert len(cache) == 3
    assert [cache.get(k) for k in range(5)] == [MISSING, MISSING, 20, 30, 40]


def test_a_put_drops_expired_entries_so_the_size_follows_what_is_fresh():
    clock = Clock()
    cache: TtlCache[int, int] = TtlCache(ttl=1.0, max_size=100, clock=clock)
    for key in range(50):
        cache.put(key, key)
    clock.now += 2
    cache.put(-1, -1)
    assert len(cache) == 1


def test_re_putting_a_key_moves_it_behind_the_others():
    cache: TtlCache[str, int] = TtlCache(max_size=2, clock=Clock())
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("a", 3)  # "a" is now the newest: "b" is the one to go
    cache.put("c", 4)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (3, MISSING, 4)


def test_pop_and_clear_forget_at_once():
    cache: TtlCache[str, int] = TtlCache(clock=Clock())
    cache.put("a", 1)
    cache.put("b", 2)
    cache.pop("a")
    cache.pop("never there")
    assert (cache.get("a"), cache.get("b")) == (MISSING, 2)
    cache.clear()
    assert len(cache) == 0 and cache.get("b") is MISSING


def test_the_default_ttl_is_the_one_read_ttl():
    clock = Clock()
    cache: TtlCache[str, int] = TtlCache(clock=clock)
    cache.put("a", 1)
    clock.now += READ_TTL - 0.01
    assert cache.get("a") == 1
    clock.now += 0.01
    assert cache.get("a") is MISSING


@pytest.mark.parametrize(("ttl", "max_size"), [(0, 10), (-1, 10), (1, 0)])
def test_a_cache_that_could_hold_nothing_is_refused(ttl, max_size):
    with pytest.raises(ValueError, match="positive ttl"):
        TtlCache(ttl=ttl, max_size=max_size)


@pytest.mark.anyio
async def test_a_loader_loads_a_key_once_for_every_caller_that_misses_it_together():
    import anyio

    from toolvet.cache import Loader

    loads: list[str] = []
    release = anyio.Event()

    async def load(key: str) -> str:
        loads.append(key)
        await release.wait()
        return key.upper()

    loader: Loader[str, str] = Loader(load)
    got: list[str] = []
    async with anyio.create_task_group() as tg:
        for _ in range(5):
            tg.start_soon(lambda: _append(got, loader.get("a")))
        await anyio.wait_all_tasks_blocked()
        release.set()
    assert got == ["A"] * 5 and loads == ["a"]


async def _append(into: list[str], value) -> None:
    into.append(await value)
