"""A tool's history rows (``tool_definitions``): the one statement that keeps a definition the tool is
about to leave. A history row holds no text while it is the tool's current definition (the claim holds
it, ``db.models.ToolDefinition``); before a claim changes, its outgoing text goes into its row. Used by
discovery's passes (``services.discovery_writes``) and by edits by hand (``services.tools``); imports
nothing else, so a command that only reads the registry loads no write side with it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from sqlalchemy import Connection, bindparam, select, update

from toolvet.db.models import Tool, ToolDefinition

__all__ = ["keep_outgoing"]

_KEEP_OUTGOING: Final = (
    update(ToolDefinition)
    .where(ToolDefinition.tool_id.in_(bindparam("p_ids", expanding=True)), ToolDefinition.definition.is_(None),
           ToolDefinition.digest == select(Tool.definition_digest).where(Tool.id == ToolDefinition.tool_id)
           .scalar_subquery())
    .values(definition=select(Tool.definition).where(Tool.id == ToolDefinition.tool_id).scalar_subquery())
)


def keep_outgoing(conn: Connection, tool_ids: Sequence[int]) -> None:
    """Write the current definition of each of ``tool_ids`` into its history row, where that row holds
    none: called before their claims change, in the same transaction."""
    conn.execute(_KEEP_OUTGOING, {"p_ids": list(tool_ids)})
