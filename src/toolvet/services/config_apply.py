"""``toolvet apply -f FILE``: make the registry match a file (docs/config.md), idempotently.

:func:`apply_config` reads the file (YAML or JSON; checked against the shipped JSON Schema, then
:class:`~toolvet.schemas.config_file.ConfigFile`), compares it with the registry and returns the plan:
one line per difference. Unless it is a dry run it then carries the plan out, step by step, through
the same services a person's edits go through (so each change is checked and audited as theirs);
a file that matches the registry makes an empty plan. A failing step stops the apply with its
error; the steps before it stay done, and applying again carries on from there.

Secrets (headers, env) are given by reference only (``services.references``) and compared with the
stored values opened in memory; a plan says a secret changed, never what it is.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import cache, partial
from importlib import resources
from pathlib import Path
from typing import Any, Final, Protocol, TypeVar

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from pydantic import ValidationError
from sqlalchemy import select

from toolvet.db.models import Server
from toolvet.errors import InvalidInput, NotFound
from toolvet.schemas.common import Page
from toolvet.schemas.config_file import ApplyPlan, ChangeOut, ConfigFile, ServerEntry, ToolEntry
from toolvet.schemas.servers import ServerOut
from toolvet.schemas.tool_sets import ToolSetOut
from toolvet.services import servers, tool_sets, tools
from toolvet.services.auth import Principal
from toolvet.services.config_policy import scope_steps, user_steps
from toolvet.services.config_steps import Plan, changed
from toolvet.services.context import Context
from toolvet.services.references import Unresolved, expand, is_reference
from toolvet.services.servers import invalid_from

MAX_FILE_BYTES: Final = 4 * 1024 * 1024
#: Server fields compared as they are (the secrets and the tools are compared apart).
PLAIN_FIELDS: Final = ("title", "transport", "url", "command", "args", "cwd", "enabled", "discovery",
                       "trust_annotations", "new_tools_enabled", "hold_changed_tools", "hold_flagged_tools",
                       "remove_stale", "approval", "software")
TOOL_FIELDS: Final = ("enabled", "writable", "approval")
PAGE: Final = 500


class _Named(Protocol):
    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=_Named)


def config_schema() -> dict[str, Any]:
    """The shipped JSON Schema of the file."""
    return dict(_schema())


@cache
def _schema() -> dict[str, Any]:
    text = (resources.files("toolvet") / "services" / "data" / "config.schema.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def parse_config(text: str, source: str = "the file") -> ConfigFile:
    """The file's content (YAML, of which JSON is a part) checked against the schema and read."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InvalidInput(f"{source} is not YAML: {exc}", "-f") from None
    error = best_match(Draft202012Validator(_schema()).iter_errors(document))
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path) or None
        raise InvalidInput(f"{source} does not match the toolvet config schema: {error.message}", where)
    try:
        return ConfigFile.model_validate(document)
    except ValidationError as exc:
        raise invalid_from(exc) from None


def read_config(path: Path) -> ConfigFile:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise InvalidInput(f"{path} is over {MAX_FILE_BYTES} bytes", "-f")
        text = path.read_text("utf-8")
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}", "-f") from None
    return parse_config(text, str(path))


def _secrets(
    kind: str, server: str, given: Mapping[str, str], environ: Mapping[str, str], base: Path
) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in given.items():
        where = f"servers.{server}.{kind}.{key}"
        if not is_reference(value):
            raise InvalidInput("give secrets by reference (${ENV_VAR} or ${file:PATH}), never inline", where)
        try:
            out[key] = expand(value, environ, base)
        except Unresolved as exc:
            raise InvalidInput(str(exc), where) from None
    return out


def _stored_secrets(ctx: Context, name: str) -> tuple[dict[str, str], dict[str, str]]:
    with ctx.db.transaction() as session:
        row = session.execute(select(Server.headers_secret, Server.env_secret).where(Server.name == name)).one()
    return ctx.secrets.open(row[0]), ctx.secrets.open(row[1])


def _plain(value: Any) -> Any:
    return getattr(value, "value", value)


def _server_fields(entry: ServerEntry) -> dict[str, Any]:
    return {k: _plain(v) for k, v in entry.model_dump(exclude_unset=True, exclude={"tools"}).items()
            if k in PLAIN_FIELDS}


def _secret_change(obj: str, kind: str, before: Mapping[str, str], after: Mapping[str, str]) -> ChangeOut | None:
    if dict(before) == dict(after):
        return None
    differ = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    return ChangeOut(op="~", object=obj, field=kind, before=sorted(before), after=sorted(after),
                     note=f"values changed: {', '.join(differ)}" if differ else None)


