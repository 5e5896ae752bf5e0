"""Discovery cannot write what an operator or a reviewer owns: every statement its passes issue names
claim-side tables and columns only, except settle_settings' one upsert (a new tool's first settings, a
retired tool's ``enabled`` cleared). Real passes against real upstreams, on SQLite and PostgreSQL."""

from __future__ import annotations

import ast
import re
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from sqlalchemy import event, select

from tests.upstreams import raw_listing_server
from toolvet.db.models import Tool, ToolSettings
from toolvet.services import discovery, servers, tools
from toolvet.services.context import Context

pytestmark = pytest.mark.anyio

SRC = Path(__file__).resolve().parents[2] / "src" / "toolvet"
#: Tables whose rows belong to an operator or a reviewer.
PEOPLES_TABLES = {"tool_settings", "tool_reviews", "reviews"}
#: Columns of the servers row a pass may write (its discovery-owned ones; updated_at is set to itself).
SERVER_CLAIM_COLUMNS = {"last_discovery_at", "last_discovery_status", "last_error", "protocol_version",
                        "server_info", "capabilities", "instructions", "listing_key", "listing_tools", "updated_at"}
#: Columns no statement on the claim table may name: the operator's and the reviewer's.
PEOPLES_COLUMNS = {"enabled", "writable", "reviewed_fingerprint", "reviewed_digest", "reviewed_at", "reviewed_by"}


