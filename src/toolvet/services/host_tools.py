"""toolvet's own operations as MCP tools, serverType ``toolvet`` (docs/gateway.md).

Each is defined here with the fields of an MCP tool definition: ``name``, ``title``, ``description``, input and output
schemas (from the pydantic models below), ``annotations``, ``icons`` (a small SVG data URL),
``visibility`` (emitted as ``_meta.ui.visibility``), ``securitySchemes`` and ``requireApproval``
(false for the read-only ones). Handlers call the services and answer a model matching the output
schema (or a sentence saying why not); the gateway turns that into the call's result, which
CallService checks like any upstream's.

:func:`definitions` is what the rest of toolvet knows of them without running one: the policy facts
(``/decide``, ``toolvet check``, the catalog, every call) read their fingerprints and flags there.

Consumers see what they may use: the offered tools and the servers' names, never server URLs or
headers. Reviewing a diff needs the ``read`` permission, discovering a server the ``discover`` one
(operators); anyone else gets an ``isError`` result saying so.
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any, Final, Literal

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field

from toolvet.domain.fingerprint import fingerprint
from toolvet.services import review, servers, tools
from toolvet.services.auth import Permission, Principal, Role
from toolvet.services.context import Context

_SVG: Final = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" fill="none" stroke="currentColor">'
    '<path d="M8 1.5 2.5 4v4c0 3.2 2.3 5.6 5.5 6.5 3.2-.9 5.5-3.3 5.5-6.5V4z"/>'
    '<path d="m5.5 8 2 2 3-3.5"/></svg>'
)
ICON: Final = {
    "src": "data:image/svg+xml;base64," + base64.b64encode(_SVG.encode()).decode(),
    "mimeType": "image/svg+xml",
    "sizes": ["any"],
}
SIGNED_IN: Final = [{"type": "oauth2", "scopes": []}]


# ------------------------------------------------------------------------------------------ schemas


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoArguments(_In):
    """No arguments."""


class ServerItem(BaseModel):
    name: str
    title: str | None
    transport: str
    enabled: bool
    tool_count: int
    last_discovery_status: str | None


class ServersOut(BaseModel):
    servers: list[ServerItem]


class ListToolsIn(_In):
    server: str | None = Field(default=None, description="Only this server's tools.")


class ToolItem(BaseModel):
    server: str
    name: str = Field(
        description="The tool's name on its server; call it through toolvet as {server}_{name}."
    )
    title: str | None
    review_state: Literal["unreviewed", "reviewed", "changed"]
    offered: bool
    enabled: bool
    writable: bool
    fingerprint: str


class ToolsOut(BaseModel):
    tools: list[ToolItem]


class ToolAddress(_In):
    server: str = Field(description="The server's name.")
    tool: str = Field(description="The tool's name on that server.")


class DiffResult(BaseModel):
    server: str
    tool: str
    review_state: str
    compared_with: str | None
    before_fingerprint: str | None
    after_fingerprint: str
    summary: list[str]
    note: str | None


class DiscoverIn(_In):
    server: str = Field(description="The server to list again now.")


class DiscoverResult(BaseModel):
    server: str
    status: str
    added: int
    changed: int
    unchanged: int
    retired: int
    rejected: int
    error: str | None


# ------------------------------------------------------------------------------------------ handlers

Handler = Callable[[Context, Principal, dict[str, Any]], Awaitable[BaseModel | str]]


def _reader(principal: Principal) -> Principal:
    """The read view a host tool uses: consumers read through it, but only what the tool returns."""
    return principal if principal.can(Permission.READ) else Principal(actor=principal.actor, role=Role.READER)


async def _list_servers(ctx: Context, principal: Principal, arguments: dict[str, Any]) -> BaseModel | str:
    page = await anyio.to_thread.run_sync(lambda: servers.list_servers(ctx, _reader(principal), limit=10_000))
    return ServersOut(
        servers=[
            ServerItem(
                name=s.name,
                title=s.title,
                transport=s.transport,
                enabled=s.enabled,
                tool_count=s.tool_count,
                last_discovery_status=s.last_discovery_status,
            )
            for s in page.items
        ]
    )


async def _list_tools(ctx: Context, principal: Principal, arguments: dict[str, Any]) -> BaseModel | str:
    query = ListToolsIn.model_validate(arguments)
    consumer = principal.role is Role.CONSUMER
    page = await anyio.to_thread.run_sync(
        lambda: tools.list_tools(
            ctx, _reader(principal), server=query.server, offered_=True if consumer else None, limit=100_000
        )
    )
    return ToolsOut(
        tools=[
            ToolItem(
                server=t.server,
                name=t.name,
                title=t.title,
                review_state=t.review_state.value,
                offered=t.offered,
                enabled=t.enabled,
                writable=t.writable,
                fingerprint=t.definition_fingerprint,
            )
            for t in page.items
        ]
    )


async def _tool_diff(ctx: Context, principal: Principal, arguments: dict[str, Any]) -> BaseModel | str:
    if not principal.can(Permission.READ):
        return "tool_diff is for operators and readers; a consumer token may not read review diffs"
    address = ToolAddress.model_validate(arguments)
    out = await anyio.to_thread.run_sync(lambda: review.diff(ctx, principal, address.server, address.tool))
    return DiffResult(
        server=out.server,
        tool=out.tool,
        review_state=out.review_state.value,
        compared_with=out.compared_with,
        before_fingerprint=out.before_fingerprint,
        after_fingerprint=out.after_fingerprint,
        summary=out.summary,
        note=out.note,
    )


async def _discover_server(ctx: Context, principal: Principal, arguments: dict[str, Any]) -> BaseModel | str:
    if not principal.can(Permission.DISCOVER):
        return "discover_server is for operators; this token's role may not start discovery"
    server = DiscoverIn.model_validate(arguments).server
    # Imported here: discovery brings the MCP SDK and the upstream clients, which the CLI's registry reads
    # that describe the host tools (``toolvet check``, ``toolvet export``) never need.
    from toolvet.services import discovery

    run = (await discovery.discover(ctx, principal, [server], trigger="mcp"))[0]
    return DiscoverResult(
        server=run.server,
        status=run.status,
        added=run.added,
        changed=run.changed,
        unchanged=run.unchanged,
        retired=run.retired,
        rejected=run.rejected,
        error=run.error,
    )


# ------------------------------------------------------------------------------------------ definitions


@dataclass(frozen=True)
class Spec:
    """One host tool in those fields, before it becomes an MCP tool object."""

    name: str
    title: str
    description: str
    input: type[BaseModel]
    output: type[BaseModel]
    read_only: bool
    handler: Handler
    visibility: tuple[str, ...] = ("model", "app")
    security_schemes: tuple[dict[str, Any], ...] = tuple(SIGNED_IN)

    @property
    def require_approval(self) -> bool:
        return not self.read_only

    def definition(self) -> dict[str, Any]:
        """The MCP tool object (under the tool's own name; the gateway lists it as ``toolvet_{name}``)."""
        schemes = [dict(s) for s in self.security_schemes]
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input.model_json_schema(),
            "outputSchema": self.output.model_json_schema(),
            "annotations": {
                "title": self.title,
                "readOnlyHint": self.read_only,
                "destructiveHint": False,
                "idempotentHint": self.read_only,
                "openWorldHint": not self.read_only,
            },
            "icons": [dict(ICON)],
            "securitySchemes": schemes,
            "_meta": {"ui": {"visibility": list(self.visibility)}, "securitySchemes": schemes},
        }


