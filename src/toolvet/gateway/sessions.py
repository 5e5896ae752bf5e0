"""Handshake-era sessions that any replica serves: toolvet's own session handling for one endpoint.

The SDK's ``StreamableHTTPSessionManager`` keeps each ``Mcp-Session-Id`` session in the memory of
the process that answered ``initialize``; behind a load balancer without stickiness, every other
replica answers the session's requests 404. So toolvet keeps handshake-era sessions itself, built on
the SDK's public transport, connection and runner:

- ``initialize`` (no session id) opens a session here: its id is signed and says what was
  negotiated (the protocol version, the client's capabilities and identity) and who opened it
  (``services.mcp_sessions``), and the SDK's transport and message loop serve it;
- a request for a session this process has not served yet is served from a copy made from its id
  (checked) and its row (what the client changed since, or that it ended): a connection born
  initialized, with the session's version and client params, on its own transport, so the request
  is answered as the opening process would;
- what the server sends a session outside a request (``list_changed``) goes to whichever replica
  holds the client's GET stream: every replica tells the copies it holds, and only a copy with a GET
  stream delivers it. A request tied to a client request (elicitation, progress) rides that request's
  own response stream; the client's answer (a POST of JSON-RPC responses, which may reach another
  replica) is handed to every replica over the event bus, and the copy that asked takes it;
- a session's DELETE ends it everywhere (its row, and every copy, over the bus); a copy idle for
  :data:`COPY_IDLE_SECONDS` ends here while the session lives on; a session ends
  ``mcp_session_ttl`` after its ``initialize``, and its row is pruned then (:meth:`Sessions.prune`).

2026-07-28 requests carry their state in each request and go to the SDK's manager (stateless).
A session is bound to the credential that opened it: a request with another answers 404, as an
unknown session does.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import anyio.abc
import anyio.to_thread
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.runner import serve_connection
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp.shared.transport_context import TransportContext
from mcp.types import InitializeRequestParams
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION
from starlette.responses import JSONResponse
from starlette.types import Message, Receive, Scope, Send

from toolvet.cache import READ_TTL
from toolvet.gateway.access import PRINCIPAL_KEY
from toolvet.services import mcp_sessions
from toolvet.services.auth import Principal
from toolvet.services.context import Context
from toolvet.services.events import EventBus
from toolvet.services.mcp_sessions import INTERNAL_EVENT, SessionState
from toolvet.web import replay

__all__ = ["COPY_IDLE_SECONDS", "MAX_COPIES", "Sessions", "session_id_of"]

log = logging.getLogger("toolvet.gateway")

#: A session copy that served nothing for this long ends in this process (the session lives on).
COPY_IDLE_SECONDS: Final = 600.0
#: Session copies one endpoint holds at once; the least recently used ends past this.
MAX_COPIES: Final = 10_000
#: Where the opening request's session id waits for the middleware that records the session.
OPENING_KEY: Final = "toolvet.mcp_session"


@dataclass
class _Copy:
    """One session as this process serves it."""

    state: SessionState
    transport: StreamableHTTPServerTransport
    connection: Connection
    log_level: str | None = None
    touched: float = field(default_factory=time.monotonic)
    checked: float = field(default_factory=time.monotonic)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    #: Run when this copy ends (``Sessions.when_ended``).
    ends: list[Callable[[], Coroutine[Any, Any, None]]] = field(default_factory=list)


def session_id_of(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The ``Mcp-Session-Id`` a handshake-era request came with (None without one): what names a
    session across its requests, since the SDK hands each request a ``ServerSession`` of its own."""
    headers = getattr(ctx.request, "headers", None)
    value = headers.get(MCP_SESSION_ID_HEADER) if headers is not None else None
    return value if isinstance(value, str) else None


def _header(scope: Scope, name: str) -> str | None:
    key = name.encode("latin-1")
    return next((v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == key), None)


def _owner(scope: Mapping[str, Any]) -> str:
    """The credential a request carries, as a session id names its opener."""
    principal = scope.get(PRINCIPAL_KEY)
    return mcp_sessions.owner_digest(principal.actor if isinstance(principal, Principal) else "")


