"""The steps that make scopes' disabled maps and always-allow lists, and users' modes, match an
applied file (``services.config_apply``). Each compares with what applies now (a scope reading
``default`` is compared with ``default``'s entries), so a file that matches changes nothing."""

from __future__ import annotations

from collections.abc import Mapping, Set
from functools import partial

from toolvet.domain.names import HOST_SERVER
from toolvet.errors import InvalidInput, NotFound
from toolvet.schemas.config_file import ChangeOut, ScopeEntry, UserEntry
from toolvet.services import preferences, tools
from toolvet.services.auth import Principal
from toolvet.services.config_steps import Plan, changed
from toolvet.services.context import Context


def _normal(disabled: Mapping[str, list[str]]) -> dict[str, list[str]]:
    return {key: sorted(set(names)) for key, names in disabled.items() if names}


def _check_server_types(scope: str, entry: ScopeEntry, known: Set[str]) -> None:
    """Refuse, before anything is written, a serverType that is neither registered, in the file, nor
    toolvet's own (the preference services would refuse it mid-apply)."""
    named = [*(entry.disabled or {}), *(a.server for a in entry.always_allow or [])]
    for server_type in named:
        if server_type not in known and server_type != HOST_SERVER:
            raise InvalidInput(f"unknown serverType {server_type!r}: not registered and not in the file",
                               f"scopes.{scope}")


def scope_steps(ctx: Context, me: Principal, plan: Plan, scope: str, entry: ScopeEntry, known: Set[str]) -> None:
    """The steps for one scope; ``known`` are the server names registered or in the file."""
    _check_server_types(scope, entry, known)
    obj = f"scope:{scope}"
    if entry.disabled is not None:
        now = _normal(preferences.get_disabled(ctx, me, scope).disabled)
        wanted = _normal(entry.disabled)
        for server_type in sorted(set(now) | set(wanted)):
            before, after = now.get(server_type, []), wanted.get(server_type, [])
            if before != after:
                plan.add([changed(obj, f"disabled.{server_type}", before, after)],
                         partial(preferences.set_disabled, ctx, me, scope, server_type, after))
    if entry.always_allow is not None:
        current = {(e.server_type, e.tool_name, e.fingerprint)
                   for e in preferences.get_always_allow(ctx, me, scope).entries}
        wanted_entries: set[tuple[str, str, str]] = set()
        for allow in entry.always_allow:
            fingerprint = allow.fingerprint
            if fingerprint is None:
                try:
                    fingerprint = tools.get_tool(ctx, me, allow.server, allow.tool).definition_fingerprint
                except NotFound:
                    plan.add([ChangeOut(op="!", object=obj, field="always_allow", after=f"{allow.server}/{allow.tool}",
                                        note="tool not discovered yet: an apply after discovery adds it")])
                    continue
            wanted_entries.add((allow.server, allow.tool, fingerprint))
        for server, tool, fingerprint in sorted(wanted_entries - current):
            plan.add([ChangeOut(op="+", object=obj, field="always_allow", after=f"{server}/{tool} {fingerprint}")],
                     partial(preferences.add_always_allow, ctx, me, scope, server, tool, fingerprint))
        for server, tool, fingerprint in sorted(current - wanted_entries):
            plan.add([ChangeOut(op="-", object=obj, field="always_allow", before=f"{server}/{tool} {fingerprint}")],
                     partial(preferences.remove_always_allow, ctx, me, scope, server, tool, fingerprint))


def user_steps(ctx: Context, me: Principal, plan: Plan, user: str, entry: UserEntry) -> None:
    now = preferences.get_permission_mode(ctx, me, user)
    before = None if now.default else now.mode.value  # never chosen: set, even to the default's value
    if before != entry.mode.value:
        plan.add([changed(f"user:{user}", "mode", before, entry.mode.value)],
                 lambda: preferences.set_permission_mode(ctx, me, user, entry.mode.value))
