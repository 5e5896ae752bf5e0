"""Preferences behind the approval policy (docs/policy.md): ``/users/{user}/permission-mode``,
``/scopes/{scope}/disabled`` and ``/scopes/{scope}/always-allow``. Consumer routes: camelCase bodies."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from toolvet.api.deps import ContextDep, PrincipalDep
from toolvet.schemas.policy import (
    AlwaysAllowIn,
    AlwaysAllowOut,
    DisabledIn,
    DisabledMapOut,
    PermissionModeIn,
    PermissionModeOut,
)
from toolvet.services import preferences

router = APIRouter(tags=["preferences"])


@router.get("/users/{user}/permission-mode")
def get_permission_mode(ctx: ContextDep, principal: PrincipalDep, user: str) -> PermissionModeOut:
    """The user's permission mode (``auto`` with ``default: true`` when never set)."""
    return preferences.get_permission_mode(ctx, principal, user)


@router.put("/users/{user}/permission-mode")
def set_permission_mode(
    ctx: ContextDep, principal: PrincipalDep, user: str, data: PermissionModeIn
) -> PermissionModeOut:
    """Set the user's permission mode: ``ask``, ``auto`` or ``allow``."""
    return preferences.set_permission_mode(ctx, principal, user, data.mode)


@router.get("/scopes/{scope}/disabled")
def get_disabled(ctx: ContextDep, principal: PrincipalDep, scope: str) -> DisabledMapOut:
    """The disabled map that applies in the scope, and the scope it is read from."""
    return preferences.get_disabled(ctx, principal, scope)


@router.put("/scopes/{scope}/disabled")
def set_disabled(ctx: ContextDep, principal: PrincipalDep, scope: str, data: DisabledIn) -> DisabledMapOut:
    """Replace one serverType's list; an empty list re-enables its tools."""
    return preferences.set_disabled(ctx, principal, scope, data.server_type, data.tools)


@router.get("/scopes/{scope}/always-allow")
def get_always_allow(ctx: ContextDep, principal: PrincipalDep, scope: str) -> AlwaysAllowOut:
    """The always-allow list that applies in the scope."""
    return preferences.get_always_allow(ctx, principal, scope)


@router.put("/scopes/{scope}/always-allow")
def add_always_allow(
    ctx: ContextDep, principal: PrincipalDep, scope: str, data: AlwaysAllowIn
) -> AlwaysAllowOut:
    """Add an entry, pinned to ``fingerprint`` (default: the tool's current one)."""
    return preferences.add_always_allow(
        ctx, principal, scope, data.server_type, data.tool_name, data.fingerprint
    )


@router.delete("/scopes/{scope}/always-allow")
def remove_always_allow(
    ctx: ContextDep,
    principal: PrincipalDep,
    scope: str,
    server_type: Annotated[str, Query(alias="serverType", min_length=1)],
    tool_name: Annotated[str, Query(alias="toolName", min_length=1)],
    fingerprint: Annotated[
        str | None, Query(description="Only the entry pinned to it; all when absent.")
    ] = None,
) -> AlwaysAllowOut:
    """Remove the tool's entry (or entries); answers the list as it now applies."""
    return preferences.remove_always_allow(ctx, principal, scope, server_type, tool_name, fingerprint)