def _initialize_params(body: bytes) -> dict[str, Any] | None:
    """The params of a POST that is one ``initialize`` request; None for anything else."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("method") != "initialize" or "id" not in message:
        return None
    params = message.get("params")
    return params if isinstance(params, dict) else None


def negotiated(params: Mapping[str, Any]) -> str:
    """The protocol version an ``initialize`` with these params gets (the SDK's rule: the client's,
    if it is a handshake-era version the SDK speaks, else the latest of those)."""
    requested = params.get("protocolVersion")
    return requested if isinstance(requested, str) and requested in HANDSHAKE_PROTOCOL_VERSIONS \
        else LATEST_HANDSHAKE_VERSION


def _answers_only(body: bytes) -> bool:
    """Whether a POST carries only JSON-RPC responses (a client answering what a server asked)."""
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):
        return False
    messages = parsed if isinstance(parsed, list) else [parsed]
    return bool(messages) and all(
        isinstance(m, dict) and "method" not in m and ("result" in m or "error" in m) for m in messages)


async def _read_body(receive: Receive) -> bytes | None:
    """The whole request body (already bounded by the access gate); None if the client went away."""
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        body.extend(message.get("body", b""))
        if not message.get("more_body", False):
            return bytes(body)


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}},
                        status_code=status)


class Sessions:
    """Every session of one endpoint (its ``key`` names it: ``/mcp``, ``/mcp/servers/{name}``, ...)."""

    def __init__(self, server: Server[Any], ctx: Context, events: EventBus, key: str,
                 security: TransportSecuritySettings) -> None:
        self.server = server
        self.ctx = ctx
        self.events = events
        self.key = key
        self.security = security
        self.modern = StreamableHTTPSessionManager(app=server, stateless=True, security_settings=security)
        self.signer = mcp_sessions.Signer(ctx.settings)
        #: This endpoint's own name on the bus, so it skips what it published itself.
        self.origin = uuid.uuid4().hex
        self._copies: dict[str, _Copy] = {}
        self._by_reference: dict[str, str] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        self._lifespan: Any = None

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        """Serve for the endpoint's lifetime."""
        async with (self.modern.run(), self.server.lifespan(self.server) as lifespan,
                    anyio.create_task_group() as tg):
            self._lifespan, self._tg = lifespan, tg
            tg.start_soon(self._follow_bus)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()
                self._tg = None
                self._copies.clear()
                self._by_reference.clear()

    # ------------------------------------------------------------------ requests

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """One HTTP request to the endpoint (after the access gate)."""
        version = _header(scope, MCP_PROTOCOL_VERSION_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await self.modern.handle_request(scope, receive, send)
            return
        session_id = _header(scope, MCP_SESSION_ID_HEADER)
        if session_id is None:
            if scope["method"] != "POST":
                await _error("Bad Request: Missing session ID", 400)(scope, receive, send)
                return
            await self._open(scope, receive, send)
            return
        copy = await self._copy_of(session_id, _owner(scope))
        if copy is None:
            await _error("Session not found", 404)(scope, receive, send)
            return
        copy.touched = time.monotonic()
        reference = mcp_sessions.reference(session_id)
        if scope["method"] == "POST":
            body = await _read_body(receive)
            if body is None:
                return
            if _answers_only(body):
                # The client answers what a server asked it; the asking copy may live in another replica.
                self.events.publish({"type": INTERNAL_EVENT, "kind": "mcp-answers", "origin": self.origin,
                                     "endpoint": self.key, "session": reference, "body": body.decode()})
            receive = replay(body, receive)
        elif scope["method"] == "DELETE":
            # A busy database holds up the client's goodbye a second at most; the end is recorded anyway.
            with anyio.move_on_after(1):
                await self._record_end(copy.state)
            self.events.publish({"type": INTERNAL_EVENT, "kind": "mcp-ended", "origin": self.origin,
                                 "endpoint": self.key, "session": reference})
        await copy.transport.handle_request(scope, receive, send)
        if copy.transport.is_terminated:
            self._discard(copy)

    async def _open(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A request without a session id: the ``initialize`` that opens a session here."""
        body = await _read_body(receive)
        if body is None:
            return
        params = _initialize_params(body)
        if params is None:
            await _error("Bad Request: Missing session ID", 400)(scope, receive, send)
            return
        version = negotiated(params)
        session_id = self.signer.mint(self.key, _owner(scope), version, params)
        state = self.signer.check(session_id)
        assert state is not None
        copy = await self._start(state, opening=True)
        if copy is None:
            await _error("the MCP endpoint is not running", 503)(scope, receive, send)
            return
        opened = False

        async def watch(message: Message) -> None:
            nonlocal opened
            if message["type"] == "http.response.start":
                opened = message["status"] < 400
            await send(message)

        try:
            await copy.transport.handle_request(scope, replay(body, receive), watch)
        finally:
            if not opened:
                self._discard(copy)

    async def _copy_of(self, session_id: str, owner: str) -> _Copy | None:
        """This process's copy of the session, made from its id and row when there is none yet."""
        copy = self._copies.get(session_id)
        if copy is not None:
            if copy.state.owner != owner:
                return None
            if time.monotonic() - copy.checked > READ_TTL:
                # Ended, or its log level set, through another replica? (The bus says so at once; this
                # holds without it.)
                copy.checked = time.monotonic()
                fresh = await anyio.to_thread.run_sync(mcp_sessions.state_of, self.ctx, copy.state)
                if fresh is None:
                    self._discard(copy)
                    return None
                copy.log_level = fresh.log_level or copy.log_level
            return copy
        state = self.signer.check(session_id)
        if state is None or state.endpoint != self.key or state.owner != owner:
            return None
        state = await anyio.to_thread.run_sync(mcp_sessions.state_of, self.ctx, state)
        if state is None:
            return None
        copy = self._copies.get(session_id)  # made by a request that read the row meanwhile
        return copy if copy is not None else await self._start(state)

    async def _start(self, state: SessionState, *, opening: bool = False) -> _Copy | None:
        """Run a session's transport and message loop here: a new session's (``opening``: its
        ``initialize`` comes next) or one opened before, maybe elsewhere (born initialized)."""
        if self._tg is None:
            return None
        if len(self._copies) >= MAX_COPIES:
            oldest = min(self._copies.values(), key=lambda c: c.touched)
            self._discard(oldest)
        session_id = state.id
        transport = StreamableHTTPServerTransport(mcp_session_id=session_id, security_settings=self.security,
                                                  idle_timeout=COPY_IDLE_SECONDS)
        started: dict[str, _Copy] = {}

        async def run(*, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
            async with transport.connect() as (read_stream, write_stream):
                dispatcher: JSONRPCDispatcher[TransportContext] = JSONRPCDispatcher(
                    read_stream, write_stream, inline_methods=frozenset({"initialize"}))
                if opening:
                    connection = Connection.for_loop(dispatcher, session_id=session_id)
                else:
                    connection = Connection(
                        dispatcher, protocol_version=state.protocol_version, session_id=session_id,
                        client_params=InitializeRequestParams.model_validate(state.client_params))
                    connection.initialized.set()
                copy = started["copy"] = _Copy(state, transport, connection, state.log_level)
                self._copies[session_id] = copy
                self._by_reference[mcp_sessions.reference(session_id)] = session_id
                task_status.started()
                try:
                    with copy.scope, transport.idle_scope or anyio.CancelScope():
                        await serve_connection(self.server, dispatcher, connection=connection,
                                               lifespan_state=self._lifespan)
                except Exception:
                    log.exception("session %s crashed", mcp_sessions.reference(session_id))
                finally:
                    self._forget(copy)
                    with anyio.CancelScope(shield=True):
                        for end in copy.ends:
                            try:
                                await end()
                            except Exception:
                                log.exception("ending session %s here", mcp_sessions.reference(session_id))
                        await transport.terminate()

        await self._tg.start(run)
        return started["copy"]

    def _forget(self, copy: _Copy) -> None:
        if self._copies.get(copy.state.id) is copy:
            del self._copies[copy.state.id]
            self._by_reference.pop(mcp_sessions.reference(copy.state.id), None)

    def _discard(self, copy: _Copy) -> None:
        """End this process's copy of a session (the session itself is not touched)."""
        self._forget(copy)
        copy.scope.cancel()

    # ------------------------------------------------------------------ session state

    async def _record_end(self, state: SessionState) -> None:
        try:
            await anyio.to_thread.run_sync(mcp_sessions.end, self.ctx, state, abandon_on_cancel=True)
        except Exception as exc:
            log.warning("the end of session %s not recorded (%s)", mcp_sessions.reference(state.id),
                        str(exc).splitlines()[0])

    def log_level(self, session_id: str | None) -> str | None:
        """The log level the session's client set, as this process last heard it."""
        copy = self._copies.get(session_id) if session_id is not None else None
        return copy.log_level if copy is not None else None

    async def set_log_level(self, session_id: str, level: str) -> None:
        """Keep a client's ``logging/setLevel`` for the session, in every replica."""
        copy = self._copies.get(session_id)
        if copy is None:
            return
        await anyio.to_thread.run_sync(mcp_sessions.set_log_level, self.ctx, copy.state, level)
        copy.log_level = level
        self.events.publish({"type": INTERNAL_EVENT, "kind": "mcp-log-level", "origin": self.origin,
                             "endpoint": self.key, "session": mcp_sessions.reference(session_id), "level": level})

    def when_ended(self, session_id: str, callback: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``callback`` when this process's copy of the session ends (at once, in the background,
        when there is none)."""
        copy = self._copies.get(session_id)
        if copy is not None:
            copy.ends.append(callback)
        elif self._tg is not None:
            self._tg.start_soon(callback)

    def connections(self) -> list[Connection]:
        """The sessions this process serves (to tell them of list changes)."""
        return [copy.connection for copy in self._copies.values()]

    async def prune(self) -> int:
        """Delete a bounded batch of the rows of sessions past ``mcp_session_ttl`` (every endpoint's)."""
        return await anyio.to_thread.run_sync(mcp_sessions.prune, self.ctx)

    # ------------------------------------------------------------------ other replicas

    async def _follow_bus(self) -> None:
        async with self.events.subscribe() as inbox:
            async for event in inbox:
                if event.get("type") != INTERNAL_EVENT or event.get("origin") == self.origin:
                    continue
                if event.get("endpoint") != self.key:
                    continue
                session_id = self._by_reference.get(str(event.get("session")))
                copy = self._copies.get(session_id) if session_id is not None else None
                if copy is None:
                    continue
                kind = event.get("kind")
                if kind == "mcp-answers" and isinstance(event.get("body"), str):
                    await self._deliver(copy, event["body"].encode())
                elif kind == "mcp-log-level" and isinstance(event.get("level"), str):
                    copy.log_level = event["level"]
                elif kind == "mcp-ended":
                    self._discard(copy)

    async def _deliver(self, copy: _Copy, body: bytes) -> None:
        """Hand a client's answers that reached another replica to this copy, as its own POST."""
        headers = [(b"content-type", b"application/json"), (b"accept", b"application/json, text/event-stream"),
                   (b"host", b"127.0.0.1"), (MCP_SESSION_ID_HEADER.encode(), copy.state.id.encode()),
                   (MCP_PROTOCOL_VERSION_HEADER.encode(), copy.connection.protocol_version.encode())]
        scope: Scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
                        "scheme": "http", "path": self.key, "raw_path": self.key.encode(), "query_string": b"",
                        "headers": headers, "server": ("127.0.0.1", 0), "client": ("127.0.0.1", 0)}
        sent = False

        async def receive() -> Message:
            nonlocal sent
            if sent:
                await anyio.sleep_forever()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def drop(message: Message) -> None:
            return None

        try:
            with anyio.fail_after(5):
                await copy.transport.handle_request(scope, receive, drop)
        except Exception:
            log.info("answers for session %s not delivered", mcp_sessions.reference(copy.state.id))
