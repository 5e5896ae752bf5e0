"""The catalog: the offered tools as AiMCPItem descriptors for a scope (SPEC §5.1).

Built for speed, since consumers read it on every turn: one SQL query for the offered tools selecting
only the columns a descriptor needs, the scope's map loaded once, no per-tool queries, and descriptors
built with ``model_construct`` (the values come from the registry, already checked when stored)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from sqlalchemy import select

from toolvet.db.models import Server, Tool, ToolReview, ToolSettings
from toolvet.domain.policy import review_state, reviewed_read_only
from toolvet.errors import InvalidInput
from toolvet.schemas.policy import AiMCPItem
from toolvet.services.auth import Principal
from toolvet.services.context import Context
from toolvet.services.preferences import DEFAULT_SCOPE, check_access, disabled_map, reads_from
from toolvet.services.tools import TOOL_RECORDS, sql_offered


class View(StrEnum):
    """``all``: every offered tool, disabled ones marked; ``model``: what may be shown to the model."""

    ALL = "all"
    MODEL = "model"


_COLUMNS = (
    Server.name,
    Tool.name,
    Tool.title,
    Tool.description,
    Tool.input_schema,
    Tool.output_schema,
    Tool.annotations,
    Tool.icons,
    Tool.meta,
    ToolSettings.writable,
    ToolReview.fingerprint,
    Tool.definition_fingerprint,
)
OFFERED_QUERY = (
    select(*_COLUMNS)
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
    when an operator reviewed the tool as read-only, else absent. The model view drops disabled tools,
    app-only tools and ``annotations``."""
    scope = scope or principal.scope or DEFAULT_SCOPE
    check_access(principal, scope=scope)
    model_view = parse_view(view) is View.MODEL
    with ctx.db.transaction() as session:
        disabled = {
            server: frozenset(names)
            for server, names in disabled_map(session, reads_from(session, scope)).items()
        }
        rows = session.execute(OFFERED_QUERY).all()
    construct = AiMCPItem.model_construct
    none: frozenset[str] = frozenset()
    items: list[AiMCPItem] = []
    append = items.append
    for (
        server,
        name,
        title,
        description,
        input_schema,
        output_schema,
        annots,
        icons,
        meta,
        writable,
        reviewed_print,
        fingerprint,
    ) in rows:
        enabled = name not in disabled.get(server, none)
        if model_view and (not enabled or not visible_to_model(meta)):
            continue
        read_only = reviewed_read_only(writable, review_state(reviewed_print, fingerprint))
        append(
            construct(
                name=name,
                description=description or "",
                input_schema=input_schema,
                enabled=enabled,
                server_type=server,
                require_approval=False if read_only else None,
                annotations=None if model_view else annots,
                title=title,
                output_schema=output_schema,
                icons=icons,
                meta=meta,
            )
        )
    return items
