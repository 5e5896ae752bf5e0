"""Tools as the REST API and the CLI show and accept them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from toolvet.domain.diff import ChangeKind
from toolvet.domain.policy import ApprovalFloor, ReviewState
from toolvet.schemas.common import read_only_map, refuse_read_only

#: Set by discovery; a person may set them only on a ``manual`` server.
CLAIM_FIELDS = ("title", "description", "input_schema", "output_schema", "annotations", "icons", "meta")
TOOL_READ_ONLY = {
    **read_only_map("discovery", ("definition", "advertised_read_only", "definition_fingerprint",
                                  "first_seen_at", "last_seen_at", "retired_at", "findings")),
    **read_only_map("review (POST .../review)", ("reviewed_fingerprint", "reviewed_at", "reviewed_by")),
    **read_only_map("the registry (derived)", ("is_available", "review_state", "offered", "server",
                                               "effective_approval")),
    "name": "the registry (a tool cannot be renamed; register a new one)",
}


class ToolOut(BaseModel):
    """A tool: its claim, settings and review state under the registry's own names, plus ``server``, its server."""

    server: str
    name: str
    enabled: bool
    writable: bool
    approval: ApprovalFloor = Field(description="The operator's approval floor set on this tool.")
    effective_approval: ApprovalFloor = Field(
        description="The floor that applies: the stricter of this tool's and its server's approval.")
    title: str | None
    description: str | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    annotations: dict[str, Any] | None
    icons: list[Any] | None
    meta: dict[str, Any] | None
    definition: dict[str, Any]
    advertised_read_only: bool | None
    definition_fingerprint: str
    first_seen_at: datetime
    last_seen_at: datetime
    retired_at: datetime | None
    findings: list[dict[str, Any]]
    reviewed_fingerprint: str | None
    reviewed_at: datetime | None
    reviewed_by: str | None
    is_available: bool
    review_state: ReviewState
    offered: bool


class ToolPatch(BaseModel):
    """What a person may change on a tool: ``enabled``, ``writable`` and ``approval``; on a ``manual``
    server also the claim fields (checked by the service, which knows the server)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool | None = None
    writable: bool | None = None
    approval: ApprovalFloor | None = Field(
        default=None, description="user: the user's mode and lists decide; always: every call asks; "
        "operator: every call asks and only an operator or admin may approve it.")
    title: str | None = None
    description: str | None = None
    input_schema: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    icons: list[Any] | None = None
    meta: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _read_only(cls, data: Any) -> Any:
        return refuse_read_only(data, TOOL_READ_ONLY)


class ToolRegistration(BaseModel):
    """A tool registered by hand on a ``manual`` server (the only way to list a server never contacted)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=128)
    title: str | None = None
    description: str | None = None
    input_schema: dict[str, Any] = Field(description='JSON Schema 2020-12 with "type": "object" at the root.')
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    icons: list[Any] | None = None
    meta: dict[str, Any] | None = None
    enabled: bool | None = Field(default=None, description="Default: the server's new_tools_enabled.")
    writable: bool = True
    approval: ApprovalFloor = ApprovalFloor.USER

    @model_validator(mode="before")
    @classmethod
    def _read_only(cls, data: Any) -> Any:
        return refuse_read_only(data, {k: v for k, v in TOOL_READ_ONLY.items() if k != "name"})

    def wire_definition(self) -> dict[str, Any]:
        """The MCP wire form of this registration, as a server would have advertised it."""
        return claim_fields_to_wire(self.name, self.model_dump(include=set(CLAIM_FIELDS)))


def claim_fields_to_wire(name: str, fields: dict[str, Any]) -> dict[str, Any]:
    wire_names = {"input_schema": "inputSchema", "output_schema": "outputSchema", "meta": "_meta"}
    out: dict[str, Any] = {"name": name}
    for key, value in fields.items():
        if value is not None:
            out[wire_names.get(key, key)] = value
    return out


