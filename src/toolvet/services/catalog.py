"""The catalog: the offered tools as AiMCPItem descriptors for a scope (docs/policy.md#descriptors), toolvet's own host
tools included.

Each descriptor is made from the tool's policy facts (``services.policy_facts``: the same reading a
decision and a call use) and the scope's lists. Built for speed, since consumers read it on every
turn: one SQL query for the offered tools selecting the facts' columns and what a descriptor shows,
the scope's lists read once, no per-tool queries, and descriptors built with ``model_construct`` (the
values come from the registry, already checked when stored)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from sqlalchemy import select

from toolvet.db.models import Server, Tool
from toolvet.domain.policy import ApprovalFloor, ToolFacts, reviewed_read_only
from toolvet.errors import InvalidInput
from toolvet.schemas.policy import AiMCPItem
from toolvet.services.auth import Principal
from toolvet.services.context import Context
from toolvet.services.policy_facts import (
    DEFAULT_SCOPE,
    FACT_COLUMNS,
    definition_of,
    facts_of,
    host_records,
    read_scope,
)
from toolvet.services.preferences import check_access
from toolvet.services.tools import TOOL_RECORDS, sql_offered


class View(StrEnum):
    """``all``: every offered tool, disabled ones marked; ``model``: what may be shown to the model."""

    ALL = "all"
    MODEL = "model"


#: The offered tools: their facts' columns (``FACT_COLUMNS``, the definition a descriptor shows among them).
OFFERED_QUERY = (
    select(*FACT_COLUMNS)
    .select_from(TOOL_RECORDS)
    .join(Server, Tool.server_id == Server.id)
    .where(sql_offered())
    .order_by(Server.name, Tool.name)
)


def visible_to_model(meta: dict[str, Any] | None) -> bool:
    """False when ``_meta.ui.visibility`` is a list without ``"model"`` (an app-only tool, MCP Apps);
    a tool that says nothing is visible."""
    if not meta:
        return True
    ui = meta.get("ui")
    if not isinstance(ui, dict):
        return True
    visibility = ui.get("visibility")
    return not isinstance(visibility, list) or "model" in visibility


def parse_view(value: str) -> View:
    try:
        return View(value)
    except ValueError:
        raise InvalidInput(f"{value!r} is not one of all, model", "view") from None


def catalog(
    ctx: Context, principal: Principal, scope: str | None = None, view: View | str = View.ALL
) -> list[AiMCPItem]:
    """The offered tools as descriptors for ``scope`` (the token's, else ``default``), by server and name.

    ``enabled`` is false for a tool the scope's disabled map lists; ``requireApproval`` is false only
    when an operator reviewed the tool as read-only and set no approval floor over it, else absent.
    The model view drops disabled tools, app-only tools and ``annotations``."""
    scope = scope or principal.scope or DEFAULT_SCOPE
    check_access(principal, scope=scope)
    model_view = parse_view(view) is View.MODEL
    with ctx.db.transaction() as session:
        lists = read_scope(session, scope)
        rows = session.execute(OFFERED_QUERY).all()
    construct = AiMCPItem.model_construct
    disables = lists.disables
    items: list[AiMCPItem] = []
    append = items.append
    shown = [(facts_of(row), definition_of(row)) for row in rows]
    for facts, d in sorted(shown + host_records(), key=_address):
        meta = d.get("_meta")
        enabled = not disables(facts.server_type, facts.name)
        if model_view and (not enabled or not visible_to_model(meta)):
            continue
        # Under an approval floor every call asks: no descriptor may tell the app it need not.
        read_only = facts.approval is ApprovalFloor.USER and reviewed_read_only(facts.writable, facts.review_state)
        append(
            construct(
                name=facts.name,
                description=d.get("description") or "",
                input_schema=d["inputSchema"],
                enabled=enabled,
                server_type=facts.server_type,
                require_approval=False if read_only else None,
                annotations=None if model_view else facts.annotations,
                title=d.get("title"),
                output_schema=d.get("outputSchema"),
                icons=d.get("icons"),
                meta=meta,
            )
        )
    return items


def _address(item: tuple[ToolFacts, Any]) -> tuple[str, str]:
    return item[0].server_type, item[0].name
