"""The one thing a discovery pass does to tool settings: a new tool gets its first values,
and a tool the pass retires has ``enabled`` cleared (and the same for a prompt, resource or resource
template, in ``entry_settings``). Nothing else of a pass names ``tool_settings``:
``services.discovery_writes`` and everything it uses import the claim table only.

Both rules are one statement, an upsert of ``(tool_id, enabled)`` rows:

    INSERT INTO tool_settings (tool_id, enabled, writable) VALUES (:tool_id, :enabled, true)
    ON CONFLICT (tool_id) DO UPDATE SET enabled = false

A row that does not exist yet (a new tool) is inserted with the server's ``new_tools_enabled`` and
``writable`` true. A row that exists (an operator's) can only have ``enabled`` set to false: the
statement has no way to enable a tool or to touch ``writable`` once an operator owns them, whatever
values it is given.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, Insert, Table, false
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Dialect

from toolvet.db.bulk import BulkInsert
from toolvet.db.models import EntrySettings, ToolSettings

__all__ = ["settle_entry_settings", "settle_settings"]


def _upsert(dialect: Dialect, table: Table) -> Insert:
    clear = {"enabled": false()}
    key = table.primary_key.columns.values()  # tool_id, or entry_id
    if dialect.name == "postgresql":
        return postgresql.insert(table).on_conflict_do_update(index_elements=key, set_=clear)
    return sqlite.insert(table).on_conflict_do_update(index_elements=key, set_=clear)


_SETTLE = BulkInsert(ToolSettings.__table__, ("tool_id", "enabled", "writable"), build=_upsert)  # type: ignore[arg-type]
_SETTLE_ENTRIES = BulkInsert(EntrySettings.__table__, ("entry_id", "enabled"), build=_upsert)  # type: ignore[arg-type]


def settle_settings(conn: Connection, new_ids: Sequence[int], new_enabled: bool, retired_ids: Sequence[int]) -> None:
    """Give the new tools ``new_ids`` their first settings (``enabled`` = ``new_enabled``, the server's
    ``new_tools_enabled``; ``writable`` true) and clear ``enabled`` of ``retired_ids``, in one statement
    on the caller's transaction."""
    rows = [{"tool_id": i, "enabled": new_enabled} for i in new_ids]
    rows += [{"tool_id": i, "enabled": False} for i in retired_ids]
    _SETTLE.execute(conn, {"writable": True}, rows)


def settle_entry_settings(conn: Connection, new_ids: Sequence[int], new_enabled: bool,
                          retired_ids: Sequence[int]) -> None:
    """The same rule for prompts, resources and templates (``entry_settings``): new entries get
    ``enabled`` = ``new_enabled``, retired ones have it cleared, nothing else is ever written."""
    rows = [{"entry_id": i, "enabled": new_enabled} for i in new_ids]
    rows += [{"entry_id": i, "enabled": False} for i in retired_ids]
    _SETTLE_ENTRIES.execute(conn, {}, rows)
