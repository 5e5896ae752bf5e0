"""Prompts, resources, resource templates and completions of the upstream servers, federated.

An endpoint's servers are the ones its view names (``/mcp/servers/{name}``: that one) or, on ``/mcp``,
every server with an offered tool the caller may use. What is listed is what discovery stored and an
operator lets through (``services.entries``): each server's enabled prompts, resources and templates
that are not held for review, as the server listed them, read from the registry at most once per
:data:`toolvet.cache.READ_TTL` (:class:`EntryCache`) and merged onto one page (as tools are):

- prompts are named like tools: ``{server}_{prompt}`` on ``/mcp``, their own name on a server's view;
  ``prompts/get`` (and a completion) of a prompt that is disabled or held is refused, saying why;
- resources and templates keep their URIs (a URI names a resource across servers); a read, a
  subscription or a completion for a URI goes to the server that listed it, and on ``/mcp`` a URI no
  server listed is asked of each server in turn (a ``resource_link`` a tool returned, a template's
  expansion) until one answers.

Resource *contents* pass through unchanged: they are read at call time and are not vetted.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import anyio.to_thread

from toolvet.cache import MISSING, TtlCache
from toolvet.errors import UpstreamError
from toolvet.services.context import Context
from toolvet.services.entries import Listed, listed_entries

__all__ = ["EntryCache", "Federation", "Routed"]

log = logging.getLogger("toolvet.gateway")

#: The entry kind each list holds, by the list's member name.
_KIND_OF: Final = {"prompts": "prompt", "resources": "resource", "resourceTemplates": "template"}
#: URIs remembered per endpoint for routing reads (the oldest are forgotten first).
MAX_ROUTES: Final = 10_000

#: Sends one request to one server on the caller's session: (server, method, params) -> raw result.
Send = Callable[[str, str, dict[str, Any] | None], Awaitable[Any]]


@dataclass(frozen=True)
class Entries:
    """The live entries of every enabled server, indexed for the gateway."""

    by_server: dict[tuple[str, str], list[Listed]]  # (server, kind) -> its entries, in key order

    def find(self, server: str, kind: str, key: str) -> Listed | None:
        return next((e for e in self.by_server.get((server, kind), ()) if e.key == key), None)


class EntryCache:
    """The stored entries, re-read from the registry at most once per :data:`toolvet.cache.READ_TTL`."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._current: TtlCache[None, Entries] = TtlCache(max_size=1)
        self._lock = anyio.Lock()

    async def get(self) -> Entries:
        if (hit := self._current.get(None)) is not MISSING:
            return hit
        async with self._lock:
            if (hit := self._current.get(None)) is not MISSING:
                return hit
            return self._current.put(None, await anyio.to_thread.run_sync(self._read))

    def _read(self) -> Entries:
        by_server: dict[tuple[str, str], list[Listed]] = {}
        for entry in listed_entries(self.ctx):
            by_server.setdefault((entry.server, entry.kind), []).append(entry)
        return Entries(by_server)


@dataclass(frozen=True)
class Routed:
    """A prompt name as a client used it, resolved: its server, its own name there, and why it is
    refused (None: offered)."""

    server: str
    name: str
    refusal: str | None


@dataclass
class Federation:
    """The routing memory of one endpoint (which server listed which URI) over the stored entries."""

    prefixed: bool  # /mcp names prompts {server}_{prompt}
    entries: EntryCache
    _uris: dict[str, str] = field(default_factory=dict)

    def remember(self, uri: str, server: str) -> None:
        if len(self._uris) >= MAX_ROUTES:
            self._uris.pop(next(iter(self._uris)))
        self._uris[uri] = server

    def owner(self, uri: str) -> str | None:
        return self._uris.get(uri)

    async def list(self, servers: Iterable[str], key: str) -> list[dict[str, Any]]:
        """Every offered item of one list (``key``: "prompts", "resources", "resourceTemplates") of
        ``servers``, in server order."""
        stored = await self.entries.get()
        kind = _KIND_OF[key]
        return [self._outward(server, key, dict(entry.definition))
                for server in servers for entry in stored.by_server.get((server, kind), ())
                if entry.refusal is None]

    def _outward(self, server: str, key: str, item: dict[str, Any]) -> dict[str, Any]:
        if key == "prompts":
            name = item.get("name")
            return {**item, "name": f"{server}_{name}"} if self.prefixed and isinstance(name, str) else item
        uri = item.get("uri") if key == "resources" else item.get("uriTemplate")
        if isinstance(uri, str):
            self.remember(uri, server)
        return item

    async def prompt(self, name: str, servers: Iterable[str]) -> Routed | None:
        """The stored prompt a listed prompt name means (offered or not), or None."""
        stored = await self.entries.get()
        known = list(servers)
        candidates = [(known[0], name)] if not self.prefixed and known else [
            (server, name[len(server) + 1:]) for server in known
            if name.startswith(f"{server}_") and len(name) > len(server) + 1]
        for server, own in candidates:
            if (entry := stored.find(server, "prompt", own)) is not None:
                return Routed(server, own, entry.refusal)
        return None

    async def for_uri(self, send: Send, servers: Iterable[str], uri: str, method: str,
                      params: dict[str, Any]) -> Any:
        """Send a URI's request to the server that listed it, else to each server until one answers."""
        known = list(servers)
        owner = self.owner(uri)
        if owner in known:
            return await send(owner, method, params)
        last: UpstreamError | None = None
        for server in known:
            try:
                result = await send(server, method, params)
            except UpstreamError as exc:
                last = exc
                continue
            self.remember(uri, server)
            return result
        if last is not None:
            raise last
        raise UpstreamError(f"no server offers {uri[:200]}", -32002, {"uri": uri[:200]}, "Resource not found")

