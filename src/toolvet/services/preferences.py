"""Preferences behind the approval policy (docs/policy.md): each user's permission mode, each scope's disabled
map and always-allow list, and the decision for one tool (``decide_for``).

Who may touch what: a consumer only its token's user and scope (Forbidden otherwise); operators and
admins any user and scope; readers may read them.

**A scope with no entry of its own reads ``default``.** A scope *has an entry of its own* when it holds
at least one disabled-map row (an emptied list included) or one always-allow entry. Its map and its
list fall back together, so a scope never mixes its own map with ``default``'s list. The first change
to a scope that reads ``default`` copies ``default``'s map and entries into it, then applies the change:
what the consumer saw is what it starts from. Emptying a serverType's list keeps an empty row (the
scope stays its own); removing a scope's last entry while it has no map rows makes it read ``default``
again. In ``default`` itself an emptied list is deleted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from toolvet.db.models import AlwaysAllow, ScopeDisabled, Server, UserPreference
from toolvet.db.types import utcnow
from toolvet.domain.names import HOST_SERVER
from toolvet.domain.policy import DEFAULT_MODE, PermissionMode
from toolvet.errors import Forbidden, InvalidInput, NotFound
from toolvet.schemas.policy import (
    AlwaysAllowEntryOut,
    AlwaysAllowOut,
    DecisionOut,
    DisabledMapOut,
    PermissionModeOut,
)
from toolvet.services import access, audit
from toolvet.services.auth import Permission, Principal, Role
from toolvet.services.context import Context
from toolvet.services.policy_facts import (
    DEFAULT_SCOPE,
    disabled_map,
    entries,
    gather,
    has_own_entries,
    read_tool,
    reads_from,
)

FINGERPRINT = re.compile(r"^sha256:[0-9a-f]{64}$")


# --- access ------------------------------------------------------------------------------------------


def check_access(
    principal: Principal, *, user: str | None = None, scope: str | None = None, write: bool = False
) -> None:
    """A consumer may act only for its token's user and scope; others need CONSUME to change
    preferences, READ or CONSUME to read them."""
    if principal.role is Role.CONSUMER:
        principal.require(Permission.CONSUME)
        if user is not None and user != principal.user:
            raise Forbidden(f"this token acts for user {principal.user!r}, not {user!r}")
        if scope is not None and scope != (principal.scope or DEFAULT_SCOPE):
            raise Forbidden(f"this token acts in scope {principal.scope or DEFAULT_SCOPE!r}, not {scope!r}")
        return
    if write:
        principal.require(Permission.CONSUME)
    elif not principal.can(Permission.CONSUME):
        principal.require(Permission.READ)


# --- permission modes -------------------------------------------------------------------------------


def parse_mode(value: str) -> PermissionMode:
    """The mode named ``value``; InvalidInput listing the valid values otherwise."""
    try:
        return PermissionMode(value)
    except ValueError:
        valid = ", ".join(m.value for m in PermissionMode)
        raise InvalidInput(f"{value!r} is not a permission mode; valid: {valid}", "mode") from None


def _mode_out(user: str, row: UserPreference | None) -> PermissionModeOut:
    if row is None:
        return PermissionModeOut(user=user, mode=DEFAULT_MODE, default=True)
    return PermissionModeOut(user=user, mode=PermissionMode(row.permission_mode), default=False)


def get_permission_mode(ctx: Context, principal: Principal, user: str) -> PermissionModeOut:
    """The user's mode, ``auto`` when never set."""
    check_access(principal, user=user)
    with ctx.db.transaction() as session:
        return _mode_out(user, session.get(UserPreference, user))


def set_permission_mode(ctx: Context, principal: Principal, user: str, mode: str) -> PermissionModeOut:
    """Set the user's mode (audited)."""
    check_access(principal, user=user, write=True)
    chosen = parse_mode(mode)
    with ctx.db.transaction() as session:
        row = session.get(UserPreference, user)
        before = _mode_out(user, row)
        if row is None:
            row = UserPreference(user=user, permission_mode=chosen.value)
            session.add(row)
        else:
            row.permission_mode = chosen.value
        session.flush()
        after = _mode_out(user, row)
        audit.record(session, principal, "user.permission_mode", "user", f"user:{user}", before, after)
    return after


# --- scopes -----------------------------------------------------------------------------------------


