"""``toolvet export``: the registry as the file ``toolvet apply`` reads (docs/config.md).

Every server with its settings and its tools' settings, every tool set, every scope with entries of
its own, every user who chose a mode. Secrets are never written: each header and env var is a
reference, ``${TOOLVET_SECRET_<SERVER>_<NAME>}``, which the environment of the apply must set (the
file's opening comment lists them)."""

from __future__ import annotations

import re
from typing import Any

import yaml
from sqlalchemy import select, union

from toolvet.db.models import AlwaysAllow, ScopeDisabled, UserPreference
from toolvet.schemas.config_file import (
    AllowEntry,
    ConfigFile,
    ScopeEntry,
    ServerEntry,
    ToolEntry,
    ToolSetEntry,
    UserEntry,
)
from toolvet.schemas.servers import ServerOut, Transport
from toolvet.services import preferences, tools
from toolvet.services.auth import Permission, Principal
from toolvet.services.config_apply import all_servers, all_tool_sets
from toolvet.services.context import Context


def secret_variable(server: str, name: str) -> str:
    """The environment variable an export names for one secret: ``TOOLVET_SECRET_GITHUB_AUTHORIZATION``."""
    return "TOOLVET_SECRET_" + re.sub(r"[^A-Z0-9]+", "_", f"{server}_{name}".upper()).strip("_")


def _server(ctx: Context, me: Principal, out: ServerOut) -> ServerEntry:
    refs = {kind: {n: "${" + secret_variable(out.name, n) + "}" for n in names}
            for kind, names in (("headers", out.header_names), ("env", out.env_names)) if names}
    stdio = out.transport is Transport.STDIO
    listed = tools.list_tools(ctx, me, server=out.name, limit=10**6).items
    return ServerEntry(
        title=out.title, transport=out.transport, url=out.url, command=out.command,
        args=out.args if stdio else None, cwd=out.cwd, **refs, enabled=out.enabled, discovery=out.discovery,
        trust_annotations=out.trust_annotations, new_tools_enabled=out.new_tools_enabled,
        hold_changed_tools=out.hold_changed_tools, hold_flagged_tools=out.hold_flagged_tools,
        remove_stale=out.remove_stale, approval=out.approval, software=out.software,
        tools={t.name: ToolEntry(enabled=t.enabled, writable=t.writable, approval=t.approval) for t in listed} or None,
    )


def export_config(ctx: Context, me: Principal) -> ConfigFile:
    """The registry as a :class:`ConfigFile`."""
    me.require(Permission.READ)
    config = ConfigFile()
    for name, out in all_servers(ctx, me).items():
        config.servers[name] = _server(ctx, me, out)
    for name, tool_set in all_tool_sets(ctx, me).items():
        config.tool_sets[name] = ToolSetEntry(title=tool_set.title, description=tool_set.description,
                                              members=tool_set.members)
    with ctx.db.transaction() as session:
        scopes = sorted(session.scalars(union(select(ScopeDisabled.scope), select(AlwaysAllow.scope))).all())
        modes = session.execute(select(UserPreference.user, UserPreference.permission_mode)
                                .order_by(UserPreference.user)).all()
    for scope in scopes:
        disabled = preferences.get_disabled(ctx, me, scope).disabled
        allowed = preferences.get_always_allow(ctx, me, scope).entries
        config.scopes[scope] = ScopeEntry(
            disabled={k: v for k, v in sorted(disabled.items())},
            always_allow=[AllowEntry(server=e.server_type, tool=e.tool_name, fingerprint=e.fingerprint)
                          for e in allowed])
    for user, mode in modes:
        config.users[user] = UserEntry.model_validate({"mode": mode})
    return config


def to_yaml(config: ConfigFile) -> str:
    """The file's text: YAML with an opening comment naming the secrets the apply's environment sets."""
    data: dict[str, Any] = config.model_dump(mode="json", exclude_none=True)
    needed = sorted({v[2:-1] for entry in config.servers.values()
                     for v in [*(entry.headers or {}).values(), *(entry.env or {}).values()]})
    head = "# toolvet registry (toolvet apply -f FILE makes a registry match it)\n"
    if needed:
        head += "# secrets by reference; set these in the environment of the apply:\n"
        head += "".join(f"#   {name}\n" for name in needed)
    return head + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120)
