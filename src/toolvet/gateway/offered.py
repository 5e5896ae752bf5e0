"""The offered tools as the gateway lists them (docs/gateway.md): ``{server}_{tool}``, read in one query.

The listing is read from the registry at most once a second (the same bound CallService keeps) and
turned into SDK ``Tool`` objects once per era and audience, so a busy ``tools/list`` costs no query and
no model building. Its :attr:`Offered.signature` (a hash of every name and fingerprint) is what the
change watcher compares.

What a client receives per era: a 2026-07-28 client gets every field as advertised; a handshake-era
client gets a tool whose ``outputSchema`` is not an object-rooted schema *without* its ``outputSchema``
(its calls then come without ``structuredContent``), instead of a whole list the SDK would refuse.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import anyio.to_thread
import mcp.types as types
from mcp.shared.inbound import X_MCP_HEADER_KEY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolvet.cache import MISSING, TtlCache
from toolvet.services.access import Requirement, requirement
from toolvet.services.calls import HOST_SERVER, CallService
from toolvet.services.context import Context
from toolvet.services.tools import offered_rows

#: Fields of an advertised tool the gateway passes on (the SDK's models drop any other).
WIRE_FIELDS: Final = ("title", "description", "inputSchema", "outputSchema", "annotations", "icons", "_meta")


@dataclass(frozen=True, slots=True)
class OfferedTool:
    """One listed tool: its gateway name, where it lives, what it needs, its wire form."""

    name: str  # {server}_{tool}
    server: str
    tool: str
    fingerprint: str
    need: Requirement
    wire: dict[str, Any]  # the MCP tool object under its gateway name

    @property
    def resource_uri(self) -> str | None:
        """The ``ui://`` resource of an MCP Apps tool (``_meta.ui.resourceUri``), if any."""
        meta = self.wire.get("_meta")
        if not isinstance(meta, Mapping):
            return None
        ui = meta.get("ui")
        uri = ui.get("resourceUri") if isinstance(ui, Mapping) else None
        uri = uri if isinstance(uri, str) else meta.get("ui/resourceUri")
        return uri if isinstance(uri, str) else None


def needs_tasks(definition: Mapping[str, Any]) -> bool:
    """Whether a tool can only run as a task (``execution.taskSupport: "required"``)."""
    execution = definition.get("execution")
    return isinstance(execution, Mapping) and execution.get("taskSupport") == "required"


def legacy_safe(output_schema: Any) -> bool:
    """Whether a handshake-era client can take this ``outputSchema`` (its root must be ``type: object``)."""
    return output_schema is None or (
        isinstance(output_schema, Mapping) and output_schema.get("type") == "object"
    )


def wire_form(name: str, definition: Mapping[str, Any]) -> dict[str, Any]:
    """The tool object listed under ``name``: the definition's listed members, plus ``securitySchemes``
    mirrored into ``_meta`` (the SDK drops unknown top-level fields, and hosts read it there too)."""
    wire: dict[str, Any] = {"name": name}
    for key in WIRE_FIELDS:
        value = definition.get(key)
        if value is not None:
            wire[key] = value
    execution = definition.get("execution")
    if isinstance(execution, Mapping):
        wire["execution"] = dict(execution)  # tasks are relayed (gateway.tasks)
    schemes = definition.get("securitySchemes")
    if isinstance(schemes, list):
        meta = dict(wire.get("_meta") or {})
        meta.setdefault("securitySchemes", schemes)
        wire["_meta"] = meta
    return wire


#: One entry of a tool set's allow-list: (server, tool), or (server, None) for every tool of the server.
Member = tuple[str, str | None]


@dataclass(frozen=True, slots=True)
class View:
    """Which offered tools one MCP endpoint lists, and under which names.

    ``server`` None is ``/mcp``: every server's tools as ``{server}_{tool}``. A server's name is
    ``/mcp/servers/{name}``: that server's tools under their own names, as if the client spoke to it.
    A tool set's ``members`` (with its name, ``tool_set``) are ``/mcp/sets/{name}``: the offered tools
    the allow-list names, as ``{server}_{tool}`` like ``/mcp``.
    """

    server: str | None = None
    tool_set: str | None = None
    members: frozenset[Member] | None = None

    @classmethod
    def of_set(cls, name: str, members: Iterable[Member]) -> View:
        """The view of the tool set ``name``."""
        return cls(tool_set=name, members=frozenset(members))

    @property
    def aggregate(self) -> bool:
        """Whether this is ``/mcp``, which lists every offered tool."""
        return self.server is None and self.members is None

    def serves(self, server: str) -> bool:
        """Whether this view lists (or may list) tools of ``server``."""
        if self.server is not None:
            return server == self.server
        if self.members is not None:
            return any(member[0] == server for member in self.members)
        return True

    def name_of(self, tool: OfferedTool) -> str | None:
        """The name ``tool`` is listed under here, or None when this view does not list it."""
        if self.server is not None:
            return tool.tool if tool.server == self.server else None
        if self.members is not None and not (
            (tool.server, None) in self.members or (tool.server, tool.tool) in self.members
        ):
            return None
        return tool.name


AGGREGATE: Final = View()


