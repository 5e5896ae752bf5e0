"""What one approval decision reads besides the tool: a user's mode and a scope's map and list, with
the ``default`` fallback of ``services.preferences``. Used by the call path, which caches them."""

from __future__ import annotations

from toolvet.db.models import UserPreference
from toolvet.domain.policy import DEFAULT_MODE, AllowEntry, AllowIndex, PermissionMode
from toolvet.services.context import Context
from toolvet.services.preferences import add_always_allow, disabled_map, entries, reads_from


def permission_mode(ctx: Context, user: str) -> PermissionMode:
    """The user's mode, ``auto`` when they chose none."""
    with ctx.db.transaction() as session:
        row = session.get(UserPreference, user)
        return DEFAULT_MODE if row is None else PermissionMode(row.permission_mode)


def scope_policy(ctx: Context, scope: str) -> tuple[dict[str, set[str]], AllowIndex]:
    """The disabled map and always-allow index that apply in ``scope`` (its own, else ``default``'s)."""
    with ctx.db.transaction() as session:
        source = reads_from(session, scope)
        disabled = {server_type: set(names) for server_type, names in disabled_map(session, source).items()}
        index = AllowIndex(AllowEntry(e.server_type, e.tool_name, e.fingerprint) for e in entries(session, source))
    return disabled, index


__all__ = ["add_always_allow", "permission_mode", "scope_policy"]
