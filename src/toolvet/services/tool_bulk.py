"""One action on many tools at once (the console's tools list): enable, disable or review each selected
tool through the same service function one tool's change uses, so each gets its own audit entry and
whatever that function refuses for one tool is refused here too (and named), not skipped silently."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from toolvet.errors import InvalidInput, ToolvetError
from toolvet.services import review, tools
from toolvet.services.auth import Permission, Principal
from toolvet.services.context import Context

ACTIONS: Final = ("enable", "disable", "review")
#: Most tools one action takes (a page of the list at its largest).
MAX_TOOLS: Final = 1000


@dataclass
class BulkOutcome:
    action: str
    done: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (SERVER/TOOL, why)


def apply(ctx: Context, principal: Principal, action: str, addresses: Sequence[str],
          note: str | None = None) -> BulkOutcome:
    """Apply ``action`` to every ``SERVER/TOOL`` of ``addresses``, each in its own transaction."""
    if action not in ACTIONS:
        raise InvalidInput(f"must be one of {', '.join(ACTIONS)}", "action")
    if not addresses:
        raise InvalidInput("select at least one tool", "tools")
    if len(addresses) > MAX_TOOLS:
        raise InvalidInput(f"at most {MAX_TOOLS} tools at once", "tools")
    principal.require(Permission.REVIEW if action == "review" else Permission.MANAGE_TOOLS)
    outcome = BulkOutcome(action)
    for address in dict.fromkeys(addresses):  # each once, in the order given
        try:
            server, name = tools.split_address(address)
            if action == "review":
                review.review_tool(ctx, principal, server, name, note)
            else:
                tools.update_tool(ctx, principal, server, name, {"enabled": action == "enable"})
        except ToolvetError as exc:
            outcome.failed.append((address, exc.message))
        else:
            outcome.done.append(address)
    return outcome
