"""Prompts, resources, resource templates and completions of the upstream servers, federated.

An endpoint's servers are the ones its view names (``/mcp/servers/{name}``: that one) or, on ``/mcp``,
every server with an offered tool the caller may use. Lists are read from each server at request
time, on the caller's own upstream session, and merged onto one page (as tools are):

- prompts are named like tools: ``{server}_{prompt}`` on ``/mcp``, their own name on a server's view;
- resources and templates keep their URIs (a URI names a resource across servers); a read, a
  subscription or a completion for a URI goes to the server that listed it, and on ``/mcp`` a URI no
  server listed is asked of each server in turn (a ``resource_link`` a tool returned, a template's
  expansion) until one answers;
- a server that fails a list is left out of ``/mcp``'s merged list (logged), and fails a server view's
  list with its own error.

Resource *contents* pass through unchanged. Prompts and resources are not yet vetted like tools
(fingerprinted and held after a change): what a server says of them is relayed as it says it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

import anyio

from toolvet.errors import UpstreamError

__all__ = ["MAX_PAGES", "Federation"]

log = logging.getLogger("toolvet.gateway")

#: Pages read of one server's list before the rest is left out (each page is one upstream request).
MAX_PAGES: Final = 20
#: URIs remembered per endpoint for routing reads (the oldest are forgotten first).
MAX_ROUTES: Final = 10_000

#: Sends one request to one server on the caller's session: (server, method, params) -> raw result.
Send = Callable[[str, str, dict[str, Any] | None], Awaitable[Any]]


@dataclass
class Federation:
    """The routing memory of one endpoint: which server listed which URI or prompt."""

    prefixed: bool  # /mcp names prompts {server}_{prompt}
    _uris: dict[str, str] = field(default_factory=dict)

    def remember(self, uri: str, server: str) -> None:
        if len(self._uris) >= MAX_ROUTES:
            self._uris.pop(next(iter(self._uris)))
        self._uris[uri] = server

    def owner(self, uri: str) -> str | None:
        return self._uris.get(uri)

    async def list(self, send: Send, servers: Iterable[str], method: str, key: str) -> list[dict[str, Any]]:
        """Every item of ``method``'s list (``key``: "prompts", "resources", "resourceTemplates")."""
        names = list(servers)
        pages: dict[str, list[dict[str, Any]]] = {}

        async def one(server: str) -> None:
            try:
                pages[server] = await _read_all(send, server, method, key)
            except UpstreamError as exc:
                if len(names) == 1:
                    raise
                log.info("%s left out of %s: %s", server, method, exc.message)

        async with anyio.create_task_group() as tg:
            for server in names:
                tg.start_soon(one, server)
        merged: list[dict[str, Any]] = []
        for server in names:
            for item in pages.get(server, ()):
                merged.append(self._outward(server, key, item))
        return merged

    def _outward(self, server: str, key: str, item: dict[str, Any]) -> dict[str, Any]:
        if key == "prompts":
            name = item.get("name")
            return {**item, "name": f"{server}_{name}"} if self.prefixed and isinstance(name, str) else item
        uri = item.get("uri") if key == "resources" else item.get("uriTemplate")
        if isinstance(uri, str):
            self.remember(uri, server)
        return item

    def prompt(self, name: str, servers: Iterable[str]) -> tuple[str, str] | None:
        """(server, its own prompt name) for a listed prompt name, or None."""
        known = list(servers)
        if not self.prefixed:
            return (known[0], name) if known else None
        for server in sorted(known, key=len, reverse=True):  # the longest server name that fits
            if name.startswith(f"{server}_") and len(name) > len(server) + 1:
                return server, name[len(server) + 1:]
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


async def _read_all(send: Send, server: str, method: str, key: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        result = await send(server, method, {"cursor": cursor} if cursor is not None else None)
        page = result.get(key) if isinstance(result, dict) else None
        if not isinstance(page, list):
            raise UpstreamError(f"{server}: {method} answered without a {key!r} list")
        items.extend(item for item in page if isinstance(item, dict))
        next_cursor = result.get("nextCursor")
        if not isinstance(next_cursor, str) or next_cursor in seen:
            return items
        seen.add(next_cursor)
        cursor = next_cursor
    log.info("%s: %s has more than %d pages; the rest is left out", server, method, MAX_PAGES)
    return items