def _materialise(session: Session, scope: str) -> None:
    """Before the first change to a scope reading ``default``, copy ``default``'s entries into it."""
    if scope == DEFAULT_SCOPE or has_own_entries(session, scope):
        return
    for row in session.scalars(select(ScopeDisabled).where(ScopeDisabled.scope == DEFAULT_SCOPE)).all():
        session.add(ScopeDisabled(scope=scope, server_type=row.server_type, tool_names=list(row.tool_names)))
    for entry in entries(session, DEFAULT_SCOPE):
        session.add(
            AlwaysAllow(
                scope=scope,
                server_type=entry.server_type,
                tool_name=entry.tool_name,
                fingerprint=entry.fingerprint,
                created_at=entry.created_at,
                created_by=entry.created_by,
            )
        )
    session.flush()


def check_server_type(session: Session, server_type: str) -> None:
    """InvalidInput listing the valid serverTypes (server names plus ``toolvet``) for an unknown one."""
    if server_type == HOST_SERVER:
        return
    names = list(session.scalars(select(Server.name).order_by(Server.name)).all())
    if server_type not in names:
        valid = ", ".join([*names, HOST_SERVER])
        raise InvalidInput(f"unknown serverType {server_type!r}; valid: {valid}", "serverType")


def _disabled_out(session: Session, scope: str) -> DisabledMapOut:
    source = reads_from(session, scope)
    return DisabledMapOut(scope=scope, reads_from=source, disabled=disabled_map(session, source))


def get_disabled(ctx: Context, principal: Principal, scope: str) -> DisabledMapOut:
    """The disabled map that applies in ``scope``."""
    check_access(principal, scope=scope)
    with ctx.db.transaction() as session:
        return _disabled_out(session, scope)


def set_disabled(
    ctx: Context, principal: Principal, scope: str, server_type: str, tools: Sequence[str]
) -> DisabledMapOut:
    """Replace one serverType's list in the scope's map; an empty list re-enables its tools (audited)."""
    check_access(principal, scope=scope, write=True)
    names = sorted(set(tools))
    if any(not name for name in names):
        raise InvalidInput("tool names may not be empty", "tools")
    with ctx.db.transaction() as session:
        check_server_type(session, server_type)
        before = _disabled_out(session, scope)
        _materialise(session, scope)
        row = session.get(ScopeDisabled, (scope, server_type))
        if not names and scope == DEFAULT_SCOPE:
            if row is not None:
                session.delete(row)
        elif row is None:
            session.add(ScopeDisabled(scope=scope, server_type=server_type, tool_names=names))
        else:
            row.tool_names = names
        session.flush()
        after = _disabled_out(session, scope)
        audit.record(session, principal, "scope.disabled", "scope", f"scope:{scope}", before, after)
    return after


def _allow_out(session: Session, scope: str) -> AlwaysAllowOut:
    source = reads_from(session, scope)
    return AlwaysAllowOut(
        scope=scope,
        reads_from=source,
        entries=[
            AlwaysAllowEntryOut(
                server_type=e.server_type,
                tool_name=e.tool_name,
                fingerprint=e.fingerprint,
                created_at=e.created_at,
                created_by=e.created_by,
            )
            for e in entries(session, source)
        ],
    )


def get_always_allow(ctx: Context, principal: Principal, scope: str) -> AlwaysAllowOut:
    """The always-allow list that applies in ``scope``."""
    check_access(principal, scope=scope)
    with ctx.db.transaction() as session:
        return _allow_out(session, scope)


def _current_fingerprint(session: Session, server_type: str, tool_name: str) -> str:
    record = read_tool(session, server_type, tool_name)
    if record is None:
        raise NotFound(f"tool {server_type}/{tool_name} not found")
    return record.facts.fingerprint


