"""The tool sets the gateway serves at ``/mcp/sets/{name}``, read from the registry at most once a second.

A request reads its set through :class:`ToolSetCache` (a miss reads it in a worker thread, never on
the event loop); the gateway's watcher re-reads the sets of its started endpoints every second, so an
edit made anywhere (REST, the CLI, another process) reaches a set's endpoint within a second, and its
clients are told the list changed.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Final

import anyio.to_thread

from toolvet.domain.names import tool_set_name_problem
from toolvet.gateway.offered import View
from toolvet.schemas.tool_sets import ToolSetOut
from toolvet.services.context import Context
from toolvet.services.tool_sets import read_tool_sets

__all__ = ["CACHE_SECONDS", "ToolSetCache", "view_of"]

CACHE_SECONDS: Final = 1.0
#: Names remembered (found or not); the oldest are forgotten first, so requests for made-up names
#: cannot grow the cache without bound.
MAX_CACHED: Final = 10_000


def view_of(definition: ToolSetOut) -> View:
    """The gateway view of a tool set: its members, by (server, tool or None)."""
    return View.of_set(definition.name, ((m.server, m.tool) for m in definition.members))


class ToolSetCache:
    """Tool sets by name, each trusted for :data:`CACHE_SECONDS` (an unknown name too)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._hits: dict[str, tuple[float, ToolSetOut | None]] = {}

    async def get(self, name: str) -> ToolSetOut | None:
        """The set named ``name``, or None when there is none (a name no set could have costs no read)."""
        hit = self._hits.get(name)
        if hit is not None and hit[0] > time.monotonic():
            return hit[1]
        if tool_set_name_problem(name) is not None:
            return None
        found = await anyio.to_thread.run_sync(read_tool_sets, self.ctx, [name])
        self._store(name, found.get(name))
        return found.get(name)

    async def refresh(self, names: Iterable[str]) -> dict[str, ToolSetOut]:
        """Read the named sets now (one query), remembering each; the ones that exist, by name."""
        wanted = list(names)
        found = await anyio.to_thread.run_sync(read_tool_sets, self.ctx, wanted)
        for name in wanted:
            self._store(name, found.get(name))
        return found

    def forget(self) -> None:
        """Drop every remembered set (an edit was committed somewhere)."""
        self._hits.clear()

    def _store(self, name: str, definition: ToolSetOut | None) -> None:
        self._hits.pop(name, None)
        if len(self._hits) >= MAX_CACHED:
            self._hits.pop(next(iter(self._hits)))
        self._hits[name] = (time.monotonic() + CACHE_SECONDS, definition)