SPECS: Final = (
    Spec(
        "list_servers",
        "List servers",
        "The MCP servers registered in toolvet: name, title, transport, "
        "whether enabled, how many tools, how the last discovery went.",
        NoArguments,
        ServersOut,
        True,
        _list_servers,
    ),
    Spec(
        "list_tools",
        "List tools",
        "The tools toolvet knows with their review state (unreviewed, reviewed, "
        "changed) and whether they are offered; consumers see the offered ones.",
        ListToolsIn,
        ToolsOut,
        True,
        _list_tools,
    ),
    Spec(
        "tool_diff",
        "Show a tool's change",
        "What changed in a tool's definition since it was reviewed (or "
        "since its previous definition). Operators and readers only.",
        ToolAddress,
        DiffResult,
        True,
        _tool_diff,
    ),
    Spec(
        "discover_server",
        "Discover a server",
        "List a server's tools again now and reconcile them with the "
        "registry. Operators only; asks for approval.",
        DiscoverIn,
        DiscoverResult,
        False,
        _discover_server,
    ),
)


@dataclass(frozen=True, slots=True)
class HostDefinition:
    """One host tool as listed and decided about: its MCP tool object (under its own name), that
    object's fingerprint, whether it asks for approval, and what runs it."""

    definition: dict[str, Any]
    fingerprint: str
    require_approval: bool
    handler: Handler


@cache
def definitions() -> Mapping[str, HostDefinition]:
    """Every host tool by its name under serverType ``toolvet``, built once (the definitions are
    constants: their fingerprints never change while the process runs)."""
    out: dict[str, HostDefinition] = {}
    for spec in SPECS:
        definition = spec.definition()
        out[spec.name] = HostDefinition(
            definition, fingerprint(definition), spec.require_approval, spec.handler
        )
    return MappingProxyType(out)
