"""Watch one upstream server for "my tool list changed" signals, forever.

:func:`watch_list_changed` connects with the same era negotiation as a listing and then holds one
long-lived stream open:

- handshake era (up to 2025-11-25): the session's own stream carries
  ``notifications/tools/list_changed`` - on streamable HTTP the standalone ``GET`` SSE stream of the
  ``Mcp-Session-Id``, on HTTP+SSE and stdio the session's message stream;
- 2026-07-28: a ``subscriptions/listen`` request with ``notifications.toolsListChanged: true``; its
  response is the stream. The server first sends ``notifications/subscriptions/acknowledged`` (the
  honoured filter), then every ``notifications/tools/list_changed`` stamped with
  ``_meta["io.modelcontextprotocol/subscriptionId"]`` = the listen request's id; a final JSON-RPC
  result is a graceful close (mcp ``client/subscriptions.py`` / ``server/subscriptions.py``).

Decisions: a server that does not say it announces changes (``capabilities.tools.listChanged`` is
not true, the listen acknowledgement does not honour ``toolsListChanged``, the listen request or the
standalone GET is refused with 405) is logged once, the connection is closed, and the function
then **sleeps until cancelled** (so it never returns, as its type says, and a supervisor does not
restart it in a loop): the interval-based re-discovery still covers that server, and the scheduler
watches it afresh when the server is edited or the process restarts. Every other failure is
retried with exponential back-off. Because neither era replays missed signals, a stream that is
re-established after it was lost calls ``on_change`` once (something may have changed meanwhile).
"""

from __future__ import annotations

import json
import logging
import math
import tempfile
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from typing import Any, Final, NoReturn

import anyio
import httpx2

from toolvet.discovery.listing import Limits
from toolvet.jsontext import loads
from toolvet.upstream.errors import ChannelError, RpcError
from toolvet.upstream.http import SESSION_ID_HEADER, HttpChannel, UpstreamClient, answer, http_client
from toolvet.upstream.protocol import NO_HOOKS, Hooks, Session, TimedChannel, negotiate
from toolvet.upstream.streams import StreamChannel, open_sse, open_stdio
from toolvet.upstream.target import Target

__all__ = ["watch_list_changed"]

log = logging.getLogger("toolvet.discovery.watch")

LIST_CHANGED: Final = "notifications/tools/list_changed"
ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
SUBSCRIPTION_ID_KEY: Final = "io.modelcontextprotocol/subscriptionId"
LISTEN_ID: Final = "toolvet-listen-1"  # on streamable HTTP; a string id never collides with the channel's
#: A watch stream is long-lived; it is re-established after this many bytes so memory stays bounded.
MAX_STREAM_BYTES: Final = 64 * 1024 * 1024
_MAX_JSON_REPLY: Final = 1024 * 1024
_FOREVER: Final = 10.0 * 365 * 24 * 3600  # "no read timeout" for the SDK's SSE client, which needs a number


class _StreamHooks(Hooks):
    """Hands a stream session's notifications to the watch; remembers why it must stop, if it must."""

    def __init__(self, watch: _Watch) -> None:
        self.watch = watch
        self.session: Session | None = None
        self.channel: StreamChannel | None = None
        self.subscription: Any = LISTEN_ID
        self.stop: Exception | None = None

    async def notification(self, method: str, params: dict[str, Any] | None) -> None:
        if self.session is None:
            return
        try:
            _on_notification(method, params, self.session, self.watch, self.subscription)
        except Unsupported as exc:
            self.stop = exc
            if self.channel is not None:
                self.channel.closed.set()


class Unsupported(Exception):
    """The server does not offer tool-list change signals; watching it is pointless."""


class _Watch:
    """State of one watch across reconnects: the callback, and whether a stream is (or was) up."""

    def __init__(self, on_change: Callable[[], None]) -> None:
        self.on_change = on_change
        self.established = False  # the current connection's stream is listening
        self.ever_established = False
        self.setup: anyio.CancelScope | None = None  # bounds connecting until the stream is up

    def up(self) -> None:
        """The stream is listening: lift the setup bound; after a lost stream, report a possible change."""
        self.established = True
        if self.setup is not None:
            self.setup.deadline = math.inf
        if self.ever_established:
            self.on_change()
        self.ever_established = True


