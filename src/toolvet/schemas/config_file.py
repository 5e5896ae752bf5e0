"""The file ``toolvet apply`` reads and ``toolvet export`` writes (docs/config.md), and the plan an
apply shows. Its JSON Schema, shipped as ``services/data/config.schema.json``, is generated from
:class:`ConfigFile` (a test keeps the two equal)."""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolvet.domain.names import SERVER_NAME_PATTERN
from toolvet.domain.policy import ApprovalFloor, PermissionMode
from toolvet.schemas.servers import SOFTWARE_HELP, DiscoveryMode, Transport
from toolvet.schemas.tool_sets import ToolSetMember

FORMAT_VERSION: Final = 1
REFERENCE_HELP: Final = ("A reference, never the secret itself: ${ENV_VAR} (an environment variable of the "
                         "process that applies) or ${file:PATH} (a file's content; a relative PATH is read "
                         "beside the applied file).")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolEntry(_Strict):
    """An operator's settings of one tool; a field left out is left as it is."""

    enabled: bool | None = None
    writable: bool | None = None
    approval: ApprovalFloor | None = None


class ServerEntry(_Strict):
    """One server. A field left out is left as it is (a new server takes the default); ``headers`` and
    ``env``, when given, replace the whole map."""

    title: str | None = None
    transport: Transport | None = None
    url: str | None = None
    command: str | None = None
    args: list[str] | None = None
    cwd: str | None = None
    headers: dict[str, str] | None = Field(default=None, description="Header name -> reference. " + REFERENCE_HELP)
    env: dict[str, str] | None = Field(default=None, description="Variable -> reference. " + REFERENCE_HELP)
    enabled: bool | None = None
    discovery: DiscoveryMode | None = None
    trust_annotations: bool | None = None
    new_tools_enabled: bool | None = None
    hold_changed_tools: bool | None = None
    hold_flagged_tools: bool | None = None
    remove_stale: bool | None = None
    approval: ApprovalFloor | None = None
    software: str | None = Field(default=None, pattern=SERVER_NAME_PATTERN, description=SOFTWARE_HELP)
    tools: dict[str, ToolEntry] | None = Field(
        default=None, description="Settings of the server's tools by name; a tool not discovered yet is "
        "set by the first apply after discovery finds it.")


class AllowEntry(_Strict):
    server: str
    tool: str
    fingerprint: str | None = Field(
        default=None, pattern=r"^sha256:[0-9a-f]{64}$",
        description="The definition it is pinned to; left out: the tool's current one.")


class ScopeEntry(_Strict):
    """A scope's own entries: given, each replaces the scope's whole map or list."""

    disabled: dict[str, list[str]] | None = Field(default=None, description="serverType -> disabled tool names.")
    always_allow: list[AllowEntry] | None = None


class UserEntry(_Strict):
    mode: PermissionMode


class ToolSetEntry(_Strict):
    title: str | None = None
    description: str | None = None
    members: list[ToolSetMember]


class ConfigFile(_Strict):
    """The registry as a file: what it names is made to match; what it leaves out is left alone
    (``toolvet apply --prune`` removes servers and tool sets it leaves out)."""

    version: Literal[1] = FORMAT_VERSION
    servers: dict[str, ServerEntry] = Field(default_factory=dict)
    tool_sets: dict[str, ToolSetEntry] = Field(default_factory=dict)
    scopes: dict[str, ScopeEntry] = Field(default_factory=dict)
    users: dict[str, UserEntry] = Field(default_factory=dict)


class ChangeOut(BaseModel):
    """One line of a plan: ``op`` ``+`` (add), ``-`` (remove), ``~`` (change), or ``!`` (cannot be done
    yet: a tool not discovered). Secret values never appear: a changed secret reads ``(changed)``."""

    op: Literal["+", "-", "~", "!"]
    object: str = Field(description="server:NAME, tool:SERVER/TOOL, tool_set:NAME, scope:NAME or user:NAME.")
    field: str | None = None
    before: Any = None
    after: Any = None
    note: str | None = None


class ApplyPlan(BaseModel):
    applied: bool
    changes: list[ChangeOut]


def json_schema() -> dict[str, Any]:
    """The JSON Schema of :class:`ConfigFile`, as shipped in ``services/data/config.schema.json``."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "toolvet registry file",
            **ConfigFile.model_json_schema()}