def add_always_allow(
    ctx: Context,
    principal: Principal,
    scope: str,
    server_type: str,
    tool_name: str,
    fingerprint: str | None = None,
) -> AlwaysAllowOut:
    """Add an entry pinned to ``fingerprint`` (default: the tool's current one); adding one that exists
    changes nothing."""
    check_access(principal, scope=scope, write=True)
    if fingerprint is not None and not FINGERPRINT.match(fingerprint):
        raise InvalidInput(f"{fingerprint!r} does not match {FINGERPRINT.pattern}", "fingerprint")
    with ctx.db.transaction() as session:
        check_server_type(session, server_type)
        if fingerprint is None:
            fingerprint = _current_fingerprint(session, server_type, tool_name)
        before = _allow_out(session, scope)
        key = (server_type, tool_name, fingerprint)
        if before.reads_from == scope and any(
            (e.server_type, e.tool_name, e.fingerprint) == key for e in before.entries
        ):
            return before
        _materialise(session, scope)
        if (
            session.scalar(
                select(AlwaysAllow.id).where(
                    AlwaysAllow.scope == scope,
                    AlwaysAllow.server_type == server_type,
                    AlwaysAllow.tool_name == tool_name,
                    AlwaysAllow.fingerprint == fingerprint,
                )
            )
            is None
        ):
            session.add(
                AlwaysAllow(
                    scope=scope,
                    server_type=server_type,
                    tool_name=tool_name,
                    fingerprint=fingerprint,
                    created_at=utcnow(),
                    created_by=principal.actor,
                )
            )
            session.flush()
        after = _allow_out(session, scope)
        audit.record(session, principal, "scope.always_allow.add", "scope", f"scope:{scope}", before, after)
    return after


def remove_always_allow(
    ctx: Context,
    principal: Principal,
    scope: str,
    server_type: str,
    tool_name: str,
    fingerprint: str | None = None,
) -> AlwaysAllowOut:
    """Remove the tool's entry pinned to ``fingerprint``, or all of the tool's entries when it is None."""
    check_access(principal, scope=scope, write=True)
    with ctx.db.transaction() as session:
        before = _allow_out(session, scope)
        _materialise(session, scope)
        query = delete(AlwaysAllow).where(
            AlwaysAllow.scope == scope,
            AlwaysAllow.server_type == server_type,
            AlwaysAllow.tool_name == tool_name,
        )
        if fingerprint is not None:
            query = query.where(AlwaysAllow.fingerprint == fingerprint)
        if session.execute(query).rowcount == 0:  # type: ignore[attr-defined]
            pinned = f" pinned to {fingerprint}" if fingerprint else ""
            raise NotFound(f"scope {scope!r} has no always-allow entry for {server_type}/{tool_name}{pinned}")
        after = _allow_out(session, scope)
        audit.record(
            session, principal, "scope.always_allow.remove", "scope", f"scope:{scope}", before, after
        )
    return after


# --- one decision -----------------------------------------------------------------------------------


def decide_for(
    ctx: Context,
    principal: Principal | None,
    user: str,
    scope: str,
    server: str,
    tool: str,
    *,
    as_caller: bool = True,
) -> DecisionOut:
    """The approval decision for ``user`` in ``scope`` about ``server``/``tool`` (a host tool when
    ``server`` is ``toolvet``), with every reason: the one a call obeys, from the same policy facts.

    With ``as_caller`` (``POST /decide``) the decision is the one a call made with ``principal``'s
    token would get: refused, naming what is missing, when the token does not satisfy the tool's
    ``securitySchemes`` (``services.access``); ``principal`` None is a caller without a token, let in
    for a ``noauth`` tool as a call would be. Without it (``toolvet check``, which presents no token)
    what a call needs is one more reason."""
    label = f"{server}/{tool}"
    if principal is None:
        with ctx.db.transaction() as session:
            record = read_tool(session, server, tool)
        principal = access.admit(None, record.need if record is not None else access.NEEDS_TOKEN, label,
                                 anonymous=ctx.settings.anonymous_listing)
    check_access(principal, user=user, scope=scope)
    with ctx.db.transaction() as session:
        facts = gather(session, user, scope, server, tool)
        if facts is None:
            if server != HOST_SERVER and session.scalar(select(Server.id).where(Server.name == server)) is None:
                raise NotFound(f"server {server!r} not found")
            raise NotFound(f"tool {label} not found")
    mode = facts.user.mode
    context = [
        f"user {user!r} chose permission mode {mode.value}"
        if facts.user.chosen
        else f"user {user!r} has not chosen a permission mode: {mode.value}, the default"
    ]
    if facts.scope.source != scope:
        context.append(f"scope {scope!r} has no entry of its own: it reads {DEFAULT_SCOPE!r}")
    if not as_caller:
        if (needed := access.needs(facts.need)) is not None:
            context.append(needed)
    elif (refusal := access.refusal(principal, facts.need, label)) is not None:
        return DecisionOut(auto_allow=False, refused=True, reasons=[*context, refusal])
    elif (granted := access.granted(facts.need)) is not None:
        context.append(granted)
    decision = facts.decide()
    return DecisionOut(
        auto_allow=decision.auto_allow, refused=decision.refused, reasons=[*context, *decision.reasons],
        approval=decision.approval,
    )