async def watch_list_changed(
    target: Target,
    limits: Limits,
    on_change: Callable[[], None],
    *,
    http: httpx2.AsyncClient | None = None,
    retry_delay: float = 5.0,
    max_retry_delay: float = 300.0,
) -> NoReturn:
    """Call ``on_change()`` whenever ``target`` signals that its tool list changed; run until cancelled.

    ``http`` is a shared client for streamable HTTP (``None``: a private one). Never raises for what
    the server or the network does: failures are retried after ``retry_delay`` seconds, doubling up
    to ``max_retry_delay``. A server that offers no change signals at all is logged once and then
    left alone: the function sleeps (holding no connection) until cancelled; see the module docstring.
    Connecting, negotiating and the acknowledgement are bounded by ``limits``; the established
    stream has no read timeout and ends when the caller cancels.
    """
    watch = _Watch(on_change)
    delay = retry_delay
    where = target.url or target.command or "?"
    while True:
        watch.established = False
        started = anyio.current_time()
        try:
            await _watch_once(target, limits, http, watch)
            detail = "stream closed by the server"
        except Unsupported as exc:
            log.info("not watching %s for tool list changes: %s", where, exc)
            await anyio.sleep_forever()  # nothing to watch; the connection is closed, the caller cancels
            raise AssertionError("unreachable") from None
        except Exception as exc:  # the boundary: what the server does is never our caller's exception
            detail = _describe(exc)
        if watch.established and anyio.current_time() - started >= delay:
            delay = retry_delay  # a stream that held for a while resets the back-off
        log.info("list-changed watch of %s ended (%s); reconnecting in %g s", where, detail, delay)
        await anyio.sleep(delay)
        delay = min(delay * 2, max_retry_delay)


def _announces(session: Session) -> bool:
    tools = (session.capabilities or {}).get("tools")
    return isinstance(tools, dict) and tools.get("listChanged") is True


def _listen_params(session: Session) -> tuple[dict[str, Any] | None, dict[str, str]]:
    return session.stamp("subscriptions/listen", {"notifications": {"toolsListChanged": True}})


async def _watch_once(target: Target, limits: Limits, http: httpx2.AsyncClient | None, watch: _Watch) -> None:
    """One connection: negotiate, open the watch stream, read it until it ends.

    Everything up to the moment the stream listens (the handshake-era stream is open, or the 2026
    acknowledgement arrived) is bounded by ``limits.pass_timeout``; after that there is no bound.
    """
    with anyio.CancelScope(deadline=anyio.current_time() + limits.pass_timeout) as setup:
        watch.setup = setup
        async with AsyncExitStack() as stack:
            if target.transport == "streamable-http":
                await _watch_http(stack, target, limits, http, watch)
                return
            hooks = _StreamHooks(watch)
            stream = await _open_stream(stack, target, limits, hooks, http)
            hooks.channel = stream
            session = await negotiate(TimedChannel(stream, limits.read_timeout))
            if not _announces(session):
                raise Unsupported("its capabilities do not include tools.listChanged")
            hooks.session = session
            await _read_stream(stream, session, hooks)
    if setup.cancelled_caught:
        raise ChannelError(f"the watch stream was not up within {limits.pass_timeout:g} s")


async def _open_stream(
    stack: AsyncExitStack, target: Target, limits: Limits, hooks: Hooks, http: httpx2.AsyncClient | None
) -> StreamChannel:
    if target.transport == "sse":
        if not target.url:
            raise Unsupported("the server has no url")
        # The SDK's SSE reader gives up after sse_read_timeout of silence; a watch waits as long as its
        # caller lets it, so that bound is effectively lifted (connect and POSTs keep connect_timeout).
        opened: StreamChannel = await stack.enter_async_context(open_sse(
            target.url, target.headers, connect_timeout=limits.connect_timeout, read_timeout=_FOREVER,
            on_notification=hooks, guard=http.guard if isinstance(http, UpstreamClient) else None))
        return opened
    if target.transport == "stdio":
        if not target.command:
            raise Unsupported("the server has no command")
        errlog = stack.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))  # noqa: SIM115
        opened = await stack.enter_async_context(
            open_stdio(target.command, list(target.args), target.env, target.cwd, errlog, on_notification=hooks))
        return opened
    raise Unsupported(f"unknown transport {target.transport!r}")


