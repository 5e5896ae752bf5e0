"""Tools: listing and filtering, an operator's flags, hand registration on manual servers.

A tool is read as its claim (``tools``) joined with its settings (``tool_settings``) and, when it has
one, its current review (``tool_reviews``): :data:`TOOL_RECORDS` is that FROM clause, and the ``sql_*``
expressions below need it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError
from sqlalchemy import ColumnElement, Join, Text, and_, cast, func, join, not_, or_, select, update
from sqlalchemy.orm import Session, contains_eager

from toolvet.db.models import Server, Tool, ToolDefinition, ToolReview, ToolSettings
from toolvet.db.types import utcnow
from toolvet.domain import findings
from toolvet.domain.definitions import DefinitionError, ToolClaim, read_claim
from toolvet.domain.findings import Severity, severity_rank
from toolvet.domain.policy import (
    ApprovalFloor,
    ReviewState,
    held_for_findings,
    is_available,
    offered,
    review_state,
    stricter,
)
from toolvet.errors import Conflict, InvalidInput, NotFound
from toolvet.schemas.common import Page
from toolvet.schemas.tools import CLAIM_FIELDS, ToolOut, ToolPatch, ToolRegistration, claim_fields_to_wire
from toolvet.services import audit
from toolvet.services.auth import Permission, Principal
from toolvet.services.context import Context
from toolvet.services.history import keep_outgoing
from toolvet.services.servers import invalid_from
from toolvet.services.servers import load as load_server
from toolvet.services.shadowing import check_by_hand, forget, write_mentions


def split_address(address: str) -> tuple[str, str]:
    """``SERVER/TOOL`` -> (server, tool). Tool names may contain '/' only after the first one."""
    server, sep, tool = address.partition("/")
    if not sep or not server or not tool:
        raise InvalidInput(f"{address!r} is not SERVER/TOOL", "tool")
    return server, tool


#: A tool's operator-owned fields: every column of ``tool_settings`` but its key.
SETTINGS_FIELDS = frozenset(c.key for c in ToolSettings.__table__.c) - {"tool_id"}

#: A tool's three records: claim, settings (1:1) and, when reviewed, its current review.
TOOL_RECORDS: Join = join(Tool, ToolSettings, ToolSettings.tool_id == Tool.id).outerjoin(
    ToolReview, ToolReview.tool_id == Tool.id)


def to_out(tool: Tool, server: Server) -> ToolOut:
    settings, review = tool.settings, tool.review
    available = is_available(settings.enabled, server.enabled)
    state = review_state(review.fingerprint if review else None, tool.definition_fingerprint)
    return ToolOut(
        server=server.name, name=tool.name, enabled=settings.enabled, writable=settings.writable,
        approval=ApprovalFloor(settings.approval), effective_approval=stricter(server.approval, settings.approval),
        title=tool.title, description=tool.description, input_schema=tool.input_schema,
        output_schema=tool.output_schema, annotations=tool.annotations, icons=tool.icons, meta=tool.meta,
        definition=tool.definition, advertised_read_only=tool.advertised_read_only,
        definition_fingerprint=tool.definition_fingerprint, first_seen_at=tool.first_seen_at,
        last_seen_at=tool.last_seen_at, retired_at=tool.retired_at, findings=list(tool.findings or []),
        reviewed_fingerprint=review.fingerprint if review else None,
        reviewed_at=review.reviewed_at if review else None, reviewed_by=review.reviewed_by if review else None,
        is_available=available, review_state=state,
        offered=offered(available, state, server.hold_changed_tools,
                        held_for_findings(server.hold_flagged_tools, state, tool.findings or [])),
    )


def load(session: Session, server_name: str, tool_name: str) -> tuple[Tool, Server]:
    server = load_server(session, server_name)
    tool = session.scalar(select(Tool).where(Tool.server_id == server.id, Tool.name == tool_name))
    if tool is None:
        raise NotFound(f"tool {server_name}/{tool_name} not found")
    return tool, server


# SQL forms of the derived fields, for filtering in the database (over TOOL_RECORDS joined with Server).
def sql_available() -> ColumnElement[bool]:
    return and_(ToolSettings.enabled.is_(True), Server.enabled.is_(True))


def sql_changed() -> ColumnElement[bool]:
    return and_(ToolReview.fingerprint.is_not(None), ToolReview.fingerprint != Tool.definition_fingerprint)


#: How a ``high`` finding reads in the stored findings text (toolvet.jsontext.compact): a string holding
#: these characters is stored with its quotes escaped, so only a finding's own severity matches.
HIGH_FINDING_TEXT = '%"severity":"high"%'


def sql_has_high_finding() -> ColumnElement[bool]:
    return cast(Tool.findings, Text).like(HIGH_FINDING_TEXT)


def sql_held_flagged() -> ColumnElement[bool]:
    """``domain.policy.held_for_findings`` in SQL."""
    return and_(Server.hold_flagged_tools.is_(True),
                or_(ToolReview.fingerprint.is_(None), ToolReview.fingerprint != Tool.definition_fingerprint),
                sql_has_high_finding())


def sql_offered() -> ColumnElement[bool]:
    return and_(sql_available(), not_(and_(sql_changed(), Server.hold_changed_tools.is_(True))),
                not_(sql_held_flagged()))


def sql_review_state(state: ReviewState) -> ColumnElement[bool]:
    if state is ReviewState.UNREVIEWED:
        return ToolReview.fingerprint.is_(None)
    if state is ReviewState.REVIEWED:
        return ToolReview.fingerprint == Tool.definition_fingerprint
    return sql_changed()


def list_tools(
    ctx: Context, principal: Principal, *, server: str | None = None, available: bool | None = None,
    offered_: bool | None = None, state: ReviewState | None = None, has_findings: bool | None = None,
    min_severity: Severity | None = None, limit: int = 100, offset: int = 0,
) -> Page[ToolOut]:
    """Tools by server and name. ``min_severity``: only tools with a finding at least that severe."""
    principal.require(Permission.READ)
    # The filters name the settings and review columns, so the query joins their tables itself and
    # loads Tool.settings and Tool.review from those joins (not from a second, aliased pair).
    query = (select(Tool, Server).select_from(TOOL_RECORDS).join(Server, Tool.server_id == Server.id)
             .options(contains_eager(Tool.settings), contains_eager(Tool.review)))
    if server is not None:
        query = query.where(Server.name == server)
    if available is not None:
        query = query.where(sql_available() if available else not_(sql_available()))
    if offered_ is not None:
        query = query.where(sql_offered() if offered_ else not_(sql_offered()))
    if state is not None:
        query = query.where(sql_review_state(state))
    with ctx.db.transaction() as session:
        if server is not None:
            load_server(session, server)
        rows = session.execute(query.order_by(Server.name, Tool.name)).all()
        items = [to_out(tool, srv) for tool, srv in rows]
    if has_findings is not None:
        items = [t for t in items if bool(t.findings) == has_findings]
    if min_severity is not None:
        floor = severity_rank(min_severity)
        items = [t for t in items if any(severity_rank(f.get("severity")) >= floor for f in t.findings)]
    return Page(items=items[offset:offset + limit], total=len(items), limit=limit, offset=offset)


def get_tool(ctx: Context, principal: Principal, server: str, name: str) -> ToolOut:
    principal.require(Permission.READ)
    with ctx.db.transaction() as session:
        return to_out(*load(session, server, name))


def _claim(definition: dict[str, Any], max_bytes: int) -> ToolClaim:
    try:
        return read_claim(definition, max_bytes)
    except DefinitionError as exc:
        field = {"inputSchema": "input_schema", "outputSchema": "output_schema", "_meta": "meta"}.get(
            exc.member or "", exc.member)
        raise InvalidInput(str(exc).removeprefix(f"{exc.member} ") if exc.member else str(exc), field) from None


def _claim_values(claim: ToolClaim) -> dict[str, Any]:
    return {
        "title": claim.title, "description": claim.description, "definition": claim.definition,
        "advertised_read_only": claim.advertised_read_only, "definition_fingerprint": claim.fingerprint,
        "definition_digest": claim.digest,
    }


def remember_definition(session: Session, tool_id: int, claim: ToolClaim) -> None:
    """Add the claim to the tool's history unless this exact definition is there already. Called before
    the tool's claim becomes ``claim`` (or right after a new tool's is written): the outgoing definition
    is written into its history row first, the new row holds none while the claim holds it."""
    keep_outgoing(session.connection(), [tool_id], utcnow())
    exists = session.scalar(
        select(ToolDefinition.id).where(ToolDefinition.tool_id == tool_id, ToolDefinition.digest == claim.digest)
    )
    if exists is None:
        session.add(ToolDefinition(tool_id=tool_id, digest=claim.digest, fingerprint=claim.fingerprint,
                                   definition=None, first_seen_at=utcnow()))


def update_tool(
    ctx: Context, principal: Principal, server_name: str, name: str, patch: ToolPatch | dict[str, Any]
) -> ToolOut:
    """Set ``enabled``/``writable``/``approval`` (any server) or the claim fields (``manual`` servers only)."""
    if isinstance(patch, dict):
        try:
            patch = ToolPatch.model_validate(patch)
        except ValidationError as exc:
            raise invalid_from(exc) from None
    principal.require(Permission.MANAGE_TOOLS)
    changes = patch.model_dump(exclude_unset=True)
    for key in SETTINGS_FIELDS & changes.keys():
        if changes[key] is None:
            raise InvalidInput("may not be null", key)
    with ctx.db.transaction() as session:
        tool, server = load(session, server_name, name)
        before = to_out(tool, server)
        claim_changes = {k: v for k, v in changes.items() if k in CLAIM_FIELDS}
        if claim_changes and server.discovery != "manual":
            field = sorted(claim_changes)[0]
            raise InvalidInput("is read-only (owned by discovery; only tools of manual servers are edited by hand)",
                               field)
        settings = {k: changes[k] for k in SETTINGS_FIELDS & changes.keys()}
        if "approval" in settings:
            settings["approval"] = ApprovalFloor(settings["approval"]).value  # stored as its text on both databases
        # Column-targeted UPDATEs: fields nobody set here are not rewritten from a stale copy.
        if settings:
            session.execute(update(ToolSettings).where(ToolSettings.tool_id == tool.id).values(**settings))
            session.refresh(tool.settings)
        if claim_changes:
            current = {k: getattr(tool, k) for k in CLAIM_FIELDS}
            wire = claim_fields_to_wire(tool.name, {**current, **claim_changes})
            claim = _claim(wire, ctx.settings.max_definition_bytes)
            values = _claim_values(claim) | {"findings": check_by_hand(
                session.connection(), server.id, server.name, server.software, claim,
                findings.static_findings(claim.definition), tool.id)}
            remember_definition(session, tool.id, claim)
            session.execute(update(Tool).where(Tool.id == tool.id).values(**values))
            write_mentions(session.connection(), [(tool.id, claim.title, claim.description, claim.annotations)],
                           [tool.id])
            session.refresh(tool)
        after = to_out(tool, server)
        audit.record(session, principal, "tool.update", "tool", f"tool:{server_name}/{name}", before, after)
    return after


def register_tool(
    ctx: Context, principal: Principal, server_name: str, data: ToolRegistration | dict[str, Any]
) -> ToolOut:
    """Register a tool by hand on a ``manual`` server; its definition is checked like a discovered one."""
    if isinstance(data, dict):
        try:
            data = ToolRegistration.model_validate(data)
        except ValidationError as exc:
            raise invalid_from(exc) from None
    principal.require(Permission.MANAGE_TOOLS)
    claim = _claim(data.wire_definition(), ctx.settings.max_definition_bytes)
    now = utcnow()
    with ctx.db.transaction() as session:
        server = load_server(session, server_name)
        if server.discovery != "manual":
            raise InvalidInput(f"server {server_name!r} is discovered automatically; tools are registered by hand "
                               "only on manual servers", "server")
        if session.scalar(select(Tool.id).where(Tool.server_id == server.id, Tool.name == data.name)) is not None:
            raise Conflict(f"tool {server_name}/{data.name} already exists")
        tool = Tool(server_id=server.id, name=data.name, name_key=findings.name_key(data.name), first_seen_at=now,
                    last_seen_at=now,
                    findings=check_by_hand(session.connection(), server.id, server.name, server.software, claim,
                                           findings.static_findings(claim.definition), None),
                    **_claim_values(claim))
        session.add(tool)
        session.flush()
        session.add(ToolSettings(tool_id=tool.id, writable=data.writable, approval=data.approval.value,
                                 enabled=server.new_tools_enabled if data.enabled is None else data.enabled))
        session.flush()
        session.refresh(tool)
        remember_definition(session, tool.id, claim)
        write_mentions(session.connection(), [(tool.id, tool.title, tool.description, tool.annotations)], [])
        out = to_out(tool, server)
        audit.record(session, principal, "tool.register", "tool", f"tool:{server_name}/{data.name}", None, out)
    return out


def delete_tool(ctx: Context, principal: Principal, server_name: str, name: str) -> None:
    """Remove a tool. On an ``auto`` server discovery will list it again if the server still advertises
    it (as a new, unreviewed tool); disabling is usually what an operator wants."""
    principal.require(Permission.MANAGE_TOOLS)
    with ctx.db.transaction() as session:
        tool, server = load(session, server_name, name)
        before = to_out(tool, server)
        forget(session.connection(), server.id, server.name, [tool.name])
        session.delete(tool)
        audit.record(session, principal, "tool.delete", "tool", f"tool:{server_name}/{name}", before, None)


def count_offered(ctx: Context) -> int:
    with ctx.db.transaction() as session:
        return session.scalar(
            select(func.count()).select_from(TOOL_RECORDS).join(Server, Tool.server_id == Server.id)
            .where(sql_offered())
        ) or 0


def offered_rows(ctx: Context) -> Sequence[Any]:
    """Every offered tool, for the gateway's listing: (server, name, definition, fingerprint), in one
    query."""
    query = (
        select(Server.name, Tool.name, Tool.definition, Tool.definition_fingerprint)
        .select_from(TOOL_RECORDS)
        .join(Server, Tool.server_id == Server.id)
        .where(sql_offered())
    )
    with ctx.db.transaction() as session:
        return session.execute(query).all()
