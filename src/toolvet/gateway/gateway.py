"""The gateway: toolvet's MCP endpoints, the offered set they share, and the change watcher.

- ``/mcp``: every offered tool as ``{server}_{tool}``, prompts and resources of every server the
  caller may use (:class:`~toolvet.gateway.endpoint.Endpoint` over the aggregate view);
- ``/mcp/servers/{name}``: one registered server's offered tools, prompts and resources under their
  own names, declaring that server's capabilities. Its endpoint is started on the first request and
  started afresh when discovery learns different capabilities;
- ``/mcp/sets/{name}``: the offered tools an operator's tool set names, as ``{server}_{tool}``, and
  the prompts and resources of its member servers. Its endpoint is started on the first request; an
  edit to the set is served by the same endpoint (its sessions kept) and announced as a list change,
  and a removed set's endpoint ends.

Clients learn that the offered set changed: a watcher re-reads it every second and, when the hash of
its names and fingerprints moves, every endpoint sends ``notifications/tools/list_changed`` to its
handshake-era sessions and publishes ``toolsListChanged`` to its 2026-07-28 ``subscriptions/listen``
streams.

The gateway runs in the FastAPI app's lifespan (``api/app.py``), after the call service it forwards
through.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
import anyio.abc
from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from toolvet.gateway.access import (
    AUTHORIZATION_SERVER_PATH,
    METADATA_PATH,
    TokenCache,
    authorization_server_metadata,
    metadata,
)
from toolvet.gateway.endpoint import POLL_SECONDS, Endpoint
from toolvet.gateway.host_tools import register_host_tools
from toolvet.gateway.offered import AGGREGATE, OfferedCache, View
from toolvet.gateway.sets import ToolSetCache, view_of
from toolvet.schemas.tool_sets import ToolSetOut
from toolvet.services.calls import HOST_SERVER, CallService
from toolvet.services.context import Context
from toolvet.services.events import CACHE, TOOLS
from toolvet.web import UnexpectedErrors

__all__ = ["Gateway", "gateway_lifetime", "mount_gateway"]

log = logging.getLogger("toolvet.gateway")

SERVER_PATH: Final = "/mcp/servers/{name}"
SET_PATH: Final = "/mcp/sets/{name}"
#: Per-server endpoints kept at once; the least recently started goes first past this.
MAX_SERVER_ENDPOINTS: Final = 256
#: Per-set endpoints kept at once, likewise.
MAX_SET_ENDPOINTS: Final = 256

#: The watcher prunes expired handshake-era sessions (a bounded batch) every this many polls.
PRUNE_EVERY: Final = 60

Started = tuple[Endpoint, anyio.CancelScope]


class Gateway:
    """Every MCP endpoint of one app, sharing the offered set, the token cache and the call service."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.offered = OfferedCache(ctx)
        self.tokens = TokenCache(ctx)
        self.aggregate: Endpoint | None = None
        self.sets = ToolSetCache(ctx)
        self._servers: dict[str, tuple[str, Endpoint, anyio.CancelScope]] = {}
        self._sets: dict[str, Started] = {}
        self._starting = anyio.Lock()
        self._tg: anyio.abc.TaskGroup | None = None
        self.announced = 0  # how many list changes were announced (tests and logs)
        self._poke = anyio.Event()

    def service(self) -> CallService:
        if self.ctx.calls is None:
            raise RuntimeError("the gateway needs a running CallService (api.app.lifespan)")
        return self.ctx.calls

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        """Serve for the app's lifetime: host tools registered, endpoints served, changes watched."""
        service = self.service()
        register_host_tools(service)
        self.offered = OfferedCache(self.ctx, service)
        self.aggregate = Endpoint(service, self.offered, self.tokens, AGGREGATE)
        async with anyio.create_task_group() as tg:
            self._tg = tg
            await tg.start(self.aggregate.run)
            tg.start_soon(self._watch)
            for topic in (CACHE, TOOLS):
                await tg.start(self._follow_bus, topic)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()
                self._servers.clear()
                self._sets.clear()
                self._tg = None

    # ------------------------------------------------------------------ routing

    async def serve_aggregate(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``/mcp``."""
        if self.aggregate is None:
            await _unavailable(scope, receive, send)
            return
        await self.aggregate.gate(scope, receive, send)

    async def serve_server(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``/mcp/servers/{name}``: the server's own endpoint, started on first use."""
        await self._serve_named(self._server_endpoint, scope, receive, send)

    async def serve_set(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``/mcp/sets/{name}``: the tool set's own endpoint, started on first use."""
        await self._serve_named(self._set_endpoint, scope, receive, send)

    async def _serve_named(
        self, find: Callable[[str], Awaitable[Endpoint | None]], scope: Scope, receive: Receive, send: Send
    ) -> None:
        """The endpoint ``find`` gives for the path's name: 404 naming an unknown one, 503 when not running."""
        name = str(scope.get("path_params", {}).get("name", ""))
        try:
            endpoint = await find(name)
        except LookupError as exc:
            await _unknown(str(exc))(scope, receive, send)
            return
        if endpoint is None:
            await _unavailable(scope, receive, send)
            return
        await endpoint.gate(scope, receive, send)

    async def _server_endpoint(self, name: str) -> Endpoint | None:
        if self._tg is None:
            return None
        capabilities = await self.service().server_capabilities(name)
        if capabilities is None and name != HOST_SERVER:
            raise LookupError(f"no enabled server named {name!r}")
        key = json.dumps(capabilities, sort_keys=True, default=str)
        known = self._servers.get(name)
        if known is not None and known[0] == key:
            return known[1]
        async with self._starting:
            known = self._servers.get(name)
            if known is not None and known[0] == key:
                return known[1]
            if known is not None:
                known[2].cancel()  # the server's capabilities changed: its old endpoint ends
            if len(self._servers) >= MAX_SERVER_ENDPOINTS:
                oldest = next(iter(self._servers))
                self._servers.pop(oldest)[2].cancel()
            endpoint = Endpoint(self.service(), self.offered, self.tokens, View(server=name), capabilities or {})
            scope = await self._start(endpoint)
            self._servers[name] = (key, endpoint, scope)
            return endpoint

    async def _set_endpoint(self, name: str) -> Endpoint | None:
        if self._tg is None:
            return None
        definition = await self.sets.get(name)
        if definition is None:
            self._end_set(name)
            raise LookupError(f"no tool set named {name!r}")
        known = self._sets.get(name)
        if known is not None:
            self._follow(known[0], definition)
            return known[0]
        async with self._starting:
            known = self._sets.get(name)
            if known is not None:
                return known[0]
            if len(self._sets) >= MAX_SET_ENDPOINTS:
                self._end_set(next(iter(self._sets)))
            endpoint = Endpoint(self.service(), self.offered, self.tokens, view_of(definition))
            endpoint.retarget(endpoint.view, title=definition.title, description=definition.description)
            self._sets[name] = (endpoint, await self._start(endpoint))
            return endpoint

    def _follow(self, endpoint: Endpoint, definition: ToolSetOut) -> None:
        """Serve the set as it now is; its clients are told when what it lists changed."""
        changed = endpoint.retarget(view_of(definition), title=definition.title, description=definition.description)
        if changed and self._tg is not None:
            self._tg.start_soon(endpoint.announce)

    def _end_set(self, name: str) -> None:
        started = self._sets.pop(name, None)
        if started is not None:
            started[1].cancel()

    async def _start(self, endpoint: Endpoint) -> anyio.CancelScope:
        """Run ``endpoint`` in the gateway's task group until its scope is cancelled."""
        assert self._tg is not None
        scope = anyio.CancelScope()

        async def run(*, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
            with scope:
                await endpoint.run(task_status=task_status)

        await self._tg.start(run)
        return scope

    def endpoints(self) -> list[Endpoint]:
        started = [endpoint for _, endpoint, _ in self._servers.values()]
        started += [endpoint for endpoint, _ in self._sets.values()]
        return ([self.aggregate] if self.aggregate is not None else []) + started

    # ------------------------------------------------------------------ list changes

    async def _watch(self) -> None:
        last: str | None = None
        ticks = 0
        while True:
            ticks += 1
            if ticks % PRUNE_EVERY == 0 and self.aggregate is not None and self.aggregate.sessions is not None:
                try:
                    await self.aggregate.sessions.prune()
                except Exception:
                    log.exception("could not prune expired MCP sessions")
            try:
                signature = (await self.offered.get(fresh=True)).signature
            except Exception:
                log.exception("could not read the offered tools")
            else:
                if last is not None and signature != last:
                    await self.announce()
                last = signature
            try:
                await self._follow_sets()
            except Exception:
                log.exception("could not read the tool sets")
            # Re-read at once when the bus says something changed (here or in another process),
            # and every POLL_SECONDS anyway (a change the bus cannot carry: the CLI on SQLite).
            with anyio.move_on_after(POLL_SECONDS):
                await self._poke.wait()
            self._poke = anyio.Event()

    async def _follow_bus(self, topic: str, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
                      ) -> None:
        """Wake the change watcher on every event of ``topic`` (an edit, a discovered change)."""
        async with self.ctx.bus.subscribe(topic) as inbox:
            task_status.started()
            async for _ in inbox:
                self.sets.forget()
                self._poke.set()

    async def _follow_sets(self) -> None:
        """Re-read the set of every started set endpoint: edits are served, removed sets end."""
        if not self._sets:
            return
        found = await self.sets.refresh(list(self._sets))
        for name, (endpoint, _) in list(self._sets.items()):
            definition = found.get(name)
            if definition is None:
                self._end_set(name)
            else:
                self._follow(endpoint, definition)

    async def announce(self) -> None:
        """Tell every connected client of every endpoint that the tool list changed (both eras)."""
        self.announced += 1
        for endpoint in self.endpoints():
            await endpoint.announce()


def _unknown(message: str) -> JSONResponse:
    """The 404 of an endpoint path naming no server or set: a JSON-RPC error a client can show."""
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}, status_code=404)


async def _unavailable(scope: Scope, receive: Receive, send: Send) -> None:
    await JSONResponse({"error": "the MCP endpoint is not running"}, status_code=503)(scope, receive, send)


# ---------------------------------------------------------------------- mounting


def mount_gateway(app: FastAPI, ctx: Context) -> Gateway:
    """Mount ``/mcp``, ``/mcp/servers/{name}``, ``/mcp/sets/{name}`` and the protected-resource
    metadata on ``app``."""
    gateway = Gateway(ctx)
    app.state.gateway = gateway

    async def resource_metadata(request: Request) -> JSONResponse:
        """RFC 9728 protected-resource metadata for an MCP endpoint."""
        offered = await gateway.offered.get()
        resource = request.url.path.removeprefix(METADATA_PATH) or "/mcp"
        return JSONResponse(metadata(request.scope, offered.scopes(), resource, ctx.settings.authorization_server))

    async def authorization_metadata(request: Request) -> JSONResponse:
        """RFC 8414 metadata of toolvet as the issuer of its own tokens."""
        offered = await gateway.offered.get()
        return JSONResponse(authorization_server_metadata(request.scope, offered.scopes()))

    # Answered ahead of the app's middleware when the app allows it (api.app.ToolvetAPI), and routed
    # first in the table otherwise (a prefixed path): an MCP call never matches every API route first.
    if hasattr(app, "mcp_app"):
        app.mcp_app = UnexpectedErrors(gateway.serve_aggregate)
    app.router.routes.insert(0, Route("/mcp", endpoint=gateway.serve_aggregate))
    app.router.routes.insert(1, Route(SERVER_PATH, endpoint=UnexpectedErrors(gateway.serve_server)))
    app.router.routes.insert(2, Route(SET_PATH, endpoint=UnexpectedErrors(gateway.serve_set)))
    for path in (METADATA_PATH, METADATA_PATH + "/mcp", METADATA_PATH + SERVER_PATH, METADATA_PATH + SET_PATH):
        app.router.routes.append(Route(path, endpoint=resource_metadata, methods=["GET"]))
    if ctx.settings.authorization_server is None:
        for path in (AUTHORIZATION_SERVER_PATH, AUTHORIZATION_SERVER_PATH + "/mcp"):
            app.router.routes.append(Route(path, endpoint=authorization_metadata, methods=["GET"]))
    return gateway


def gateway_lifetime(app: FastAPI) -> Any:
    """Runs the app's gateway for the app's lifespan (entered after the call service)."""
    gateway: Gateway = app.state.gateway
    return gateway.run()