async def _read_stream(stream: StreamChannel, session: Session, hooks: _StreamHooks) -> None:
    """Hold the session's stream until it ends; the hooks act on each notification meanwhile."""
    if session.modern:
        hooks.subscription = stream.next_request_id
        try:
            await session.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, hooks)
        except RpcError as exc:
            if not hooks.watch.established:
                raise Unsupported(f"subscriptions/listen refused: {exc.message[:200]}") from None
        except ChannelError:
            if hooks.stop is None:
                raise
        # A result is a graceful close of the subscription.
    else:
        hooks.watch.up()  # handshake era: the session's own stream carries the notifications
        await stream.closed.wait()
    if hooks.stop is not None:
        raise hooks.stop


def _on_notification(
    method: str, params: Mapping[str, Any] | None, session: Session, watch: _Watch, subscription: Any = LISTEN_ID
) -> None:
    """Act on one notification from the server; anything unexpected is ignored."""
    if not session.modern:
        if method == LIST_CHANGED:
            watch.on_change()
        return
    meta = (params or {}).get("_meta")
    if not isinstance(meta, dict) or meta.get(SUBSCRIPTION_ID_KEY) != subscription:
        return  # not a frame of our subscription
    if method == ACKNOWLEDGED:
        honoured = (params or {}).get("notifications")
        if not isinstance(honoured, dict) or honoured.get("toolsListChanged") is not True:
            raise Unsupported("the subscriptions/listen acknowledgement does not honour toolsListChanged")
        if not watch.established:
            watch.up()
    elif method == LIST_CHANGED and watch.established:
        watch.on_change()


# ----------------------------------------------------------------------------------- streamable HTTP


async def _watch_http(
    stack: AsyncExitStack, target: Target, limits: Limits, http: httpx2.AsyncClient | None, watch: _Watch
) -> None:
    if not target.url:
        raise Unsupported("the server has no url")
    timeout = httpx2.Timeout(limits.read_timeout, connect=limits.connect_timeout)
    client = http
    if client is None:
        client = http_client(timeout=timeout)
        stack.push_async_callback(client.aclose)
    channel = HttpChannel(client, target.url, target.headers, timeout=timeout,
                          max_response_bytes=limits.max_response_bytes, auth=target.auth)
    stack.push_async_callback(_goodbye, channel, limits)
    session = await negotiate(TimedChannel(channel, limits.read_timeout))
    if not _announces(session):
        raise Unsupported("its capabilities do not include tools.listChanged")
    headers = {**channel.headers, "mcp-protocol-version": session.protocol_version}
    if target.auth is not None:
        headers["authorization"] = await target.auth.authorization()
    stream_timeout = httpx2.Timeout(limits.connect_timeout, read=None)  # the stream has no read timeout
    if session.modern:
        params, stamp = _listen_params(session)
        body = {"jsonrpc": "2.0", "id": LISTEN_ID, "method": "subscriptions/listen", "params": params}
        request = client.build_request(
            "POST", target.url, content=json.dumps(body, separators=(",", ":")).encode(),
            timeout=stream_timeout,
            headers={**headers, **stamp, "accept": "application/json, text/event-stream",
                     "content-type": "application/json"})
    else:
        if channel.session_id is None:
            raise Unsupported("the server runs no session, so it has no standalone stream")
        request = client.build_request(
            "GET", target.url, timeout=stream_timeout,
            headers={**headers, "accept": "text/event-stream", SESSION_ID_HEADER: channel.session_id})
    response = await client.send(request, stream=True, follow_redirects=False)
    stack.push_async_callback(_shielded_close, response, limits)
    await _read_http_stream(channel, session, response, watch)