@dataclass
class Seen:
    sql: str
    by_settle: bool  # issued from inside services.discovery_settings.settle_settings

    @property
    def tables(self) -> set[str]:
        return {t.lower() for t in re.findall(r"\b(?:FROM|JOIN|INTO|UPDATE)\s+(?!SET\b)(\w+)", self.sql, re.I)}

    @property
    def verb(self) -> str:
        return self.sql.split()[0].upper()

    @property
    def written_table(self) -> str | None:
        found = re.match(r"\s*(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(\w+)", self.sql, re.I)
        return found.group(1).lower() if found else None

    @property
    def written_columns(self) -> set[str]:
        columns: set[str] = set()
        listed = re.match(r"\s*INSERT\s+INTO\s+\w+\s*\(([^)]*)\)", self.sql, re.I)
        if listed:
            columns |= {c.strip().lower() for c in listed.group(1).split(",")}
        for assignments in re.findall(r"\bSET\s+(.*?)(?=\bWHERE\b|\bRETURNING\b|$)", self.sql, re.I | re.S):
            columns |= {c.lower() for c in re.findall(r"(?:^|,)\s*(\w+)\s*=", assignments)}
        return columns

    @property
    def words(self) -> set[str]:
        return {w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", self.sql)}


class Capture:
    """Every statement sent to the database while attached, with whether settle_settings sent it."""

    def __init__(self, ctx: Context) -> None:
        self.engine = ctx.db.engine
        self.seen: list[Seen] = []

    def __call__(self, conn: Any, cursor: Any, statement: str, parameters: Any, context: Any,
                 executemany: bool) -> None:
        settle = any(f.name == "settle_settings" and f.filename.endswith("discovery_settings.py")
                     for f in traceback.extract_stack())
        self.seen.append(Seen(" ".join(statement.split()), settle))

    def __enter__(self) -> Capture:
        event.listen(self.engine, "before_cursor_execute", self)
        return self

    def __exit__(self, *exc: Any) -> None:
        event.remove(self.engine, "before_cursor_execute", self)


def tool(name: str, description: str = "Does a thing.") -> dict[str, Any]:
    return {"name": name, "description": description, "inputSchema": {"type": "object"}}


async def discover(ctx: Context, admin: Any, name: str) -> Any:
    with anyio.fail_after(30):
        [run] = await discovery.discover(ctx, admin, [name])
    return run


def check_claim_side(statements: list[Seen]) -> None:
    """No statement but settle_settings' names a person's table, names a person's column on the claim
    table, or writes a server column that is not discovery's."""
    for s in statements:
        if s.by_settle:
            continue
        assert not s.tables & PEOPLES_TABLES, s.sql
        if "tools" in s.tables:
            assert not s.words & PEOPLES_COLUMNS, s.sql
        if s.written_table == "servers":
            assert s.written_columns <= SERVER_CLAIM_COLUMNS, s.sql


def check_settle(statement: Seen) -> None:
    assert statement.tables == {"tool_settings"}
    assert statement.written_columns == {"tool_id", "enabled", "writable"}
    # Its only change to an existing row: enabled set to false.
    assert re.search(r"ON CONFLICT \(tool_id\) DO UPDATE SET enabled = (0|false)$", statement.sql, re.I), \
        statement.sql


async def test_discovery_statements_name_no_operator_or_review_column(ctx, admin):
    keep = {None: {"tools": [tool("a"), tool("b"), tool("c")]}}
    drop = {None: {"tools": [tool("x"), tool("y")]}}
    runs = []
    with raw_listing_server(keep) as up, raw_listing_server(drop) as gone:
        servers.create_server(ctx, admin, {"name": "keep", "url": up.url, "new_tools_enabled": False})
        servers.create_server(ctx, admin, {"name": "drop", "url": gone.url, "remove_stale": True})
        with Capture(ctx) as first:  # new tools
            runs += [await discover(ctx, admin, "keep"), await discover(ctx, admin, "drop")]
        tools.update_tool(ctx, admin, "keep", "a", {"enabled": True, "writable": False})
        tools.update_tool(ctx, admin, "keep", "b", {"enabled": True})
        keep[None] = {"tools": [tool("a", "Changed."), tool("b")]}  # a changed, b unchanged, c retired
        drop[None] = {"tools": [tool("x")]}  # y deleted (remove_stale)
        with Capture(ctx) as later:
            runs += [await discover(ctx, admin, "keep"), await discover(ctx, admin, "drop")]
            runs += [await discover(ctx, admin, "keep")]  # an unchanged listing: the fast path
    counts = [(r.status, r.added, r.changed, r.unchanged, r.retired) for r in runs]
    assert counts == [("ok", 3, 0, 0, 0), ("ok", 2, 0, 0, 0), ("ok", 0, 1, 1, 1), ("ok", 0, 0, 1, 1),
                      ("ok", 0, 0, 2, 0)]

    check_claim_side(first.seen + later.seen)
    # One upsert per pass that added or retired a tool: the two first passes, and c's retirement (y was
    # deleted with its settings by the database; a and b were neither new nor retired).
    settles = [s for s in first.seen + later.seen if s.by_settle]
    assert len(settles) == 3
    for statement in settles:
        check_settle(statement)

    after = {t.name: (t.enabled, t.writable, t.retired_at is not None)
             for t in tools.list_tools(ctx, admin, server="keep").items}
    assert after == {"a": (True, False, False), "b": (True, True, False), "c": (False, True, True)}
    assert [t.name for t in tools.list_tools(ctx, admin, server="drop").items] == ["x"]
    with ctx.db.transaction() as session:  # y's settings went with its claim
        claims = session.scalars(select(Tool.id).order_by(Tool.id)).all()
        assert session.scalars(select(ToolSettings.tool_id).order_by(ToolSettings.tool_id)).all() == claims


async def test_a_retired_tool_that_returns_is_not_enabled_again_by_discovery(ctx, admin):
    pages = {None: {"tools": [tool("a"), tool("b")]}}
    with raw_listing_server(pages) as up:
        servers.create_server(ctx, admin, {"name": "up", "url": up.url})
        await discover(ctx, admin, "up")
        pages[None] = {"tools": [tool("a")]}
        await discover(ctx, admin, "up")
        pages[None] = {"tools": [tool("a"), tool("b")]}
        with Capture(ctx) as capture:
            run = await discover(ctx, admin, "up")
    assert (run.added, run.changed, run.unchanged, run.retired) == (0, 1, 1, 0)  # b comes back as a change
    check_claim_side(capture.seen)
    assert not [s for s in capture.seen if s.by_settle]
    back = tools.get_tool(ctx, admin, "up", "b")
    assert (back.enabled, back.retired_at) == (False, None)


def _imported_names(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
    return names


def test_the_discovery_write_path_imports_the_claim_tables_only():
    write_path = [SRC / "services" / "discovery_writes.py", SRC / "services" / "discovery_writer.py",
                  SRC / "services" / "history.py", SRC / "db" / "bulk.py"]
    models = {name for path in write_path for name in _imported_names(path) if name.startswith("toolvet.db.models")}
    assert models == {"toolvet.db.models.DiscoveryRun", "toolvet.db.models.Server", "toolvet.db.models.Tool",
                      "toolvet.db.models.ToolDefinition"}
    # The settings upsert is reached through one name of one module.
    settings_imports = {name for path in write_path for name in _imported_names(path) if "discovery_settings" in name}
    assert settings_imports == {"toolvet.services.discovery_settings.settle_settings"}
