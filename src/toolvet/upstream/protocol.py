"""The MCP client protocol, independent of the byte pipe: era negotiation and per-era stamping.

One state machine, three pipes: a :class:`Channel` moves one JSON-RPC request or notification and
hands back the raw ``result`` value; :func:`negotiate` picks the protocol era the way the SDK client's
``mode="auto"`` does, and the returned :class:`Session` stamps every later request for that era.

Why toolvet speaks the protocol itself instead of using the SDK's ``ClientSession``: the SDK parses
every message into pydantic models that drop fields they do not know and reject a whole
``tools/list`` for one invalid tool, while toolvet must keep every claim verbatim and judge each tool
on its own; and a gateway forwards results, progress and server requests it must not re-shape. So
this module works on raw JSON and follows the SDK's decisions (the same probe, fallbacks and stamps,
using the SDK's public constants), and the tests run it against SDK-built servers of both eras and
the official reference servers.
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
    encode_header_value,
)
from mcp.types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
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

from toolvet.upstream.errors import ChannelError, ProtocolError, RpcError

__all__ = [
    "APPS_EXTENSION", "APPS_MIME_TYPE", "CLIENT_INFO", "NO_HOOKS", "RELAYED_CAPABILITIES", "Channel",
    "ChannelError", "Hooks", "ProtocolError", "RpcError", "Session",
    "TimedChannel", "is_input_required", "is_task_created", "negotiate", "wire",
]


def _client_version() -> str:
    try:
        return version("toolvet")
    except PackageNotFoundError:  # running from a source tree without an installed distribution
        return "0.0.0"


CLIENT_INFO: Final[dict[str, str]] = {"name": "toolvet", "version": _client_version()}
#: What a client that serves no sampling, elicitation or roots declares (watchers).
NO_CAPABILITIES: Final[dict[str, Any]] = {}
#: The MCP Apps extension's identifier and the one kind of view it shows (``ui://`` resources).
APPS_EXTENSION: Final = "io.modelcontextprotocol/ui"
APPS_MIME_TYPE: Final = "text/html;profile=mcp-app"
#: What toolvet declares where it forwards calls, and to discovery so that a server lists the same
#: tools to both: the server-to-client requests the gateway relays to the calling client (which
#: refuses them, saying why, when that client cannot answer). Roots are relayed too: a pooled
#: session belongs to one caller, so its ``roots/list`` goes to that caller's client, and the
#: client's ``notifications/roots/list_changed`` to that caller's sessions. MCP Apps too: the gateway
#: passes a tool's ``_meta.ui`` and its ``ui://`` view on, and a server that offers its app-enhanced
#: tools (or results) only to a host that declares the extension would otherwise never show a host
#: behind toolvet its views (a host without views reads the tools' text content, as MCP Apps asks).
RELAYED_CAPABILITIES: Final[dict[str, Any]] = {
    "elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {"listChanged": True},
    "extensions": {APPS_EXTENSION: {"mimeTypes": [APPS_MIME_TYPE]}},
}


class Hooks:
    """What a client does with the messages a server sends while one of its requests is open.

    The default answers ``ping`` and refuses every other server request with "method not found", and
    ignores notifications: right for discovery and watchers, which offer no client features. The
    gateway passes hooks that relay progress, log messages, elicitation and sampling to the client
    whose call is being served.
    """

    #: Whether the client behind the request speaks the handshake era (its upstream session is then
    #: asked for that era too).
    handshake_era: bool = False

    async def notification(self, method: str, params: dict[str, Any] | None) -> None:
        """A notification from the server (progress, a log message, a list change ...)."""
        return None

    async def request(self, method: str, params: dict[str, Any] | None) -> Any:
        """A request from the server; return its result, or raise RpcError to answer an error."""
        if method == "ping":
            return {}
        raise RpcError(METHOD_NOT_FOUND, f"{method[:100]} is not supported by this client", synthetic=True)

    async def input_required(self, result: dict[str, Any]) -> dict[str, Any] | None:
        """A 2026-07-28 ``InputRequiredResult``: the responses to its ``inputRequests`` (the request is
        then sent again with them), or None to hand the result itself to the caller (a client that
        retries with them). Raises RpcError when the caller can do neither: by default (a call over
        REST, which has nobody to ask), naming what the server asked."""
        raise RpcError(INVALID_PARAMS, f"the server asked for input first ({asked_for(result)}), which this "
                       "caller cannot give: call the tool through /mcp from a client that answers it", synthetic=True)


def asked_for(result: dict[str, Any]) -> str:
    """What an ``InputRequiredResult`` asks, for a message: each request's method, and an elicitation's
    own message (``elicitation/create "Transfer 40 EUR?"``)."""
    requests = result.get("inputRequests")
    described = []
    for asked in (requests.values() if isinstance(requests, dict) else ()):
        method = asked.get("method") if isinstance(asked, dict) else None
        params = asked.get("params") if isinstance(asked, dict) else None
        message = params.get("message") if isinstance(params, dict) else None
        text = str(method)[:60] if method is not None else "a malformed request"
        described.append(f"{text} {str(message)[:120]!r}" if isinstance(message, str) else text)
    return ", ".join(described[:5]) or "nothing it named"


def is_input_required(result: Any) -> bool:
    """Whether a result is a 2026-07-28 ``InputRequiredResult`` (the server needs input first)."""
    return isinstance(result, dict) and result.get("resultType") == "input_required"


def is_task_created(result: Any) -> bool:
    """Whether a ``tools/call`` result is a ``CreateTaskResult`` (the call runs on as a task, 2025-11-25)."""
    return isinstance(result, dict) and isinstance(result.get("task"), dict) and "content" not in result


#: The hooks of a client that offers nothing (see :class:`Hooks`).
NO_HOOKS: Final = Hooks()


def wire(message: dict[str, Any], params: dict[str, Any] | None) -> dict[str, Any]:
    """``message`` with ``params`` set when there are any: JSON-RPC 2.0 has no ``"params": null``
    (the TypeScript SDK's servers drop such a message on stdio and answer 400 on SSE)."""
    if params is not None:
        message["params"] = params
    return message


class Channel(Protocol):
    """One byte pipe to one server."""

    async def request(
        self, method: str, params: dict[str, Any] | None, headers: Mapping[str, str], hooks: Hooks = NO_HOOKS
    ) -> Any:
        """Send a request and return its raw ``result`` (any JSON value). Raise RpcError or ChannelError.

        Messages the server sends while the request is open go to ``hooks``.
        """
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
    #: What toolvet declared to the server on this connection (it may adapt its lists to it).
    client_capabilities: dict[str, Any] = field(default_factory=dict)

    def stamp(
        self, method: str, params: dict[str, Any] | None, extra: Mapping[str, str] | None = None
    ) -> tuple[dict[str, Any] | None, dict[str, str]]:
        """Return (params, headers) stamped for this era, as the SDK's session stamps do.

        As the SDK's client session stamps requests: at 2026-07-28
        every request carries version, client info and capabilities in ``_meta`` plus the
        ``MCP-Protocol-Version``, ``Mcp-Method`` (and, for name-bearing methods, ``Mcp-Name``, encoded
        as the SDK encodes it) headers,
        and ``extra`` (a ``tools/call``'s ``Mcp-Param-*`` headers, see ``upstream.params``);
        in the handshake era only the ``MCP-Protocol-Version`` header is added.
        """
        headers = {MCP_PROTOCOL_VERSION_HEADER: self.protocol_version}
        if not self.modern:
            return params, headers
        if extra:
            headers.update(extra)  # first, so the routing headers below always win
        stamped = dict(params or {})
        meta = dict(stamped.get("_meta") or {})
        meta[PROTOCOL_VERSION_META_KEY] = self.protocol_version
        meta[CLIENT_INFO_META_KEY] = CLIENT_INFO
        meta[CLIENT_CAPABILITIES_META_KEY] = self.client_capabilities
        stamped["_meta"] = meta
        headers[MCP_METHOD_HEADER] = method
        name_key = NAME_BEARING_METHODS.get(method)
        if name_key is not None and isinstance(name := stamped.get(name_key), str):
            headers[MCP_NAME_HEADER] = encode_header_value(name)  # a name that is not ASCII: base64-wrapped
        return stamped, headers

    async def request(
        self, method: str, params: dict[str, Any] | None, hooks: Hooks = NO_HOOKS,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """Send an era-stamped request and return the raw result; ``headers`` go with it in the
        2026-07-28 era only (see :meth:`stamp`)."""
        stamped, sent = self.stamp(method, params, headers)
        return await self.channel.request(method, stamped, sent, hooks)

    async def notify(self, method: str, params: dict[str, Any] | None) -> None:
        """Send an era-stamped notification."""
        stamped, headers = self.stamp(method, params)
        await self.channel.notify(method, stamped, headers)


def _parse_supported(data: Any) -> list[str] | None:
    """``data.supported`` off a -32022 error, or None if not actionable (as the SDK's probe reads it)."""
    try:
        return UnsupportedProtocolVersionErrorData.model_validate(data).supported
    except ValidationError:
        return None


def _mutual_modern(supported: list[str] | None) -> list[str]:
    return [v for v in MODERN_PROTOCOL_VERSIONS if v in (supported or ())]


async def _send_discover(channel: Channel, probe_version: str, capabilities: dict[str, Any]) -> Any:
    # Same envelope and headers as the SDK client's server/discover.
    params = {
        "_meta": {
            PROTOCOL_VERSION_META_KEY: probe_version,
            CLIENT_INFO_META_KEY: CLIENT_INFO,
            CLIENT_CAPABILITIES_META_KEY: capabilities,
        }
    }
    headers = {MCP_PROTOCOL_VERSION_HEADER: probe_version, MCP_METHOD_HEADER: "server/discover"}
    return await channel.request("server/discover", params, headers)


async def _initialize(channel: Channel, capabilities: dict[str, Any]) -> Session:
    # Same request as the SDK client's initialize: no version header on the handshake itself (the SDK
    # transport clears a probe-stamped one), then notifications/initialized stamped.
    params = {
        "protocolVersion": LATEST_HANDSHAKE_VERSION,
        "capabilities": capabilities,
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
        client_capabilities=capabilities,
    )
    _, headers = session.stamp("notifications/initialized", None)
    await channel.notify("notifications/initialized", None, headers)
    return session


def _adopt_discover(
    channel: Channel, raw: dict[str, Any], result: DiscoverResult, capabilities: dict[str, Any]
) -> Session:
    # As the SDK client adopts a discover result: the newest mutual modern version wins.
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
        client_capabilities=capabilities,
    )


async def negotiate(
    channel: Channel, capabilities: dict[str, Any] | None = None, *, handshake_first: bool = False
) -> Session:
    """Pick the protocol era for ``channel`` as the SDK client does in ``mode="auto"``.

    ``handshake_first`` tries ``initialize`` before anything else, and negotiates as below only when
    the server refuses it: a gateway serving a handshake-era client talks to the server in that era
    too where it can, so the server behaves as it would to that client (requests of its own mid-call,
    ``resources/subscribe``, ``logging/setLevel``).

    ``capabilities`` is what toolvet declares (none by default). The decisions follow the SDK's
    automatic negotiation (mcp 2.3.0) over raw JSON: probe ``server/discover`` at the newest modern
    version; every JSON-RPC error falls back to ``initialize`` except -32022 naming only modern
    versions (re-probe at a mutual one, or give up when disjoint); a discover result that does not
    validate, or advertises no modern version, also falls back; -32022 on the fallback handshake
    triggers one re-probe. Transport failures are never an era verdict: they propagate.

    Raises:
        RpcError: the server rejected both eras (or is modern-only and disjoint).
        ChannelError: the pipe failed.
        ProtocolError: the handshake answer was unusable.
    """
    declared = dict(capabilities or NO_CAPABILITIES)
    if handshake_first:
        try:
            return await _initialize(channel, declared)
        except (RpcError, ProtocolError):
            pass  # a server that does not speak the handshake: the era is negotiated as usual
    probe_version = LATEST_MODERN_VERSION
    for attempt in range(2):
        try:
            raw = await _send_discover(channel, probe_version, declared)
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
                return await _initialize(channel, declared)  # every other rpc error means legacy (a denylist)
            except RpcError as handshake_exc:
                if handshake_exc.code != UNSUPPORTED_PROTOCOL_VERSION or attempt != 0:
                    raise
                mutual = _mutual_modern(_parse_supported(handshake_exc.data))
                if not mutual:
                    raise
                probe_version = mutual[-1]
                continue
        if not isinstance(raw, dict):
            return await _initialize(channel, declared)  # unparseable result: not modern evidence
        ttl = raw.get("ttlMs")
        if isinstance(ttl, int | float) and not isinstance(ttl, bool) and ttl < 0:
            # As the SDK client clamps an inbound ttl: a negative one must not downgrade the era.
            raw = {**raw, "ttlMs": 0}
        try:
            result = DiscoverResult.model_validate(raw, by_name=False)
        except ValidationError:
            return await _initialize(channel, declared)
        if not any(v in result.supported_versions for v in MODERN_PROTOCOL_VERSIONS):
            return await _initialize(channel, declared)  # discover answered, but only legacy versions advertised
        return _adopt_discover(channel, raw, result, declared)
    raise AssertionError("unreachable")  # the loop body always returns, continues once, or raises


class TimedChannel:
    """Bounds every request of ``inner`` by ``timeout`` seconds.

    A timeout becomes the SDK's client-side ``REQUEST_TIMEOUT`` (-32001) JSON-RPC error, so the era
    negotiation treats a silent ``server/discover`` the way the SDK's negotiation does (fall back).
    """

    def __init__(self, inner: Channel, timeout: float) -> None:
        self.inner = inner
        self.timeout = timeout
        self.current: str | None = None  # the method in flight, so a failure can say where it happened

    async def request(
        self, method: str, params: dict[str, Any] | None, headers: Mapping[str, str], hooks: Hooks = NO_HOOKS
    ) -> Any:
        """Send a request, giving up after the timeout."""
        self.current = method
        with anyio.move_on_after(self.timeout):
            return await self.inner.request(method, params, headers, hooks)
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
