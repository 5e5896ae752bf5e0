"""Registering, changing and removing upstream servers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeVar

from pydantic import BaseModel, ValidationError
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from toolvet.db.models import Server, Tool
from toolvet.domain.policy import ApprovalFloor
from toolvet.errors import Conflict, InvalidInput, NotFound
from toolvet.schemas.common import Page
from toolvet.schemas.servers import (
    DiscoveryMode,
    ServerCreate,
    ServerOut,
    ServerPatch,
    Transport,
    check_auth_fields,
    check_transport_fields,
)
from toolvet.services import audit
from toolvet.services.auth import Permission, Principal
from toolvet.services.context import Context
from toolvet.services.oauth_settings import apply_settings, auth_mode, oauth_out
from toolvet.services.search import matching, order_of
from toolvet.services.shadowing import compare_again, forget

M = TypeVar("M", bound=BaseModel)


def invalid_from(exc: ValidationError) -> InvalidInput:
    """Our error for pydantic's: the first problem, naming its field."""
    return invalid_from_errors(exc.errors())


def validated(model: type[M], data: M | Mapping[str, Any]) -> M:
    """``data`` as ``model`` (a dict from the CLI or the console, validated here), or our InvalidInput."""
    if isinstance(data, model):
        return data
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise invalid_from(exc) from None


def invalid_from_errors(errors: Sequence[Mapping[str, Any]]) -> InvalidInput:
    """Our error for a list of pydantic error dicts (``ValidationError.errors()``, or FastAPI's request
    errors once the API has dropped their ``body``/``query`` prefix): the first one, naming its field."""
    err = errors[0]
    field = ".".join(str(p) for p in err["loc"]) or None
    message = str(err["msg"]).removeprefix("Value error, ")
    if field is None:
        # Model-level checks name their field themselves: "command: a stdio server needs ..." or
        # "definition_fingerprint is read-only (...)".
        head, sep, rest = message.partition(": ")
        if sep and " " not in head:
            field, message = head, rest
        elif " is read-only" in message:
            field, _, rest = message.partition(" ")
            message = rest
    return InvalidInput(message, field)


def _require_manage(principal: Principal, transport: Transport) -> None:
    principal.require(
        Permission.MANAGE_STDIO_SERVERS if transport is Transport.STDIO else Permission.MANAGE_HTTP_SERVERS
    )


def load(session: Session, name: str) -> Server:
    server = session.scalar(select(Server).where(Server.name == name))
    if server is None:
        raise NotFound(f"server {name!r} not found")
    return server


def to_out(server: Server, tool_count: int) -> ServerOut:
    return ServerOut(
        name=server.name, title=server.title, transport=Transport(server.transport), url=server.url,
        command=server.command, args=list(server.args or []), cwd=server.cwd,
        header_names=list(server.header_names or []), env_names=list(server.env_names or []),
        auth=auth_mode(server), oauth=oauth_out(server.oauth), enabled=server.enabled,
        discovery=DiscoveryMode(server.discovery), trust_annotations=server.trust_annotations,
        new_tools_enabled=server.new_tools_enabled, hold_changed_tools=server.hold_changed_tools,
        hold_flagged_tools=server.hold_flagged_tools, remove_stale=server.remove_stale,
        approval=ApprovalFloor(server.approval), software=server.software, last_discovery_at=server.last_discovery_at,
        last_discovery_status=server.last_discovery_status, last_error=server.last_error,
        protocol_version=server.protocol_version, server_info=server.server_info,
        capabilities=server.capabilities, instructions=server.instructions, tool_count=tool_count,
        created_at=server.created_at, updated_at=server.updated_at,
    )


def _tool_count(session: Session, server_id: int) -> int:
    return session.scalar(select(func.count()).where(Tool.server_id == server_id)) or 0


#: The orders servers can be listed in.
SERVER_SORTS: Final = {"name": (Server.name,), "last_discovery": (Server.last_discovery_at, Server.name),
                       "created": (Server.created_at, Server.name)}


def list_servers(ctx: Context, principal: Principal, *, q: str = "", software: str | None = None, sort: str = "name",
                 descending: bool = False, limit: int = 100, offset: int = 0) -> Page[ServerOut]:
    """Servers a page at a time; ``q`` searches name, title, URL, command and the software named;
    ``software`` keeps only the servers an operator said run that software."""
    principal.require(Permission.READ)
    counts = select(Tool.server_id, func.count().label("n")).group_by(Tool.server_id).subquery()
    where = [matching(q, Server.name, Server.title, Server.url, Server.command, Server.software)] if q else []
    if software is not None:
        where.append(Server.software == software)
    with ctx.db.transaction() as session:
        total = session.scalar(select(func.count()).select_from(Server).where(*where)) or 0
        rows = session.execute(
            select(Server, func.coalesce(counts.c.n, 0))
            .outerjoin(counts, counts.c.server_id == Server.id).where(*where)
            .order_by(*order_of(SERVER_SORTS, sort, descending=descending)).limit(limit).offset(offset)
        ).all()
        items = [to_out(server, n) for server, n in rows]
    return Page(items=items, total=total, limit=limit, offset=offset)


def get_server(ctx: Context, principal: Principal, name: str) -> ServerOut:
    principal.require(Permission.READ)
    with ctx.db.transaction() as session:
        server = load(session, name)
        return to_out(server, _tool_count(session, server.id))