async def _goodbye(channel: HttpChannel, limits: Limits) -> None:
    with anyio.CancelScope(shield=True), anyio.move_on_after(limits.connect_timeout):
        await channel.close()


async def _shielded_close(response: httpx2.Response, limits: Limits) -> None:
    with anyio.CancelScope(shield=True), anyio.move_on_after(limits.connect_timeout):
        await response.aclose()


async def _read_http_stream(
    channel: HttpChannel, session: Session, response: httpx2.Response, watch: _Watch
) -> None:
    status = response.status_code
    content_type = response.headers.get("content-type", "").lower()
    if not session.modern and status == 405:
        # The spec lets a server refuse the standalone stream with 405: nothing could ever reach us.
        raise Unsupported("the server refuses the standalone GET stream (HTTP 405)")
    if session.modern and content_type.startswith("application/json"):
        await _modern_json_reply(response)  # an error (or a result: opened already closed)
        return
    if status >= 300:
        raise ChannelError(f"HTTP {status} {response.reason_phrase}".rstrip())
    if not content_type.startswith("text/event-stream"):
        raise ChannelError(f"unexpected content type {content_type[:60]!r} on the watch stream")
    if not session.modern:
        watch.up()
    events = aiter(httpx2.EventSource(response, max_event_size=MAX_STREAM_BYTES))
    try:
        async for event in events:
            if event.event != "message" or not event.data:
                continue  # priming event, keep-alive or another event type
            try:
                message = loads(event.data)
            except ValueError:
                continue  # one garbled event does not end the watch
            if not isinstance(message, dict):
                continue
            method = message.get("method")
            if isinstance(method, str) and "id" in message:
                await _answer_http(channel, session, message["id"], method)
            elif isinstance(method, str):
                params = message.get("params")
                _on_notification(method, params if isinstance(params, dict) else None, session, watch)
            elif message.get("id") == LISTEN_ID:
                if "error" in message and not watch.established:
                    raise Unsupported(f"subscriptions/listen refused: {_error_text(message)}")
                return  # the server closed the subscription gracefully
    finally:
        with anyio.CancelScope(shield=True):
            await events.aclose()  # type: ignore[attr-defined]


async def _modern_json_reply(response: httpx2.Response) -> None:
    """A JSON answer to ``subscriptions/listen``: an error means the server does not serve it."""
    body = b""
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > _MAX_JSON_REPLY:
            raise ChannelError("oversized answer to subscriptions/listen")
    try:
        message = loads(body)
    except ValueError as exc:
        status = response.status_code
        raise ChannelError(f"answer to subscriptions/listen is not JSON (HTTP {status})") from exc
    if isinstance(message, dict) and "error" in message:
        raise Unsupported(f"subscriptions/listen refused: {_error_text(message)}")
    if response.status_code >= 300:
        raise ChannelError(f"HTTP {response.status_code} {response.reason_phrase}".rstrip())


def _error_text(message: dict[str, Any]) -> str:
    error = message.get("error")
    text = error.get("message") if isinstance(error, dict) else None
    return str(text)[:200] if text else "no message"


async def _answer_http(channel: HttpChannel, session: Session, request_id: Any, method: str) -> None:
    """Answer a server request that arrived on the stream, best effort (``ping`` only; the rest refused)."""
    reply = await answer(NO_HOOKS, request_id, method, None)
    headers = {**channel.headers, "accept": "application/json, text/event-stream",
               "content-type": "application/json", "mcp-protocol-version": session.protocol_version}
    if channel.session_id is not None:
        headers[SESSION_ID_HEADER] = channel.session_id
    with anyio.move_on_after(channel.timeout.read or 30.0):
        try:
            content = json.dumps(reply).encode()
            response = await channel.client.post(channel.url, content=content, headers=headers)
            await response.aclose()
        except httpx2.HTTPError:
            pass  # the server copes with an unanswered ping


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0])
    if isinstance(exc, RpcError | ChannelError):
        return str(exc)[:300]
    if isinstance(exc, TimeoutError):
        return "timed out"
    return f"{type(exc).__name__}: {str(exc)[:300]}"

