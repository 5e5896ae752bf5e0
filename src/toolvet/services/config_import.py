"""``toolvet import FILE``: the servers of an MCP client's config file or of the registry's
``server.json``, registered as they are written there.

:func:`plan_import` reads the file and says, entry by entry, what would happen (``create``, ``exists``:
a server of that name is registered and is left alone, ``skip``: the entry cannot be registered as
written, and why); :func:`run_import` does it, each server through ``services.servers.create_server``,
so each is checked, sealed and audited like one a person adds. Names are made valid server names
(lowercase letters, digits and '-', at most 32) and made unique in the file; the plan says which
changed. Secrets are carried only inside the server fields and shown only as their names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from pydantic import ValidationError
from sqlalchemy import select

from toolvet.db.models import Server
from toolvet.domain.names import RESERVED_SERVER_NAMES, server_name_problem
from toolvet.errors import InvalidInput
from toolvet.schemas.imports import ImportAction, ImportItem, ImportPlan
from toolvet.schemas.servers import ServerCreate, Transport
from toolvet.services import servers
from toolvet.services.auth import Permission, Principal
from toolvet.services.client_configs import Entry, client_entries, client_kind
from toolvet.services.context import Context
from toolvet.services.registry_entries import registry_documents, registry_entry

#: Largest file ``toolvet import`` reads: far past any client's config file.
MAX_FILE_BYTES: Final = 4 * 1024 * 1024
MAX_NAME: Final = 32


def read_document(path: Path) -> Any:
    """The file's JSON (JSON with comments, as VS Code writes it, is refused with a clear message)."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}", "FILE") from None
    if size > MAX_FILE_BYTES:
        raise InvalidInput(f"{path} is over {MAX_FILE_BYTES} bytes", "FILE")
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"{path} is not JSON ({exc}); remove comments and trailing commas", "FILE") from None


def valid_name(source: str) -> str:
    """A server name for ``source``: lowercased, other characters as '-', at most 32 long."""
    name = re.sub(r"[^a-z0-9]+", "-", source.lower()).strip("-")[:MAX_NAME].strip("-") or "server"
    if name in RESERVED_SERVER_NAMES:
        name = f"{name}-server"
    return name


def _unique(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    for n in range(2, 1000):
        suffix = f"-{n}"
        candidate = name[: MAX_NAME - len(suffix)].rstrip("-") + suffix
        if candidate not in taken:
            return candidate
    raise InvalidInput("too many entries of the same name", "FILE")


def _entries(document: Any, environ: Mapping[str, str], base: Path) -> tuple[str, list[Entry]]:
    kind = client_kind(document)
    if kind is not None:
        return kind, client_entries(document, environ, base)
    documents = registry_documents(document)
    if documents is not None:
        return "registry", [registry_entry(d, environ) for d in documents]
    raise InvalidInput("not a file toolvet imports: expected mcpServers (Claude Desktop, Claude Code, Cursor), "
                       "servers (VS Code) or the MCP registry's server.json", "FILE")


def _item(entry: Entry, name: str, action: ImportAction, reason: str | None) -> ImportItem:
    fields = entry.fields
    transport = fields.get("transport")
    return ImportItem(
        source=entry.source, name=name, renamed=name != entry.source,
        transport=Transport(transport) if transport in set(Transport) else None,
        url=fields.get("url"), command=fields.get("command"),
        args=entry.written_args if entry.written_args is not None else list(fields.get("args") or []),
        header_names=sorted(fields.get("headers") or {}), env_names=sorted(fields.get("env") or {}),
        action=action, reason=reason, notes=entry.notes,
    )


def _check(name: str, entry: Entry) -> str | None:
    """Why the entry's fields would be refused by ``create_server``, or None."""
    try:
        ServerCreate.model_validate({"name": name, **entry.fields})
    except ValidationError as exc:
        err = servers.invalid_from(exc)
        return f"{err.field}: {err.message}" if err.field else err.message
    return None


def _planned(ctx: Context, path: Path, environ: Mapping[str, str]) -> tuple[ImportPlan, dict[str, Entry]]:
    kind, entries = _entries(read_document(path), environ, path.parent)
    with ctx.db.transaction() as session:
        registered = set(session.scalars(select(Server.name)).all())
    taken: set[str] = set()
    items: list[ImportItem] = []
    chosen: dict[str, Entry] = {}
    for entry in entries:
        name = _unique(valid_name(entry.source) if server_name_problem(entry.source) else entry.source, taken)
        taken.add(name)
        if entry.problem is not None:
            items.append(_item(entry, name, ImportAction.SKIP, entry.problem))
        elif name in registered:
            items.append(_item(entry, name, ImportAction.EXISTS, f"server {name!r} is registered already"))
        elif (problem := _check(name, entry)) is not None:
            items.append(_item(entry, name, ImportAction.SKIP, problem))
        else:
            items.append(_item(entry, name, ImportAction.CREATE, None))
            chosen[name] = entry
    return ImportPlan(file=str(path), kind=kind, applied=False, items=items), chosen


def plan_import(ctx: Context, principal: Principal, path: Path, environ: Mapping[str, str]) -> ImportPlan:
    """What importing ``path`` would do; nothing is written. References in the file are read from
    ``environ``."""
    principal.require(Permission.READ)
    return _planned(ctx, path, environ)[0]


def run_import(ctx: Context, principal: Principal, path: Path, environ: Mapping[str, str]) -> ImportPlan:
    """Register every ``create`` entry of the plan (each its own transaction and audit entry)."""
    plan, chosen = _planned(ctx, path, environ)
    for name, entry in chosen.items():
        servers.create_server(ctx, principal, {"name": name, **entry.fields})
    return plan.model_copy(update={"applied": True})
