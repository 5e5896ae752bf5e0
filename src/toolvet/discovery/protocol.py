"""The MCP client protocol state machine used by discovery, independent of the byte pipe.

One state machine, three pipes: a :class:`Channel` moves one JSON-RPC request or notification and
hands back the raw ``result`` value (never an SDK model, so nothing the server sent is dropped or
re-shaped); :func:`negotiate` picks the protocol era exactly as the SDK client's ``mode="auto"``
does, and the returned :class:`Session` stamps every later request for that era.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Final, Protocol

import anyio
from mcp.shared.inbound import (
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PROTOCOL_VERSION_HEADER,
    NAME_BEARING_METHODS,
)
from mcp.types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    REQUEST_TIMEOUT,
    SERVER_INFO_META_KEY,
    UNSUPPORTED_PROTOCOL_VERSION,
    DiscoverResult,
    UnsupportedProtocolVersionErrorData,
)
from mcp.types.version import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    LATEST_MODERN_VERSION,
    MODERN_PROTOCOL_VERSIONS,
)
from pydantic import ValidationError

__all__ = ["Channel", "ChannelError", "ProtocolError", "RpcError", "Session", "TimedChannel", "negotiate"]


def _client_version() -> str:
    try:
        return version("toolvet")
    except PackageNotFoundError:  # running from a source tree without an installed distribution
        return "0.0.0"


CLIENT_INFO: Final[dict[str, str]] = {"name": "toolvet", "version": _client_version()}
# A discovery client serves no sampling, elicitation or roots, so it advertises nothing.
CLIENT_CAPABILITIES: Final[dict[str, Any]] = {}


class RpcError(Exception):
    """A JSON-RPC error from the server, or one the transport synthesised the way the SDK does.

    The streamable-HTTP transport of the SDK turns HTTP-level rejections (4xx/5xx without a JSON-RPC
    body, 202 to a request, an unfollowed redirect) into JSON-RPC errors; the era negotiation relies
    on that, so the HTTP channel does the same.
    """

    def __init__(self, code: int, message: str, data: Any = None, *, synthetic: bool = False) -> None:
        text = message if synthetic else f"server returned JSON-RPC error {code}: {message or 'no message'}"
        super().__init__(text)
        self.code = code
        self.message = message
        self.data = data


class ChannelError(Exception):
    """The pipe failed: connection refused or reset, stream closed, unparseable or oversized data."""


class ProtocolError(Exception):
    """The server answered, but not in a shape the protocol allows (e.g. an unknown handshake version)."""


class Channel(Protocol):
    """One byte pipe to one server; requests are sent one at a time."""

    async def request(self, method: str, params: dict[str, Any] | None, headers: Mapping[str, str]) -> Any:
        """Send a request and return its raw ``result`` (any JSON value). Raise RpcError or ChannelError."""
        ...

    async def notify(self, method: str, params: dict[str, Any] | None, headers: Mapping[str, str]) -> None:
        """Send a notification (no answer is expected)."""
        ...


@dataclass
class Session:
    """The negotiated era of one connection, and what the server said about itself."""

    channel: Channel
    protocol_version: str
    modern: bool
    server_info: dict[str, Any] | None = None
    capabilities: dict[str, Any] | None = None
    instructions: str | None = None
    extra_meta: dict[str, Any] = field(default_factory=dict)

    def stamp(
        self, method: str, params: dict[str, Any] | None
    ) -> tuple[dict[str, Any] | None, dict[str, str]]:
        """Return (params, headers) stamped for this era, as the SDK's session stamps do.

        Mirrors ``mcp.client.session._make_modern_stamp`` / ``_make_handshake_stamp``: at 2026-07-28
        every request carries version, client info and capabilities in ``_meta`` plus the
        ``MCP-Protocol-Version``, ``Mcp-Method`` (and, for name-bearing methods, ``Mcp-Name``) headers;
        in the handshake era only the ``MCP-Protocol-Version`` header is added.
        """
        headers = {MCP_PROTOCOL_VERSION_HEADER: self.protocol_version}
        if not self.modern:
            return params, headers
        stamped = dict(params or {})
        meta = dict(stamped.get("_meta") or {})
        meta[PROTOCOL_VERSION_META_KEY] = self.protocol_version
        meta[CLIENT_INFO_META_KEY] = CLIENT_INFO
        meta[CLIENT_CAPABILITIES_META_KEY] = CLIENT_CAPABILITIES
        stamped["_meta"] = meta
        headers[MCP_METHOD_HEADER] = method
        name_key = NAME_BEARING_METHODS.get(method)
        if name_key is not None and isinstance(name := stamped.get(name_key), str):
            headers[MCP_NAME_HEADER] = name
        return stamped, headers

    async def request(self, method: str, params: dict[str, Any] | None) -> Any:
        """Send an era-stamped request and return the raw result."""
        stamped, headers = self.stamp(method, params)
        return await self.channel.request(method, stamped, headers)


def _parse_supported(data: Any) -> list[str] | None:
    """``data.supported`` off a -32022 error, or None if not actionable (as ``mcp.client._probe``)."""
    try:
        return UnsupportedProtocolVersionErrorData.model_validate(data).supported
    except ValidationError:
        return None


def _mutual_modern(supported: list[str] | None) -> list[str]:
    return [v for v in MODERN_PROTOCOL_VERSIONS if v in (supported or ())]


async def _send_discover(channel: Channel, probe_version: str) -> Any:
    # Same envelope and headers as mcp.client.session.ClientSession.send_discover.
    params = {
        "_meta": {
            PROTOCOL_VERSION_META_KEY: probe_version,
            CLIENT_INFO_META_KEY: CLIENT_INFO,
            CLIENT_CAPABILITIES_META_KEY: CLIENT_CAPABILITIES,
        }
    }
    headers = {MCP_PROTOCOL_VERSION_HEADER: probe_version, MCP_METHOD_HEADER: "server/discover"}
    return await channel.request("server/discover", params, headers)


async def _initialize(channel: Channel) -> Session:
    # Same request as mcp.client.session.ClientSession.initialize: no version header on the handshake
    # itself (the SDK transport clears a probe-stamped one), then notifications/initialized stamped.
    params = {
        "protocolVersion": LATEST_HANDSHAKE_VERSION,
        "capabilities": CLIENT_CAPABILITIES,
        "clientInfo": CLIENT_INFO,
    }
    result = await channel.request("initialize", params, {})
    if not isinstance(result, dict):
        raise ProtocolError("initialize result is not an object")
    agreed = result.get("protocolVersion")
    if agreed not in HANDSHAKE_PROTOCOL_VERSIONS:
        raise ProtocolError(f"server chose unsupported protocol version {str(agreed)[:40]!r}")
    session = Session(
        channel=channel,
        protocol_version=str(agreed),
        modern=False,
        server_info=_dict_or_none(result.get("serverInfo")),
        capabilities=_dict_or_none(result.get("capabilities")),
        instructions=_str_or_none(result.get("instructions")),
    )
    _, headers = session.stamp("notifications/initialized", None)
    await channel.notify("notifications/initialized", None, headers)
    return session


def _adopt_discover(channel: Channel, raw: dict[str, Any], result: DiscoverResult) -> Session:
    # mcp.client.session.ClientSession.adopt: the newest mutual modern version wins.
    mutual = [v for v in MODERN_PROTOCOL_VERSIONS if v in result.supported_versions]
    meta = raw.get("_meta")
    server_info = meta.get(SERVER_INFO_META_KEY) if isinstance(meta, dict) else None
    return Session(
        channel=channel,
        protocol_version=mutual[-1],
        modern=True,
        server_info=_dict_or_none(server_info),
        capabilities=_dict_or_none(raw.get("capabilities")),
        instructions=_str_or_none(raw.get("instructions")),
    )


async def negotiate(channel: Channel) -> Session:
    """Pick the protocol era for ``channel`` exactly as the SDK client does in ``mode="auto"``.

    This is a copy of the decision logic of ``mcp.client._probe.negotiate_auto`` (mcp 2.3.0) over raw
    JSON: probe ``server/discover`` at the newest modern version; every JSON-RPC error falls back to
    ``initialize`` except -32022 naming only modern versions (re-probe at a mutual one, or give up
    when disjoint); a discover result that does not validate, or advertises no modern version, also
    falls back; -32022 on the fallback handshake triggers one re-probe. Transport failures are never
    an era verdict: they propagate.

    Raises:
        RpcError: the server rejected both eras (or is modern-only and disjoint).
        ChannelError: the pipe failed.
        ProtocolError: the handshake answer was unusable.
    """
    probe_version = LATEST_MODERN_VERSION
    for attempt in range(2):
        try:
            raw = await _send_discover(channel, probe_version)
        except RpcError as e:
            if e.code == UNSUPPORTED_PROTOCOL_VERSION:
                supported = _parse_supported(e.data)
                mutual = _mutual_modern(supported)
                if mutual and attempt == 0:
                    probe_version = mutual[-1]
                    continue
                if supported is not None and not any(v in HANDSHAKE_PROTOCOL_VERSIONS for v in supported):
                    raise  # modern-only and disjoint: a real incompatibility
            try:
                return await _initialize(channel)  # every other rpc error means legacy (a denylist)
            except RpcError as handshake_exc:
                if handshake_exc.code != UNSUPPORTED_PROTOCOL_VERSION or attempt != 0:
                    raise
                mutual = _mutual_modern(_parse_supported(handshake_exc.data))
                if not mutual:
                    raise
                probe_version = mutual[-1]
                continue
        if not isinstance(raw, dict):
            return await _initialize(channel)  # unparseable result: not modern evidence
        ttl = raw.get("ttlMs")
        if isinstance(ttl, int | float) and not isinstance(ttl, bool) and ttl < 0:
            # As mcp.client.session._clamp_inbound_ttl: a negative ttl must not downgrade the era.
            raw = {**raw, "ttlMs": 0}
        try:
            result = DiscoverResult.model_validate(raw, by_name=False)
        except ValidationError:
            return await _initialize(channel)
        if not any(v in result.supported_versions for v in MODERN_PROTOCOL_VERSIONS):
            return await _initialize(channel)  # discover answered, but only legacy versions advertised
        return _adopt_discover(channel, raw, result)
    raise AssertionError("unreachable")  # the loop body always returns, continues once, or raises


class TimedChannel:
    """Bounds every request of ``inner`` by ``timeout`` seconds.

    A timeout becomes the SDK's client-side ``REQUEST_TIMEOUT`` (-32001) JSON-RPC error, so the era
    negotiation treats a silent ``server/discover`` the way ``negotiate_auto`` does (fall back).
    """

    def __init__(self, inner: Channel, timeout: float) -> None:
        self.inner = inner
        self.timeout = timeout
        self.current: str | None = None  # the method in flight, so a failure can say where it happened

    async def request(self, method: str, params: dict[str, Any] | None, headers: Mapping[str, str]) -> Any:
        """Send a request, giving up after the timeout."""
        self.current = method
        with anyio.move_on_after(self.timeout):
            return await self.inner.request(method, params, headers)
        raise RpcError(REQUEST_TIMEOUT, f"timed out after {self.timeout:g} s", synthetic=True)

    async def notify(self, method: str, params: dict[str, Any] | None, headers: Mapping[str, str]) -> None:
        """Send a notification, giving up after the timeout."""
        self.current = method
        with anyio.move_on_after(self.timeout):
            await self.inner.notify(method, params, headers)
            return
        raise RpcError(REQUEST_TIMEOUT, f"timed out after {self.timeout:g} s", synthetic=True)


def _dict_or_none(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None