def create_server(ctx: Context, principal: Principal, data: ServerCreate | dict[str, Any]) -> ServerOut:
    """Register a server. Secrets are sealed before they touch the database."""
    if isinstance(data, dict):
        try:
            data = ServerCreate.model_validate(data)
        except ValidationError as exc:
            raise invalid_from(exc) from None
    assert data.transport is not None
    _require_manage(principal, data.transport)
    server = Server(
        name=data.name, title=data.title, transport=data.transport.value, url=data.url,
        command=data.command, args=data.args or [], cwd=data.cwd,
        headers_secret=ctx.secrets.seal(data.headers or {}), header_names=sorted(data.headers or {}),
        env_secret=ctx.secrets.seal(data.env or {}), env_names=sorted(data.env or {}),
        enabled=True if data.enabled is None else data.enabled,
        discovery=(data.discovery or "auto"),
        trust_annotations=bool(data.trust_annotations),
        new_tools_enabled=True if data.new_tools_enabled is None else data.new_tools_enabled,
        hold_changed_tools=True if data.hold_changed_tools is None else data.hold_changed_tools,
        hold_flagged_tools=bool(data.hold_flagged_tools),
        remove_stale=bool(data.remove_stale),
        approval=(data.approval or ApprovalFloor.USER).value,
        software=data.software,
    )
    apply_settings(ctx, server, data.auth, data.oauth)
    try:
        with ctx.db.transaction() as session:
            if session.scalar(select(Server.id).where(Server.name == data.name)) is not None:
                raise Conflict(f"server {data.name!r} already exists")
            session.add(server)
            session.flush()
            out = to_out(server, 0)
            audit.record(session, principal, "server.create", "server", f"server:{server.name}", None, out)
    except IntegrityError:
        raise Conflict(f"server {data.name!r} already exists") from None
    return out


def update_server(ctx: Context, principal: Principal, name: str, patch: ServerPatch | dict[str, Any]) -> ServerOut:
    """Change the fields the patch sets; the transport rules are checked on the result."""
    if isinstance(patch, dict):
        try:
            patch = ServerPatch.model_validate(patch)
        except ValidationError as exc:
            raise invalid_from(exc) from None
    changes = patch.model_dump(exclude_unset=True)
    with ctx.db.transaction() as session:
        server = load(session, name)
        before = to_out(server, _tool_count(session, server.id))
        _require_manage(principal, Transport(server.transport))
        transport = Transport(changes.get("transport") or server.transport)
        _require_manage(principal, transport)
        url = changes.get("url", server.url)
        command = changes.get("command", server.command)
        if "transport" in changes and changes["transport"] is not None:
            # Switching transport drops the other kind's endpoint unless the patch sets it.
            if transport is Transport.STDIO and "url" not in changes:
                url = None
            if transport is not Transport.STDIO and "command" not in changes:
                command = None
        auth = changes.get("auth") and patch.auth
        try:
            check_transport_fields(transport, url, command)
            check_auth_fields(transport, auth or auth_mode(server), patch.oauth)
        except ValueError as exc:
            field, _, message = str(exc).partition(": ")
            raise InvalidInput(message, field) from None
        if transport.value != server.transport:
            # The old transport's fields go with it (headers of an HTTP server must not follow it to
            # stdio, nor args, env and cwd to HTTP), unless the patch sets them anew.
            if transport is Transport.STDIO:
                changes.setdefault("headers", None)
            else:
                for key in ("args", "env", "cwd"):
                    changes.setdefault(key, None)
        server.transport, server.url, server.command = transport.value, url, command
        for key in ("title", "cwd", "software", "enabled", "trust_annotations", "new_tools_enabled",
                    "hold_changed_tools", "hold_flagged_tools", "remove_stale"):
            if key in changes:
                if changes[key] is None and key not in ("title", "cwd", "software"):
                    raise InvalidInput("may not be null", key)
                setattr(server, key, changes[key])
        if "approval" in changes:
            if changes["approval"] is None:
                raise InvalidInput("may not be null", "approval")
            server.approval = ApprovalFloor(changes["approval"]).value
        if "discovery" in changes and changes["discovery"] is not None:
            server.discovery = DiscoveryMode(changes["discovery"]).value
        if "args" in changes:
            server.args = changes["args"] or []
        if "headers" in changes:
            server.headers_secret = ctx.secrets.seal(changes["headers"] or {})
            server.header_names = sorted(changes["headers"] or {})
        if "env" in changes:
            server.env_secret = ctx.secrets.seal(changes["env"] or {})
            server.env_names = sorted(changes["env"] or {})
        apply_settings(ctx, server, auth, patch.oauth)
        session.flush()
        if server.software != before.software:
            # Its tools and those of the servers running its old and new software are compared again, here.
            compare_again(session.connection(), server.id, before.software, server.software)
        after = to_out(server, before.tool_count)
        audit.record(session, principal, "server.update", "server", f"server:{name}", before, after)
    return after


def delete_server(ctx: Context, principal: Principal, name: str) -> None:
    """Remove a server and, with it, every tool it had (a tool cannot outlive its server)."""
    with ctx.db.transaction() as session:
        server = load(session, name)
        _require_manage(principal, Transport(server.transport))
        before = to_out(server, _tool_count(session, server.id))
        forget(session.connection(), server.id, server.name)
        session.delete(server)
        audit.record(session, principal, "server.delete", "server", f"server:{name}", before, None)


def require_oauth(server: ServerOut) -> None:
    """Refuse what only an OAuth-protected server has (``toolvet server connect``)."""
    if server.oauth is None:
        raise InvalidInput(f"server {server.name!r} does not use OAuth (auth = none); set --auth oauth2", "auth")
