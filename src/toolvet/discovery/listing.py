"""Read one upstream server's complete ``tools/list``, raw, over any MCP transport and either era, and
its prompts, resources and resource templates when it declares them.

:func:`fetch_listing` is the boundary between discovery and the untrusted upstream: it never raises
for anything the server or the network does, bounds every read, and returns each tool object exactly
as it was decoded from the wire (validation is reconcile's job).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import httpx2

from toolvet.domain.entries import KINDS, KindSpec
from toolvet.domain.listing import Listing
from toolvet.upstream.errors import describe, one_line
from toolvet.upstream.http import HttpChannel, UpstreamClient, http_client
from toolvet.upstream.protocol import RELAYED_CAPABILITIES, Channel, Session, TimedChannel, negotiate
from toolvet.upstream.streams import StderrTail, open_sse, open_stdio
from toolvet.upstream.target import Target

__all__ = ["Limits", "Listing", "Target", "fetch_listing"]


@dataclass(frozen=True)
class Limits:
    """Bounds of one discovery pass; every read from the server is bounded by one of these."""

    connect_timeout: float = 10.0
    read_timeout: float = 30.0  # per request
    pass_timeout: float = 120.0  # whole pass, hard bound
    max_pages: int = 100
    max_tools: int = 10_000
    max_response_bytes: int = 64 * 1024 * 1024  # one page body; bigger -> failed pass
    max_depth: int = 64  # JSON nested deeper is refused unparsed -> failed pass


def _page_hash_text(tools: list[Any]) -> bytes | None:
    """The bytes a page contributes to the listing digest, or None if it has no JSON text.

    The C encoder without ``sort_keys``, ASCII-escaped (so a lone surrogate still encodes): one call per
    page costs a fraction of the sorted per-tool digests it lets a no-change pass skip.
    """
    try:
        return json.dumps(tools, separators=(",", ":")).encode("ascii")
    except (TypeError, ValueError):
        return None


@dataclass
class _Pass:
    """What one pass has learnt so far, so that any stop can still report it."""

    tools: list[Any] = field(default_factory=list)
    pages: int = 0
    protocol_version: str | None = None
    server_info: dict[str, Any] | None = None
    capabilities: dict[str, Any] | None = None
    instructions: str | None = None
    channel: TimedChannel | None = None
    stderr_line: str | None = None
    # Over every page's tools, in order; None once a page could not be hashed (then no digest).
    hasher: Any = field(default_factory=hashlib.sha256)

    def add_page(self, tools: list[Any], reply_text: bytes | None = None) -> None:
        """Keep a page's tools; hash the reply's text as received when there is one: re-encoding the
        tools for the digest cost as much as decoding them."""
        self.tools.extend(tools)
        if self.hasher is not None:
            kind, text = (b"r", reply_text) if reply_text is not None else (b"t", _page_hash_text(tools))
            if text is None:
                self.hasher = None
            else:
                # Tagged and length-prefixed, so what was hashed and the page boundaries are unambiguous.
                self.hasher.update(kind + b"%d:" % len(text))
                self.hasher.update(text)

    def where(self) -> str:
        current = self.channel.current if self.channel is not None else None
        if current is None:
            return "connecting"
        if current == "tools/list":
            return f"tools/list page {self.pages + 1}"
        return current

    def result(self, status: Literal["ok", "incomplete", "failed"], error: str | None = None) -> Listing:
        return Listing(
            status=status,
            tools=self.tools,
            error=one_line(error) if error is not None else None,
            protocol_version=self.protocol_version,
            server_info=self.server_info,
            capabilities=self.capabilities,
            instructions=self.instructions,
            pages=self.pages,
            digest="sha256:" + self.hasher.hexdigest() if status == "ok" and self.hasher is not None else None,
        )

    def failed(self, detail: str) -> Listing:
        if self.stderr_line:
            detail = f"{detail} (server stderr: {self.stderr_line})"
        return self.result("failed", f"{self.where()}: {detail}")


async def fetch_listing(target: Target, limits: Limits, http: httpx2.AsyncClient | None = None) -> Listing:
    """Negotiate the protocol era with ``target`` and read its whole ``tools/list``, page by page.

    ``http`` is the shared client for streamable HTTP (one pool for a whole sweep); ``None`` makes a
    private client for this call. Never raises for server or network behaviour: every failure is a
    ``failed`` listing whose ``error`` says what went wrong and where. Cancellation from the caller
    still propagates.
    """
    state = _Pass()
    try:
        with anyio.move_on_after(limits.pass_timeout):
            return await _run_pass(target, limits, http, state)
        return state.failed(f"pass timed out after {limits.pass_timeout:g} s")
    except Exception as exc:  # the boundary: an upstream's misbehaviour is data, never a traceback
        return state.failed(describe(exc, target.url or target.command))


async def _run_pass(target: Target, limits: Limits, http: httpx2.AsyncClient | None, state: _Pass) -> Listing:
    if target.transport == "streamable-http":
        if not target.url:
            raise ValueError("target has no url")
        async with _client(http, limits) as client:
            channel = HttpChannel(
                client,
                target.url,
                target.headers,
                timeout=httpx2.Timeout(limits.read_timeout, connect=limits.connect_timeout),
                max_response_bytes=limits.max_response_bytes,
                max_depth=limits.max_depth,
                auth=target.auth,
            )
            try:
                return await _list(channel, limits, state)
            finally:
                with anyio.move_on_after(limits.connect_timeout):
                    await channel.close()
    if target.transport == "sse":
        if not target.url:
            raise ValueError("target has no url")
        async with open_sse(
            target.url,
            target.headers,
            connect_timeout=limits.connect_timeout,
            read_timeout=limits.read_timeout,
            guard=http.guard if isinstance(http, UpstreamClient) else None,
        ) as stream:
            return await _list(stream, limits, state)
    if target.transport == "stdio":
        if not target.command:
            raise ValueError("target has no command")
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
            try:
                async with open_stdio(
                    target.command, list(target.args), target.env, target.cwd, errlog
                ) as stream:
                    return await _list(stream, limits, state)
            finally:
                # After the child is gone (or on the way out of a timeout): keep its last words for errors.
                state.stderr_line = StderrTail(errlog).last_line(target.env.values())
    raise ValueError(f"unknown transport {target.transport!r}")


@asynccontextmanager
async def _client(http: httpx2.AsyncClient | None, limits: Limits) -> AsyncIterator[httpx2.AsyncClient]:
    if http is not None:
        yield http
        return
    async with http_client(timeout=httpx2.Timeout(limits.read_timeout, connect=limits.connect_timeout)) as client:
        yield client


async def _list(raw_channel: Channel, limits: Limits, state: _Pass) -> Listing:
    channel = TimedChannel(raw_channel, limits.read_timeout)
    state.channel = channel
    # The same capabilities the gateway declares when it forwards calls: a server that adapts its list
    # to them lists the tools calls will reach.
    session = await negotiate(channel, RELAYED_CAPABILITIES)
    state.protocol_version = session.protocol_version
    state.server_info = session.server_info
    state.capabilities = session.capabilities
    state.instructions = session.instructions
    listing = await _read_tools(session, raw_channel, limits, state)
    if listing.status == "ok":
        await _read_entries(session, limits, listing)
    return listing


async def _read_tools(session: Session, raw_channel: Channel, limits: Limits, state: _Pass) -> Listing:
    seen: set[str] = set()
    cursor: str | None = None
    while True:
        result = await session.request("tools/list", None if cursor is None else {"cursor": cursor})
        state.pages += 1
        page = state.pages
        if not isinstance(result, dict):
            return state.result("failed", f"tools/list page {page}: result is not an object")
        page_tools = result.get("tools")
        if not isinstance(page_tools, list):
            return state.result("failed", f"tools/list page {page}: 'tools' is missing or not a list")
        room = limits.max_tools - len(state.tools)
        if len(page_tools) > room:
            state.tools.extend(page_tools[:room])  # incomplete: no digest, so not hashed
            return state.result("incomplete", f"more than max_tools={limits.max_tools} tools (page {page})")
        state.add_page(page_tools, getattr(raw_channel, "reply_text", None))

        next_cursor = result.get("nextCursor")
        if next_cursor is None:  # absent or null ends the listing; "" is a real cursor (2026-07-28)
            return state.result("ok")
        if not isinstance(next_cursor, str):
            return state.result("failed", f"tools/list page {page}: nextCursor is not a string")
        if next_cursor in seen:
            return state.result("incomplete", f"cursor {_show(next_cursor)} repeated on page {page}")
        if page >= limits.max_pages:
            return state.result(
                "incomplete", f"more than max_pages={limits.max_pages} pages (page {page} has a nextCursor)"
            )
        seen.add(next_cursor)
        cursor = next_cursor


class _EntryListError(Exception):
    """A prompts or resources list that toolvet could not read whole (its stored entries stay)."""


async def _read_entries(session: Session, limits: Limits, listing: Listing) -> None:
    """Each entry list the server declared, read whole into ``listing.entries`` (by kind), or its
    failure into ``listing.entry_errors``: the tools' pass stands either way."""
    declared = listing.capabilities or {}
    for spec in KINDS.values():
        if not isinstance(declared.get(spec.capability), dict):
            continue
        try:
            listing.entries[spec.kind] = await _read_list(session, spec, limits)
        except _EntryListError as exc:
            listing.entry_errors.append(str(exc))
        except Exception as exc:  # the server's error answer, a timeout: data, as for tools
            listing.entry_errors.append(one_line(f"{spec.method}: {describe(exc, spec.method)}"))


async def _read_list(session: Session, spec: KindSpec, limits: Limits) -> list[Any]:
    items: list[Any] = []
    seen: set[str] = set()
    cursor: str | None = None
    for page in range(1, limits.max_pages + 1):
        result = await session.request(spec.method, None if cursor is None else {"cursor": cursor})
        found = result.get(spec.list_key) if isinstance(result, dict) else None
        if not isinstance(found, list):
            raise _EntryListError(f"{spec.method} page {page}: {spec.list_key!r} is missing or not a list")
        items.extend(found)
        if len(items) > limits.max_tools:
            raise _EntryListError(f"{spec.method}: more than max_tools={limits.max_tools} items")
        next_cursor = result.get("nextCursor")
        if next_cursor is None:
            return items
        if not isinstance(next_cursor, str) or next_cursor in seen:
            raise _EntryListError(f"{spec.method} page {page}: a bad or repeated nextCursor")
        seen.add(next_cursor)
        cursor = next_cursor
    raise _EntryListError(f"{spec.method}: more than max_pages={limits.max_pages} pages")


def _show(cursor: str) -> str:
    return repr(cursor) if len(cursor) <= 60 else repr(cursor[:57]) + "…"
