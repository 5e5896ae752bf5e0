"""A tool's history rows (``tool_definitions``): the one statement that keeps a definition the tool is
about to leave. A history row holds no text while it is the tool's current definition (the claim holds
it, ``db.models.ToolDefinition``); before a claim changes, its outgoing text goes into its row, with the
time it was left (so "the definition it had before" is the one left last, not the newest row). Used by
discovery's passes (``services.discovery_writes``) and by edits by hand (``services.tools``); imports
nothing else, so a command that only reads the registry loads no write side with it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Final

from sqlalchemy import Connection, bindparam, func, select, update

from toolvet.db.models import Tool, ToolDefinition

__all__ = ["keep_outgoing"]

_KEEP_OUTGOING: Final = (
    update(ToolDefinition)
    .where(ToolDefinition.tool_id.in_(bindparam("p_ids", expanding=True)),
           ToolDefinition.digest == select(Tool.definition_digest).where(Tool.id == ToolDefinition.tool_id)
           .scalar_subquery())
    .values(definition=func.coalesce(ToolDefinition.definition,
                                     select(Tool.definition).where(Tool.id == ToolDefinition.tool_id)
                                     .scalar_subquery()),
            left_at=bindparam("p_left_at", type_=ToolDefinition.left_at.type))
)


def keep_outgoing(conn: Connection, tool_ids: Sequence[int], now: datetime) -> None:
    """Write the current definition of each of ``tool_ids`` into its history row (where that row holds
    none) and mark it left at ``now``: called before their claims change, in the same transaction."""
    conn.execute(_KEEP_OUTGOING, {"p_ids": list(tool_ids), "p_left_at": now})
