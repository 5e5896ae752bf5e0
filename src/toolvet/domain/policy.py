"""Who may run what: availability, review state and what is offered (SPEC §3)."""

from __future__ import annotations

from enum import StrEnum


class ReviewState(StrEnum):
    UNREVIEWED = "unreviewed"
    REVIEWED = "reviewed"
    CHANGED = "changed"


def is_available(tool_enabled: bool, server_enabled: bool) -> bool:
    """A tool is on offer only when it and its server are both enabled (seed mcp-tool)."""
    return tool_enabled and server_enabled


def review_state(reviewed_fingerprint: str | None, current_fingerprint: str) -> ReviewState:
    """``changed`` once the contract moved away from the fingerprint a person reviewed."""
    if reviewed_fingerprint is None:
        return ReviewState.UNREVIEWED
    if reviewed_fingerprint == current_fingerprint:
        return ReviewState.REVIEWED
    return ReviewState.CHANGED


def offered(available: bool, state: ReviewState, hold_changed_tools: bool) -> bool:
    """Available, and not a changed contract held for review."""
    return available and not (state is ReviewState.CHANGED and hold_changed_tools)
