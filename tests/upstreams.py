"""Real MCP upstreams for tests: SDK-built servers and a hostile raw one, on 127.0.0.1 in a thread.

Every helper is a context manager that binds a free port, runs uvicorn in a background thread,
waits (bounded) until it accepts connections, yields an :class:`Upstream` (its URL plus every HTTP
request it received), and stops the server on exit. They work from sync and async tests alike.

- :func:`modern_http_server` - the SDK's streamable HTTP app (serves 2026-07-28 and the handshake).
- :func:`handshake_only_http_server` - the same app behind a guard that answers like a server that
  only speaks the 2025-11-25 handshake (mcp 1.x wording), so clients must fall back.
- :func:`sse_server` - the SDK's legacy HTTP+SSE app.
- :func:`raw_listing_server` - a hand-written JSON-RPC app serving arbitrary ``tools/list`` pages.
- :func:`stdio_server_command` - a tiny SDK stdio server run with ``sys.executable``.
- :func:`announcing_http_server` / :func:`announcing_sse_server` - SDK servers plus an
  :class:`Announcer` that makes them announce tool-list changes (both eras).
- :class:`CannedHttp` with :func:`canned_http` - raw HTTP/1.1 listeners on loopback addresses, served in
  the caller's own event loop, answering every POST with one JSON-RPC result (connection-pool tests).
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

import anyio
import anyio.abc
import anyio.to_thread
import uvicorn
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver import MCPServer
from mcp.server.subscriptions import ToolsListChanged
from mcp.types import Icon, ToolAnnotations
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_MODERN_VERSION
from starlette.types import ASGIApp, Message, Receive, Scope, Send

START_TIMEOUT: Final = 10.0
STOP_TIMEOUT: Final = 10.0
STDIO_SERVER: Final = Path(__file__).parent / "servers" / "stdio_server.py"


@dataclass(frozen=True)
class RecordedRequest:
    """One HTTP request an upstream received."""

    method: str
    path: str
    headers: dict[str, str]  # lower-cased names; the last value wins
    body: Any  # json-decoded body, or None when empty / not JSON


@dataclass
class Upstream:
    """A running test upstream."""

    url: str  # the MCP endpoint to connect to
    requests: list[RecordedRequest] = field(default_factory=list)

    def rpc_methods(self) -> list[str]:
        """The JSON-RPC methods of the POSTed messages, in arrival order."""
        return [r.body["method"] for r in self.requests if isinstance(r.body, dict) and "method" in r.body]


# --------------------------------------------------------------------------------------------- serving


class _Server(uvicorn.Server):
    """uvicorn with a readiness event, set once the sockets are listening."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if not self.should_exit:
            self.ready.set()


