"""Calls through toolvet: what a consumer asks for, and what became of it."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from toolvet.domain.policy import ApprovalFloor


class CallStatus(StrEnum):
    PENDING = "pending"      # waiting for an approver
    APPROVED = "approved"    # approved, about to run
    RUNNING = "running"
    DONE = "done"            # ran; ``result`` is the tool's result (which may itself be an error result)
    FAILED = "failed"        # could not run: upstream down, timed out, or broke its output schema
    INVALID = "invalid"      # arguments did not match the input schema; nothing went upstream
    DENIED = "denied"
    EXPIRED = "expired"
    CANCELLED = "cancelled"  # the caller gave up while it ran; the upstream was told to stop


TERMINAL = frozenset({CallStatus.DONE, CallStatus.FAILED, CallStatus.INVALID, CallStatus.DENIED,
                      CallStatus.EXPIRED, CallStatus.CANCELLED})


class CallCreate(BaseModel):
    """A call. A consumer token's user and scope are used when these are absent (and must match when
    given); operators name them."""

    model_config = ConfigDict(extra="forbid")

    server_type: str = Field(description="The server's name, or `toolvet` for host tools.")
    tool_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    user: str | None = None
    scope: str | None = None


class CallOut(BaseModel):
    """One call and its fate. ``result`` is the MCP ``CallToolResult`` (as JSON) once it ran, or the
    error result toolvet answered with."""

    id: str
    user: str
    scope: str
    server_type: str
    tool_name: str
    arguments: dict[str, Any]
    fingerprint: str
    status: CallStatus
    auto_allow: bool
    reasons: list[str]
    created_at: datetime
    expires_at: datetime | None
    decided_by: str | None
    decided_at: datetime | None
    allow_always: bool
    approval: ApprovalFloor = Field(
        default=ApprovalFloor.USER,
        description="The approval floor the call was decided under. operator: only an operator or an admin "
        "may approve it, not the call's own consumer token.")
    result: dict[str, Any] | None
    error: str | None
    orphaned: bool = Field(
        default=False, description="Pending, and the process that waited on it for its client stopped saying "
        "it waits (it died, or the client went away): approved, it runs once and its outcome waits for the "
        "client's retry.")


class ApproveIn(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    allow_always: bool = Field(default=False, alias="allowAlways",
                               description="Also store an always-allow entry pinned to the approved fingerprint.")