@dataclass
class Offered:
    """One reading of the offered set."""

    tools: list[OfferedTool]
    by_name: dict[str, OfferedTool]
    signature: str
    _built: dict[tuple[View, bool], list[tuple[OfferedTool, types.Tool]]] = field(default_factory=dict)
    _names: dict[View, dict[str, OfferedTool]] = field(default_factory=dict)
    _header_schemas: dict[str, dict[str, Any] | None] = field(default_factory=dict)

    def names(self, view: View = AGGREGATE) -> dict[str, OfferedTool]:
        """The tools ``view`` lists, by the name it lists them under."""
        named = self._names.get(view)
        if named is None:
            named = {}
            for tool in self.tools:
                name = view.name_of(tool)
                if name is not None:
                    named[name] = tool
            self._names[view] = named
        return named

    def header_schema(self, tool: OfferedTool) -> dict[str, Any] | None:
        """``tool``'s ``inputSchema`` when it declares an ``x-mcp-header`` anywhere, else None: a schema
        without one has no ``Mcp-Param-*`` header to check (worked out once per tool and reading)."""
        try:
            return self._header_schemas[tool.name]
        except KeyError:
            pass
        schema = tool.wire.get("inputSchema")
        found = schema if isinstance(schema, dict) and _holds_key(schema, X_MCP_HEADER_KEY) else None
        self._header_schemas[tool.name] = found
        return found

    def listing(
        self, *, modern: bool, anonymous: bool, view: View = AGGREGATE,
        hidden: Mapping[str, set[str]] | None = None,
    ) -> list[types.Tool]:
        """SDK Tool objects for an era, audience and view: anonymous callers see ``noauth`` tools only,
        and ``hidden`` (a scope's disabled map: server -> tool names) leaves tools out."""
        key = (view, modern)
        built = self._built.get(key)
        if built is None:
            built = []
            for name, tool in self.names(view).items():
                wire = tool.wire if name == tool.name else {**tool.wire, "name": name}
                if modern and needs_tasks(wire):
                    continue  # 2026-07-28 has no tasks: every call of it would fail
                if not modern and not legacy_safe(wire.get("outputSchema")):
                    wire = {k: v for k, v in wire.items() if k != "outputSchema"}
                built.append((tool, types.Tool.model_validate(wire)))
            self._built[key] = built
        return [
            model for tool, model in built
            if (not anonymous or tool.need.noauth) and not (hidden and tool.tool in hidden.get(tool.server, ()))
        ]

    def servers(self) -> list[str]:
        """The upstream servers with at least one offered tool (toolvet's own host tools aside)."""
        return sorted({tool.server for tool in self.tools if tool.server != HOST_SERVER})

    def scopes(self) -> set[str]:
        """Every OAuth scope some listed tool asks for (the metadata's ``scopes_supported``)."""
        return {s for tool in self.tools for s in tool.need.scopes}


def _holds_key(value: Any, key: str) -> bool:
    """Whether ``key`` is a key of any object inside the JSON ``value`` (an explicit stack: no recursion)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if key in node:
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _signature(tools: Iterable[OfferedTool]) -> str:
    digest = hashlib.sha256()
    for tool in tools:
        digest.update(f"{tool.name}\0{tool.fingerprint}\n".encode())
    return digest.hexdigest()


class OfferedCache:
    """The offered set, re-read from the registry at most once per :data:`toolvet.cache.READ_TTL`."""

    def __init__(self, ctx: Context, service_: CallService | None = None) -> None:
        self.ctx = ctx
        self.service = service_
        self._current: TtlCache[None, Offered] = TtlCache(max_size=1)  # one set, under the key None
        self._lock = anyio.Lock()

    def peek(self) -> Offered | None:
        """The last offered set read, however old (None before the first read); never waits."""
        hit = self._current.peek(None)
        return None if hit is MISSING else hit

    async def get(self, *, fresh: bool = False) -> Offered:
        """The offered set; ``fresh`` forces a read (the change watcher)."""
        if not fresh and (hit := self._current.get(None)) is not MISSING:
            return hit
        async with self._lock:
            if not fresh and (hit := self._current.get(None)) is not MISSING:
                return hit
            return self._current.put(None, await anyio.to_thread.run_sync(self._read))

    def _read(self) -> Offered:
        tools: list[OfferedTool] = []
        for server, name, definition, fingerprint in offered_rows(self.ctx):
            full = f"{server}_{name}"
            tools.append(OfferedTool(full, server, name, fingerprint, requirement(definition),
                                     wire_form(full, definition)))
        hosts = self.service.host_tools if self.service is not None else {}
        for name, host in hosts.items():
            full = f"{HOST_SERVER}_{name}"
            definition = host.definition
            tools.append(
                OfferedTool(
                    full,
                    HOST_SERVER,
                    name,
                    host.fingerprint,
                    requirement(definition),
                    wire_form(full, definition),
                )
            )
        tools.sort(key=lambda t: t.name)
        return Offered(tools, {t.name: t for t in tools}, _signature(tools))


def is_modern(protocol_version: str) -> bool:
    """Whether a negotiated version is of the stateless 2026-07-28 era."""
    return protocol_version in MODERN_PROTOCOL_VERSIONS
