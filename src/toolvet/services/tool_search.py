"""Tools found in the database, a page at a time: every filter, the text search and the sort are SQL,
so a registry of any size answers one page without reading the others (the console's tools list).

Also the counts an operator needs at a glance: tools held for review, tools with a ``high`` finding,
and which servers hold tools."""

from __future__ import annotations

from typing import Final, Literal

from sqlalchemy import Text, and_, case, cast, func, not_, or_, select
from sqlalchemy.orm import contains_eager
from sqlalchemy.sql import ColumnElement

from toolvet.db.models import Server, Tool, ToolReview
from toolvet.domain.policy import ReviewState
from toolvet.errors import InvalidInput
from toolvet.schemas.common import Page
from toolvet.schemas.tools import ToolOut
from toolvet.services.auth import Permission, Principal
from toolvet.services.context import Context
from toolvet.services.search import matching, order_of
from toolvet.services.tools import (
    TOOL_RECORDS,
    sql_available,
    sql_changed,
    sql_has_high_finding,
    sql_held_flagged,
    sql_offered,
    sql_review_state,
    to_out,
)

#: How a finding of at least ``warning`` reads in the stored findings text (see ``HIGH_FINDING_TEXT``).
WARNING_FINDING_TEXT: Final = '%"severity":"warning"%'
FindingsFilter = Literal["yes", "no", "warning", "high"]

SORTS: Final = {
    "name": (Server.name, Tool.name),
    "tool": (Tool.name, Server.name),
    "first_seen": (Tool.first_seen_at, Tool.id),
    "last_seen": (Tool.last_seen_at, Tool.id),
}


def review_state_sql() -> ColumnElement[str]:
    """A tool's review state as a SQL expression (over ``TOOL_RECORDS``)."""
    return case((ToolReview.fingerprint.is_(None), "unreviewed"),
                (ToolReview.fingerprint == Tool.definition_fingerprint, "reviewed"), else_="changed")


def held_sql() -> ColumnElement[bool]:
    """Held: a changed contract on a server that holds them, or a flagged tool held until reviewed
    (enabled or not: held says what review it waits for)."""
    return or_(and_(sql_changed(), Server.hold_changed_tools.is_(True)), sql_held_flagged())


def _findings(value: FindingsFilter) -> ColumnElement[bool]:
    text = cast(Tool.findings, Text)
    if value == "high":
        return sql_has_high_finding()
    if value == "warning":
        return or_(sql_has_high_finding(), text.like(WARNING_FINDING_TEXT))
    has = and_(Tool.findings.is_not(None), text != "[]")
    return has if value == "yes" else not_(has)


def find_tools(
    ctx: Context, principal: Principal, *, q: str = "", server: str | None = None, offered: bool | None = None,
    held: bool | None = None, state: ReviewState | None = None, findings: FindingsFilter | None = None,
    available: bool | None = None, sort: str = "name", descending: bool = False, limit: int = 100, offset: int = 0,
) -> Page[ToolOut]:
    """One page of the tools that match, with the total that match. ``q`` searches name, title and
    description."""
    principal.require(Permission.READ)
    if findings is not None and findings not in ("yes", "no", "warning", "high"):
        raise InvalidInput("must be yes, no, warning or high", "findings")
    conditions: list[ColumnElement[bool]] = []
    if q:
        conditions.append(matching(q, Tool.name, Tool.title, Tool.description))
    if server:
        conditions.append(Server.name == server)
    if offered is not None:
        conditions.append(sql_offered() if offered else not_(sql_offered()))
    if held is not None:
        conditions.append(held_sql() if held else not_(held_sql()))
    if state is not None:
        conditions.append(sql_review_state(state))
    if findings is not None:
        conditions.append(_findings(findings))
    if available is not None:
        conditions.append(sql_available() if available else not_(sql_available()))
    base = select(Tool, Server).select_from(TOOL_RECORDS).join(Server, Tool.server_id == Server.id).where(*conditions)
    query = base.options(contains_eager(Tool.settings), contains_eager(Tool.review)).order_by(
        *order_of(SORTS, sort, descending=descending))
    with ctx.db.transaction() as session:
        total = session.scalar(select(func.count()).select_from(TOOL_RECORDS).join(Server, Tool.server_id == Server.id)
                               .where(*conditions)) or 0
        rows = session.execute(query.limit(limit).offset(offset)).all()
        items = [to_out(tool, srv) for tool, srv in rows]
    return Page(items=items, total=total, limit=limit, offset=offset)


def held_by_server(ctx: Context, principal: Principal) -> dict[str, int]:
    """How many live tools each server holds for review (servers holding none are left out)."""
    principal.require(Permission.READ)
    with ctx.db.transaction() as session:
        rows = session.execute(
            select(Server.name, func.count()).select_from(TOOL_RECORDS).join(Server, Tool.server_id == Server.id)
            .where(Tool.retired_at.is_(None), held_sql()).group_by(Server.name)).all()
    return {name: count for name, count in rows}