def _recording(app: ASGIApp, sink: list[RecordedRequest]) -> ASGIApp:
    async def recorder(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        chunks: list[bytes] = []
        body_done = False

        async def tapped_receive() -> Message:
            nonlocal body_done
            message: Message = await receive()
            if message["type"] == "http.request" and not body_done:
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    body_done = True
                    raw = b"".join(chunks)
                    try:
                        parsed = json.loads(raw) if raw else None
                    except (ValueError, RecursionError):  # not JSON, or nested past the parser's reach
                        parsed = None
                    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
                    sink.append(RecordedRequest(scope["method"], scope["path"], headers, parsed))
            return message

        if scope["method"] in ("GET", "DELETE"):
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            sink.append(RecordedRequest(scope["method"], scope["path"], headers, None))
            body_done = True
        await app(scope, tapped_receive, send)

    return recorder


def bound_socket() -> socket.socket:
    """A socket bound to a free 127.0.0.1 port, for an app that must know its own URL before it is served."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextmanager
def serve(app: ASGIApp, path: str = "/mcp", sock: socket.socket | None = None) -> Iterator[Upstream]:
    """Serve ``app`` on a free 127.0.0.1 port (or on ``sock``) in a background thread; yield the
    Upstream for ``path``."""
    sock = sock or bound_socket()
    port = sock.getsockname()[1]
    upstream = Upstream(url=f"http://127.0.0.1:{port}{path}")
    config = uvicorn.Config(
        _recording(app, upstream.requests),
        log_level="warning",
        lifespan="auto",
        http="h11",
        ws="none",
        # A backstop only: handlers that hang (raw_listing_server's HANG) end when the client leaves.
        timeout_graceful_shutdown=2,
    )
    server = _Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, daemon=True, name=f"upstream:{port}"
    )
    thread.start()
    try:
        if not server.ready.wait(START_TIMEOUT):
            raise RuntimeError(f"test upstream on port {port} did not start within {START_TIMEOUT} s")
        yield upstream
    finally:
        server.should_exit = True
        thread.join(STOP_TIMEOUT)
        sock.close()
        if thread.is_alive():
            raise RuntimeError(f"test upstream on port {port} did not stop within {STOP_TIMEOUT} s")


# ------------------------------------------------------------------------------------- SDK servers


def demo_server(name: str = "demo", *, tools: int = 3) -> MCPServer:
    """An MCPServer with ``tools`` tools; ``tool_0`` has title, annotations, icons, _meta, outputSchema."""
    # log_level: MCPServer() calls logging.basicConfig (a process-wide side effect) at this level.
    server = MCPServer(
        name, version="1.2.3", instructions="Demo upstream for toolvet tests.", log_level="WARNING"
    )

    @server.tool(
        name="tool_0",
        title="Tool Zero",
        description="Adds two numbers.",
        annotations=ToolAnnotations(read_only_hint=True, title="Annotated Zero"),
        icons=[Icon(src="https://example.invalid/icon.png", mime_type="image/png")],
        meta={"vendor/extra": {"kept": True}},
    )
    def tool_0(a: int, b: int) -> int:
        return a + b

    for index in range(1, tools):

        def other(text: str) -> str:
            return text

        server.tool(name=f"tool_{index}", description=f"Echo number {index}.")(other)
    return server


@contextmanager
def modern_http_server(server: MCPServer | None = None, *, json_response: bool = False) -> Iterator[Upstream]:
    """The SDK's streamable HTTP app: answers ``server/discover`` (2026-07-28) and the handshake."""
    app = (server or demo_server()).streamable_http_app(json_response=json_response)
    with serve(app, "/mcp") as upstream:
        yield upstream


def _handshake_only(app: ASGIApp) -> ASGIApp:
    """Answer any request stamped with a non-handshake protocol version as an mcp 1.x server does.

    Such a server knows only ``initialize`` sessions: a ``server/discover`` POST carries no session id
    and is refused with 400 "Missing session ID"; a newer version on a session gets 400 "Unsupported
    protocol version". Both are JSON-RPC -32600 errors with the id ``"server-error"``.
    """

    async def guard(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            version = headers.get("mcp-protocol-version")
            if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
                while (await receive()).get("more_body", False):
                    pass  # read the request like a real server (and so the recorder sees it)
                text = (
                    "Bad Request: Missing session ID"
                    if "mcp-session-id" not in headers
                    else f"Bad Request: Unsupported protocol version: {version}"
                )
                await _send_json(
                    send,
                    400,
                    {"jsonrpc": "2.0", "id": "server-error", "error": {"code": -32600, "message": text}},
                )
                return
        await app(scope, receive, send)

    return guard


@contextmanager
def handshake_only_http_server(server: MCPServer | None = None) -> Iterator[Upstream]:
    """An SDK streamable HTTP server that speaks only the 2025-11-25 handshake era."""
    app = (server or demo_server()).streamable_http_app()
    with serve(_handshake_only(app), "/mcp") as upstream:
        yield upstream


@contextmanager
def sse_server(server: MCPServer | None = None) -> Iterator[Upstream]:
    """The SDK's legacy HTTP+SSE app; the endpoint is ``/sse``."""
    app = (server or demo_server()).sse_app()
    with serve(app, "/sse") as upstream:
        yield upstream


def stdio_server_command(*args: str) -> tuple[str, list[str]]:
    """(command, args) launching ``tests/servers/stdio_server.py`` with this interpreter."""
    return sys.executable, [str(STDIO_SERVER), *args]


# --------------------------------------------------------------------------------- hostile server


class Hang:
    """Page behaviour: never answer; the handler returns when the client disconnects."""


class Drop:
    """Page behaviour: start a response, send part of it, then close the connection."""


@dataclass(frozen=True)
class Fault:
    """Page behaviour: answer with this JSON-RPC error."""

    code: int
    message: str


HANG: Final = Hang()
DROP: Final = Drop()

PageBehaviour = Any  # a result (any JSON value, sent verbatim as "result"), HANG, DROP, or a Fault


async def _send_json(send: Send, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
    payload = json.dumps(body).encode()
    raw_headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    raw_headers += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": payload})


async def _send_sse(send: Send, body: Any, headers: Mapping[str, str] | None = None) -> None:
    # A priming event and a progress notification first, so clients must skip to the response.
    notification = {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "data": "hi"},
    }
    events = [b"id: 0\r\ndata:\r\n\r\n", b": keep-alive comment\r\n\r\n"]
    events.append(b"event: message\r\ndata: " + json.dumps(notification).encode() + b"\r\n\r\n")
    events.append(b"event: message\r\ndata: " + json.dumps(body).encode() + b"\r\n\r\n")
    raw_headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
    raw_headers += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": 200, "headers": raw_headers})
    for event in events:
        await send({"type": "http.response.body", "body": event, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


def raw_pages_app(
    pages: Mapping[str | None, PageBehaviour],
    *,
    era: Literal["modern", "handshake"] = "modern",
    sse: bool = False,
) -> ASGIApp:
    """A raw ASGI JSON-RPC app mimicking the streamable-HTTP wire, serving ``pages`` for ``tools/list``.

    Written by hand instead of with the SDK's ``Server`` because the SDK validates outgoing results
    against its models (``ListToolsResult``): it cannot send non-object tools, tools without
    ``inputSchema``, unknown fields such as ``securitySchemes``, or a non-object result. ``pages``
    maps the request's cursor (``None`` when the request has none) to what to answer; an unknown
    cursor gets -32602. ``era="modern"`` answers ``server/discover``; ``"handshake"`` refuses it like
    a 2025-11-25-only server and runs an ``initialize`` session instead. ``sse`` wraps every answer in
    a ``text/event-stream`` body instead of ``application/json``.
    """
    session_id = "raw-session-1"

    async def reply(send: Send, body: Any, headers: Mapping[str, str] | None = None) -> None:
        if sse:
            await _send_sse(send, body, headers)
        else:
            await _send_json(send, 200, body, headers)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                event = await receive()
                if event["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif event["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["method"] == "DELETE":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body", False):
                break
        request = json.loads(raw)
        method, request_id = request.get("method"), request.get("id")
        params = request.get("params") or {}
        if request_id is None:  # a notification
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        if method == "server/discover":
            if era == "handshake":
                error = {"code": -32600, "message": "Bad Request: Missing session ID"}
                await _send_json(send, 400, {"jsonrpc": "2.0", "id": "server-error", "error": error})
                return
            result = {
                "supportedVersions": [LATEST_MODERN_VERSION],
                "capabilities": {"tools": {}},
                "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "raw", "version": "0"}},
            }
            await reply(send, {"jsonrpc": "2.0", "id": request_id, "result": result})
            return
        if method == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "0"},
            }
            await reply(
                send, {"jsonrpc": "2.0", "id": request_id, "result": result}, {"mcp-session-id": session_id}
            )
            return
        if method != "tools/list":
            error = {"code": -32601, "message": f"Method not found: {method}"}
            await reply(send, {"jsonrpc": "2.0", "id": request_id, "error": error})
            return
        cursor = params.get("cursor")
        if cursor not in pages:
            error = {"code": -32602, "message": f"Invalid cursor: {cursor!r}"}
            await reply(send, {"jsonrpc": "2.0", "id": request_id, "error": error})
            return
        behaviour = pages[cursor]
        if isinstance(behaviour, Hang):
            while (await receive())["type"] != "http.disconnect":
                pass
            return
        if isinstance(behaviour, Drop):
            start = {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", b"100000")],
            }
            await send(start)
            await send({"type": "http.response.body", "body": b'{"jsonrpc":"2.0","id":', "more_body": True})
            return  # uvicorn closes the connection of a response left incomplete
        if isinstance(behaviour, Fault):
            error = {"code": behaviour.code, "message": behaviour.message}
            await reply(send, {"jsonrpc": "2.0", "id": request_id, "error": error})
            return
        await reply(send, {"jsonrpc": "2.0", "id": request_id, "result": behaviour})

    return app


@contextmanager
def raw_listing_server(
    pages: Mapping[str | None, PageBehaviour],
    *,
    era: Literal["modern", "handshake"] = "modern",
    sse: bool = False,
) -> Iterator[Upstream]:
    """Serve :func:`raw_pages_app` at ``/mcp``."""
    with serve(raw_pages_app(pages, era=era, sse=sse), "/mcp") as upstream:
        yield upstream


# ---------------------------------------------------------------------------- list-changed signals


class Announcer:
    """Lets a test make an SDK ``MCPServer`` announce that its tool list changed, in both eras.

    Handshake era: the SDK advertises ``tools.listChanged=false`` unless the server opts in (its
    ``create_initialization_options`` is wrapped to pass ``NotificationOptions(tools_changed=True)``)
    and sending needs each client's session, which a middleware collects when the client's
    ``notifications/initialized`` arrives; ``announce`` calls ``send_tool_list_changed()`` on each.
    2026-07-28: ``announce`` publishes ``ToolsListChanged`` on the server's subscription bus, which
    every open ``subscriptions/listen`` stream forwards.

    Readiness (threading events, set on the upstream's loop): ``listening`` when a listen stream
    subscribed to the bus (so a publish is buffered behind its acknowledgement); ``stream_open`` when
    a standalone GET stream answered 200 (wrap the app with :meth:`wrap`); ``initialized`` when a
    session finished its handshake (on HTTP+SSE and stdio its stream is then open; on streamable HTTP
    the GET stream comes after). Announcing after the right one is delivered; nothing is replayed.
    """

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self.listening = threading.Event()
        self.stream_open = threading.Event()
        self.initialized = threading.Event()
        self._sessions: list[Any] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        low = server._lowlevel_server
        original = low.create_initialization_options

        def with_list_changed(notification_options: Any = None, *args: Any, **kwargs: Any) -> Any:
            return original(notification_options or NotificationOptions(tools_changed=True), *args, **kwargs)

        low.create_initialization_options = with_list_changed  # type: ignore[method-assign]

        async def collect_sessions(ctx: Any, call_next: Any) -> Any:
            result = await call_next(ctx)
            if ctx.method == "notifications/initialized":
                self._loop = asyncio.get_running_loop()
                self._sessions.append(ctx.session)
                self.initialized.set()
            return result

        low.middleware.append(collect_sessions)
        bus = server._subscriptions
        subscribe = bus.subscribe

        def watched_subscribe(listener: Any) -> Any:
            self._loop = asyncio.get_running_loop()
            unsubscribe = subscribe(listener)
            self.listening.set()
            return unsubscribe

        bus.subscribe = watched_subscribe  # type: ignore[method-assign]

    def wrap(self, app: ASGIApp) -> ASGIApp:
        """``app`` with ``stream_open`` set once a standalone GET stream has been answered 200."""

        async def watched(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http" or scope["method"] != "GET":
                await app(scope, receive, send)
                return

            async def tapped_send(message: Message) -> None:
                await send(message)
                if message["type"] == "http.response.start" and message["status"] == 200:
                    self._loop = asyncio.get_running_loop()
                    self.stream_open.set()

            await app(scope, receive, tapped_send)

        return watched

    async def _announce_here(self) -> None:
        for session in list(self._sessions):
            try:
                await session.send_tool_list_changed()
            except Exception:  # a session whose client has gone
                self._sessions.remove(session)
        await self.server._subscriptions.publish(ToolsListChanged())

    async def announce(self) -> None:
        """Announce a change to every connected client, on the upstream's own event loop."""
        loop = self._loop
        if loop is None:
            raise RuntimeError("no client has connected to the upstream yet")
        future = asyncio.run_coroutine_threadsafe(self._announce_here(), loop)
        await anyio.to_thread.run_sync(future.result, START_TIMEOUT)

    async def run_here(self, function: Callable[[], object]) -> None:
        """Run ``function`` on the upstream's event loop (e.g. to close its listen streams)."""
        loop = self._loop
        if loop is None:
            raise RuntimeError("no client has connected to the upstream yet")

        async def call() -> None:
            function()

        future = asyncio.run_coroutine_threadsafe(call(), loop)
        await anyio.to_thread.run_sync(future.result, START_TIMEOUT)

    async def wait_ready(self, event: threading.Event) -> None:
        """Wait (bounded) for one of the readiness events."""
        if not await anyio.to_thread.run_sync(event.wait, START_TIMEOUT):
            raise TimeoutError("the upstream never saw the watcher connect")


def change_tools(server: MCPServer, name: str) -> None:
    """Add a tool ``name`` to ``server`` (what a real server does before it announces a change)."""

    def added(text: str) -> str:
        return text

    server.add_tool(added, name=name, description=f"Added at run time: {name}.")


@contextmanager
def announcing_http_server(
    server: MCPServer | None = None, *, handshake_only: bool = False
) -> Iterator[tuple[Upstream, Announcer]]:
    """An SDK streamable HTTP server (modern, or handshake-only) whose tool list changes can be announced."""
    mcp_server = server or demo_server()
    announcer = Announcer(mcp_server)
    app = announcer.wrap(mcp_server.streamable_http_app())
    with serve(_handshake_only(app) if handshake_only else app, "/mcp") as upstream:
        yield upstream, announcer


@contextmanager
def announcing_sse_server(server: MCPServer | None = None) -> Iterator[tuple[Upstream, Announcer]]:
    """The SDK's legacy HTTP+SSE app (``/sse``) whose tool list changes can be announced."""
    mcp_server = server or demo_server()
    announcer = Announcer(mcp_server)
    with serve(mcp_server.sse_app(), "/sse") as upstream:
        yield upstream, announcer


# ------------------------------------------------------------------ canned HTTP, in the caller's loop

CANNED_BODY: Final = b'{"jsonrpc":"2.0","id":1,"result":{}}'
_CANNED_ANSWER: Final = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
                         % (len(CANNED_BODY), CANNED_BODY))


class CannedHttp:
    """An HTTP/1.1 upstream on loopback address ``host``: every POST answered with :data:`CANNED_BODY` (after
    ``delay`` seconds) on a kept-alive connection, or, without ``keep_alive``, the connection closed right
    after the answer without saying so (no ``Connection: close``). It counts the connections it accepted
    and those its client closed; ``url`` is set by :func:`canned_http`."""

    def __init__(self, host: str = "127.0.0.1", delay: float = 0.0, *, keep_alive: bool = True) -> None:
        self.host = host
        self.delay = delay
        self.keep_alive = keep_alive
        self.accepted = 0
        self.closed = 0
        self.url = ""

    async def handle(self, client: anyio.abc.SocketStream) -> None:
        self.accepted += 1
        async with client:
            buffered = b""
            while True:
                try:
                    while b"\r\n\r\n" not in buffered:
                        buffered += await client.receive()
                    head, _, rest = buffered.partition(b"\r\n\r\n")
                    length = int(next(line.split(b":", 1)[1] for line in head.split(b"\r\n")
                                      if line.lower().startswith(b"content-length:")))
                    while len(rest) < length:
                        rest += await client.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                    self.closed += 1
                    return
                buffered = rest[length:]
                if self.delay:
                    await anyio.sleep(self.delay)
                await client.send(_CANNED_ANSWER)
                if not self.keep_alive:
                    return


@asynccontextmanager
async def canned_http(*servers: CannedHttp) -> AsyncIterator[None]:
    """Serve ``servers`` (each on a free port of its address) in the caller's event loop for the block."""
    listeners = [await anyio.create_tcp_listener(local_host=server.host) for server in servers]
    try:
        async with anyio.create_task_group() as tg:
            for server, listener in zip(servers, listeners, strict=True):
                server.url = f"http://{server.host}:{listener.extra(anyio.abc.SocketAttribute.local_port)}/mcp"
                tg.start_soon(listener.serve, server.handle)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()
    finally:
        for listener in listeners:
            await listener.aclose()