class ReviewCreate(BaseModel):
    """The optional body of a review: a note kept with the review record, and the operator's
    ``writable`` decision, which must be chosen again when the tool's claims moved since its last
    review (the diff's ``decision.must_choose``)."""

    model_config = ConfigDict(extra="forbid")

    note: str | None = None
    writable: bool | None = Field(
        default=None,
        description="Set the tool's writable decision with the review. Required (422 naming `writable` "
        "otherwise) when the read-only claim, annotations or required parameters changed since the "
        "definition last reviewed.")


class ReviewRecordOut(BaseModel):
    """One review of a definition: who, when, and the note they left."""

    reviewed_by: str
    reviewed_at: datetime
    note: str | None


class ClaimsOut(BaseModel):
    """What a definition claims that a writable decision looks at."""

    read_only: bool | None = Field(description="`annotations.readOnlyHint` when it is a boolean, else null.")
    annotations: dict[str, Any]
    required: list[str] = Field(description="The parameters `inputSchema.required` lists.")


class DecisionOut(BaseModel):
    """The operator's writable decision in force and what it was made on (the definition last
    reviewed) beside the current claims. ``must_choose``: a review must choose `writable` again."""

    writable: bool
    decided_on: ClaimsOut
    now: ClaimsOut
    moved: list[str] = Field(description="What changed in the claims, one sentence each.")
    must_choose: bool


class DefinitionOut(BaseModel):
    """One definition a tool has had."""

    fingerprint: str
    digest: str
    definition: dict[str, Any]
    first_seen_at: datetime
    current: bool
    reviewed: bool
    reviews: list[ReviewRecordOut] = Field(default_factory=list,
                                           description="Every review of this definition, oldest first.")


class WordSpanOut(BaseModel):
    """One run of a word-level text diff: ``=`` kept, ``-`` removed, ``+`` added."""

    op: Literal["=", "-", "+"]
    text: str


class ChangeOut(BaseModel):
    """One change between two definitions of a tool; ``path`` is dotted into the MCP wire form
    (``inputSchema.properties.bcc``), ``before``/``after`` are null where the member is absent."""

    kind: ChangeKind
    path: str
    message: str
    before: Any
    after: Any
    text_diff: str | None = Field(default=None, description="Unified diff of text members.")
    word_diff: list[WordSpanOut] | None = Field(default=None, description="Word-level diff of text members.")


class DiffOut(BaseModel):
    """What changed between an earlier definition of a tool (``before``) and its current one (``after``).

    ``compared_with`` says which earlier one: ``reviewed`` (the definition a person reviewed),
    ``previous`` (a tool never reviewed: the definition before the current one), ``against`` (the one
    asked for), or null when there is none, and then ``note`` says so."""

    server: str
    tool: str
    review_state: ReviewState
    compared_with: Literal["reviewed", "previous", "against"] | None
    before_fingerprint: str | None
    after_fingerprint: str
    before_digest: str | None
    after_digest: str
    before: dict[str, Any] | None
    after: dict[str, Any]
    changes: list[ChangeOut]
    summary: list[str]
    note: str | None
    decision: DecisionOut | None = Field(
        default=None, description="For a tool changed since its review: the writable decision and whether "
        "the claims it was made on moved (then a review must choose `writable` again).")


class DiscoveryRunOut(BaseModel):
    """One discovery pass. ``id`` is null only for a ``skipped`` pass (another process held the lease)."""

    id: int | None
    server: str
    trigger: str
    runner: str | None
    started_at: datetime
    finished_at: datetime | None
    status: str
    protocol_version: str | None
    pages: int
    added: int
    changed: int
    unchanged: int
    retired: int
    rejected: int
    rejections: list[dict[str, Any]]
    error: str | None


class AuditOut(BaseModel):
    id: int
    at: datetime
    actor: str
    action: str
    object_type: str
    object_id: str
    before: Any
    after: Any


class TokenCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: str
    name: str | None = None
    user: str | None = None
    scope: str | None = None
    oauth_scopes: list[str] = []


class TokenOut(BaseModel):
    id: int
    name: str | None
    prefix: str
    role: str
    user: str | None
    scope: str | None
    oauth_scopes: list[str]
    created_at: datetime
    created_by: str
    revoked_at: datetime | None


class TokenCreated(TokenOut):
    token: str = Field(description="The bearer token. Shown once; toolvet keeps only its hash.")
