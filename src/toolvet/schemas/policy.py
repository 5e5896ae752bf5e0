"""The approval policy as consumers see it (docs/policy.md): permission modes, a scope's disabled map and
always-allow list, decisions, and the AiMCPItem descriptors of the catalog.

Consumer representations are camelCase; bodies are also accepted in snake_case."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.alias_generators import to_camel

from toolvet.domain.policy import ApprovalFloor, PermissionMode


class _Camel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, serialize_by_alias=True)


class _CamelInput(_Camel):
    model_config = ConfigDict(extra="forbid")


class PermissionModeOut(_Camel):
    """A user's permission mode; ``default`` is true when the user never set one (``auto``)."""

    user: str
    mode: PermissionMode
    default: bool


class PermissionModeIn(_CamelInput):
    """``PUT /users/{user}/permission-mode``. The mode is checked by the service, which names the valid
    values."""

    mode: str


class DisabledMapOut(_Camel):
    """A scope's disabled map ``{serverType: [toolName]}`` as it applies, and where it is read from:
    ``readsFrom`` is the scope itself, or ``default`` for a scope with no entry of its own."""

    scope: str
    reads_from: str
    disabled: dict[str, list[str]]


class DisabledIn(_CamelInput):
    """``PUT /scopes/{scope}/disabled``: replace one serverType's list (an empty list re-enables it)."""

    server_type: str = Field(min_length=1)
    tools: list[str]


class AlwaysAllowEntryOut(_Camel):
    server_type: str
    tool_name: str
    fingerprint: str
    created_at: datetime
    created_by: str


class AlwaysAllowOut(_Camel):
    """A scope's always-allow list as it applies (``readsFrom`` as for the disabled map)."""

    scope: str
    reads_from: str
    entries: list[AlwaysAllowEntryOut]


class AlwaysAllowIn(_CamelInput):
    """``PUT /scopes/{scope}/always-allow``: add an entry; ``fingerprint`` defaults to the tool's current
    one."""

    server_type: str = Field(min_length=1)
    tool_name: str = Field(min_length=1)
    fingerprint: str | None = None


class DecideIn(_CamelInput):
    """``POST /decide``: the approval decision for a user in a scope about one tool."""

    user: str = Field(min_length=1)
    scope: str = Field(min_length=1)
    server_type: str = Field(min_length=1)
    tool_name: str = Field(min_length=1)


class DecisionOut(_Camel):
    """A decision and every reason weighed, each a short sentence."""

    auto_allow: bool
    refused: bool
    reasons: list[str]
    approval: ApprovalFloor = Field(
        default=ApprovalFloor.USER,
        description="The operator's approval floor that applies (the stricter of the tool's and its server's).")


class AiMCPItem(_Camel):
    """A tool descriptor for consumers (AiMCPItem). Absent members are ``None`` here and
    omitted on the wire: serialise with ``catalog_json`` (``exclude_none``), which keeps
    ``requireApproval: false`` and leaves the verbatim members' own nulls alone."""

    name: str
    description: str
    input_schema: dict[str, Any]
    enabled: bool
    server_type: str
    require_approval: bool | None = None
    annotations: dict[str, Any] | None = None
    title: str | None = None
    output_schema: dict[str, Any] | None = None
    icons: list[Any] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


CATALOG = TypeAdapter(list[AiMCPItem])


#: (attribute, wire name) of a descriptor, in the order they are sent.
_WIRE = tuple((name, field.alias or name) for name, field in AiMCPItem.model_fields.items())


def catalog_json(items: list[AiMCPItem]) -> bytes:
    """The catalog as the REST API sends it: camelCase, absent members omitted, the verbatim members'
    own nulls kept.

    Built as plain dicts for the C JSON encoder: pydantic's ``dump_json`` of the same items (their
    schemas are ``Any``, inspected value by value) took twice as long as serving the raw rows."""
    return json.dumps(
        [{wire: value for attr, wire in _WIRE if (value := getattr(item, attr)) is not None} for item in items],
        ensure_ascii=False, separators=(",", ":"),
    ).encode()