def _server_steps(ctx: Context, me: Principal, plan: Plan, name: str, entry: ServerEntry, now: ServerOut | None,
                  environ: Mapping[str, str], base: Path) -> None:
    obj = f"server:{name}"
    fields = _server_fields(entry)
    secrets = {kind: _secrets(kind, name, given, environ, base)
               for kind, given in (("headers", entry.headers), ("env", entry.env)) if given is not None}
    if now is None:
        data = {"name": name, **fields, **secrets}
        endpoint = fields.get("url") or fields.get("command")
        plan.add([ChangeOut(op="+", object=obj, after=endpoint)], partial(servers.create_server, ctx, me, data))
        return
    lines: list[ChangeOut] = []
    patch: dict[str, Any] = {}
    for key, value in fields.items():
        current = _plain(getattr(now, key))
        if current != value:
            lines.append(changed(obj, key, current, value))
            patch[key] = value
    stored = dict(zip(("headers", "env"), _stored_secrets(ctx, name), strict=True))
    for kind, wanted in secrets.items():
        if (line := _secret_change(obj, kind, stored[kind], wanted)) is not None:
            lines.append(line)
            patch[kind] = wanted
    plan.add(lines, partial(servers.update_server, ctx, me, name, patch))


def _tool_steps(ctx: Context, me: Principal, plan: Plan, server: str, wanted: Mapping[str, ToolEntry],
                known: bool) -> None:
    have = {t.name: t for t in tools.list_tools(ctx, me, server=server, limit=10**6).items} if known else {}
    for name, entry in wanted.items():
        obj = f"tool:{server}/{name}"
        tool = have.get(name)
        fields = {k: _plain(v) for k, v in entry.model_dump(exclude_unset=True).items()}
        if tool is None:
            if fields:
                plan.add([ChangeOut(op="!", object=obj, after=fields,
                                    note="not discovered yet: an apply after discovery sets it")])
            continue
        now = {k: _plain(getattr(tool, k)) for k in fields}
        lines = [changed(obj, k, now[k], v) for k, v in fields.items() if now[k] != v]
        patch = {k: v for k, v in fields.items() if now[k] != v}
        plan.add(lines, partial(tools.update_tool, ctx, me, server, name, patch))


def _set_fields(out: ToolSetOut) -> dict[str, Any]:
    return {"title": out.title, "description": out.description,
            "members": [m.model_dump(mode="json") for m in out.members]}


def _every(read: Callable[..., Page[T]], ctx: Context, me: Principal) -> dict[str, T]:
    """Every item of a paged service read, by name."""
    found: dict[str, T] = {}
    while True:
        page = read(ctx, me, limit=PAGE, offset=len(found))
        found.update((item.name, item) for item in page.items)
        if not page.items or len(found) >= page.total:
            return found


def all_servers(ctx: Context, me: Principal) -> dict[str, ServerOut]:
    return _every(servers.list_servers, ctx, me)


def all_tool_sets(ctx: Context, me: Principal) -> dict[str, ToolSetOut]:
    return _every(tool_sets.list_tool_sets, ctx, me)


def make_plan(ctx: Context, me: Principal, config: ConfigFile, *, environ: Mapping[str, str], base: Path,
              prune: bool = False) -> Plan:
    """The steps that make the registry match ``config`` (nothing is written)."""
    plan = Plan()
    registered = all_servers(ctx, me)
    for name, entry in config.servers.items():
        _server_steps(ctx, me, plan, name, entry, registered.get(name), environ, base)
    for name, entry in config.servers.items():
        _tool_steps(ctx, me, plan, name, entry.tools or {}, name in registered)
    sets = all_tool_sets(ctx, me)
    for name, set_entry in config.tool_sets.items():
        wanted = set_entry.model_dump(mode="json")
        now = sets.get(name)
        if now is None:
            plan.add([ChangeOut(op="+", object=f"tool_set:{name}", after=[_member(m) for m in wanted["members"]])],
                     partial(tool_sets.put_tool_set, ctx, me, name, wanted))
        elif (before := _set_fields(now)) != wanted:
            lines = [changed(f"tool_set:{name}", k, before[k], wanted[k]) for k in wanted if before[k] != wanted[k]]
            plan.add(lines, partial(tool_sets.put_tool_set, ctx, me, name, wanted))
    for scope, scope_entry in config.scopes.items():
        scope_steps(ctx, me, plan, scope, scope_entry, set(registered) | set(config.servers))
    for user, user_entry in config.users.items():
        user_steps(ctx, me, plan, user, user_entry)
    if prune:
        for name in sorted(set(sets) - set(config.tool_sets)):
            plan.add([ChangeOut(op="-", object=f"tool_set:{name}")],
                     partial(tool_sets.delete_tool_set, ctx, me, name))
        for name in sorted(set(registered) - set(config.servers)):
            plan.add([ChangeOut(op="-", object=f"server:{name}", before=registered[name].tool_count,
                                note="with its tools")],
                     partial(servers.delete_server, ctx, me, name))
    return plan


def _member(member: Mapping[str, Any]) -> str:
    return f"{member['server']}/{member['tool']}" if member.get("tool") else str(member["server"])


def apply_config(ctx: Context, me: Principal, config: ConfigFile, *, environ: Mapping[str, str], base: Path,
                 dry_run: bool = False, prune: bool = False) -> ApplyPlan:
    """Plan, and unless ``dry_run`` carry out, the changes that make the registry match ``config``."""
    plan = make_plan(ctx, me, config, environ=environ, base=base, prune=prune)
    if not dry_run:
        for step in plan.steps:
            if step.run is not None:
                try:
                    step.run()
                except NotFound as exc:  # removed meanwhile by someone else: say which step
                    raise NotFound(f"{step.changes[0].object}: {exc.message}") from None
    return ApplyPlan(applied=not dry_run, changes=plan.changes())
