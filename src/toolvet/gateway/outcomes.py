"""What an MCP client gets back for a call through toolvet (docs/gateway.md#calls), and the elicitation form.

A call that ran answers the upstream's own result; one that could not run (invalid arguments, upstream
failure, denied, expired) answers the error result CallService made, and one still waiting for an
approver answers an ``isError`` result that says which call waits, how to approve it and until when,
so the model can tell its user.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final, Literal

import mcp.types as types
from pydantic import ValidationError

from toolvet.domain.policy import ApprovalFloor
from toolvet.schemas.calls import CallOut, CallStatus
from toolvet.services.calls import error_result

SERVER_INFO_KEY: Final = "io.modelcontextprotocol/serverInfo"
Answer = Literal["allow", "always", "deny"]

#: The form a handshake-era client shows its user when a call needs approval.
DECISION_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "decision": {
            "type": "string",
            "title": "Decision",
            "description": "allow: run it this once; always: run it and stop asking for this tool "
            "(until its definition changes); deny: do not run it",
            "enum": ["allow", "always", "deny"],
        },
    },
    "required": ["decision"],
}


def question(call: CallOut) -> str:
    """The elicitation message for a call."""
    return f"Allow {call.server_type}/{call.tool_name} with these arguments? {_brief(call.arguments)}"


def _brief(arguments: Mapping[str, Any], limit: int = 500) -> str:
    text = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + "…"


def answer_of(result: types.ElicitResult) -> Answer:
    """Map the client's answer: accept + allow/always runs, anything else (deny, decline, cancel) denies."""
    if result.action != "accept":
        return "deny"
    decision = (result.content or {}).get("decision")
    if decision == "allow":
        return "allow"
    if decision == "always":
        return "always"
    return "deny"


def approvers(call: CallOut) -> str:
    """Who may approve the call, in words (docs/policy.md, "Who approves a call")."""
    if call.approval is ApprovalFloor.OPERATOR:
        return ("only an operator or an admin may approve it (the tool's approval floor is operator; "
                "the consumer token that made the call may not)")
    return (f"the consumer token that made it (user {call.user}, scope {call.scope}) may approve it, "
            "and so may an operator or an admin")


def pending_text(call: CallOut) -> str:
    """What the model is told about a call still waiting for an approver, naming who may approve it."""
    until = call.expires_at.isoformat() if call.expires_at else "it expires"
    return (
        f"Call {call.id} to {call.server_type}/{call.tool_name} is waiting for an approver: {approvers(call)}. "
        f"Approve it with POST /api/v1/calls/{call.id}/approve (or in the toolvet console) before {until}; "
        f"it then runs, and its result is at GET /api/v1/calls/{call.id}."
    )


def result_of(call: CallOut, *, modern: bool) -> dict[str, Any]:
    """The MCP result for a call's outcome, shaped for the client's era, as its wire dict.

    It is checked against ``CallToolResult`` here (a malformed upstream result becomes an error
    result that says so) and handed to the SDK as the dict: the SDK validates and shapes a dict for
    the negotiated version itself, so returning the model only added a dump of it per call.
    """
    if call.status is CallStatus.PENDING or (call.status in (CallStatus.APPROVED, CallStatus.RUNNING)):
        raw: dict[str, Any] = error_result(pending_text(call))
    elif call.status is CallStatus.EXPIRED:
        raw = error_result(f"call {call.id} expired before an approver decided it")
    else:
        raw = call.result or error_result(call.error or f"call {call.id} ended {call.status.value}")
    if not modern and "structuredContent" in raw and not isinstance(raw["structuredContent"], dict):
        # A handshake-era client was listed this tool without its (non-object) outputSchema: the
        # structured value would break its result, the text content still carries it.
        raw = {k: v for k, v in raw.items() if k != "structuredContent"}
    meta = raw.get("_meta")
    if isinstance(meta, dict) and SERVER_INFO_KEY in meta:
        # The upstream's identity stamp: the client is talking to toolvet, which stamps its own.
        raw = {**raw, "_meta": {k: v for k, v in meta.items() if k != SERVER_INFO_KEY}}
    try:
        types.CallToolResult.model_validate(raw)
    except ValidationError as exc:
        raw = error_result(f"{call.server_type}/{call.tool_name} returned a malformed result: {exc.errors()[0]['msg']}")
    # 2026-07-28 results name their type; the model's dump filled the default, a dict must carry it.
    return {"resultType": "complete", **raw} if modern else raw
