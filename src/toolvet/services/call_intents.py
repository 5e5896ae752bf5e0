"""A call's intent: who asked for what, so that a retry resumes the call it repeats.

A pending call belongs to its caller: the token that made it, the user and scope it is made for, the
tool, its arguments, and the client's own identity: its handshake-era MCP session, the JSON-RPC id
of a 2026-07-28 request, or the ``Idempotency-Key`` of a REST call. Their digest is the call's
``intent``; at most one pending call has a given intent (a unique index), so a client that asks
again, because the replica it waited on died or because its request timed out, waits on the call
it already made instead of making another, and one approval runs it once. A call whose client gave
no identity (a REST call without the header) has no intent: two such calls are two calls.

The replica that waits on a pending call says so every :data:`HEARTBEAT_SECONDS` (``waited_at``);
a pending call whose waiter has not said so for :data:`ORPHANED_SECONDS` is orphaned. An orphaned
call is decided like any other: approved, it runs once, on the approving replica, and its outcome is
kept undelivered until the caller's retry collects it (within ``approval_ttl``), instead of running
the tool again.
"""

from __future__ import annotations

import hashlib
import json
from typing import Final

from toolvet.domain.fingerprint import canonical_json
from toolvet.schemas.calls import CallOut
from toolvet.services.auth import Principal

__all__ = ["HEARTBEAT_SECONDS", "ORPHANED_SECONDS", "digest"]

#: How often a waiting process says it still waits.
HEARTBEAT_SECONDS: Final = 5.0
#: How long a pending call's waiter may be silent before the call counts as orphaned.
ORPHANED_SECONDS: Final = 15.0


def digest(principal: Principal, call: CallOut, caller: str = "") -> str:
    """The intent of ``call`` made by ``principal`` from the client identity ``caller``."""
    what = {"actor": principal.actor, "user": call.user, "scope": call.scope, "server": call.server_type,
            "tool": call.tool_name, "arguments": call.arguments, "caller": caller}
    try:
        canonical = canonical_json(what)
    except ValueError:  # arguments JCS cannot write (an integer beyond 2**53): any one spelling serves
        canonical = json.dumps(what, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(canonical).hexdigest()
