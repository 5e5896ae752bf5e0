"""The console with 5,000 tools in a real Chromium: the pager reaches the last page, a search finds the
one held tool, the navigation counts it, and a bulk action changes the selected tools (one audit entry
each). The registry is bulk-inserted straight into the tables (a second, not a discovery of 5,000)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import insert, select

from tests.console.conftest import ADMIN, Console, sign_in
from toolvet.db.bulk import BulkInsert
from toolvet.db.models import Server, Tool, ToolReview, ToolSettings
from toolvet.db.types import utcnow
from toolvet.services import audit, servers

TOOLS = 5000
HELD = "rotate-keys"


@pytest.fixture
def big(console: Console) -> Console:
    """One manual server with 5,000 tools, one of them (``rotate-keys``) reviewed once and changed since."""
    servers.create_server(console.ctx, ADMIN, {"name": "big", "url": "http://127.0.0.1:1/mcp",
                                               "discovery": "manual"})
    now = utcnow()
    names = [f"t{i:04d}" for i in range(TOOLS - 1)] + [HELD]
    rows = [{"name": n, "title": None, "description": "Rotates the signing keys." if n == HELD else f"Tool {n}.",
             "definition": {"name": n, "inputSchema": {"type": "object"}}, "advertised_read_only": None,
             "definition_fingerprint": f"sha256:{n}", "definition_digest": f"sha256:{n}", "findings": []}
            for n in names]
    with console.ctx.db.engine.begin() as conn:
        server_id = conn.execute(select(Server.id).where(Server.name == "big")).scalar_one()
        shared = {"server_id": server_id, "first_seen_at": now, "last_seen_at": now, "retired_at": None}
        BulkInsert(Tool.__table__, (*shared, *rows[0])).execute(conn, shared, rows)
        ids = dict(conn.execute(select(Tool.name, Tool.id).where(Tool.server_id == server_id)).all())
        conn.execute(insert(ToolSettings), [{"tool_id": i, "enabled": True, "writable": True} for i in ids.values()])
        conn.execute(insert(ToolReview), [{"tool_id": ids[HELD], "fingerprint": "sha256:before",
                                           "digest": "sha256:before", "reviewed_at": now, "reviewed_by": "test"}])
    return console


def range_text(page: Any) -> str:
    return str(page.locator(".pager .range").first.inner_text())


def test_5000_tools_page_to_the_end_and_the_held_one_is_found_by_search(page: Any, big: Console) -> None:
    sign_in(page, big)
    assert range_text(page) == f"1\u201350 of {TOOLS} tools"
    assert page.locator("#nav-held").inner_text() == "1 held"
    page.locator(".pager a[rel=last]").first.click()
    assert range_text(page) == f"{TOOLS - 49}\u2013{TOOLS} of {TOOLS} tools"
    assert page.locator("#tools tbody tr").last.get_attribute("data-tool") == "big/t4998"
    assert page.locator("text=page 100 of 100").count() == 2  # above and below the list

    page.fill("input[name=q]", "signing keys")  # the description, not the name
    page.click("button:has-text('Filter')")
    rows = page.locator("#tools tbody tr")
    assert rows.count() == 1 and rows.first.get_attribute("data-tool") == f"big/{HELD}"
    assert rows.first.locator(".badge.held").inner_text() == "held"

    page.click("#nav-held")
    assert [r.get_attribute("data-tool") for r in page.locator("#tools tbody tr").all()] == [f"big/{HELD}"]
    page.goto(big.at("/console/servers"))
    assert page.locator("tr[data-server=big] [data-held]").inner_text() == "1 held"


def test_a_bulk_disable_changes_the_selected_tools_with_one_audit_entry_each(page: Any, big: Console) -> None:
    sign_in(page, big)
    page.goto(big.at("/console/tools?q=t000&sort=name&order=desc"))
    assert range_text(page) == "1\u201310 of 10 tools"
    assert page.locator("#tools tbody tr").first.get_attribute("data-tool") == "big/t0009"
    page.check("#select-all")
    page.click("button:has-text('Disable selected')")
    assert page.locator(".flash").inner_text() == "Disabled 10 tool(s)."
    entries = audit.list_entries(big.ctx, ADMIN, action="tool.update", limit=100)
    assert sorted(e.object_id for e in entries.items) == [f"tool:big/t000{i}" for i in range(10)]
    page.goto(big.at("/console/audit?action=tool.update"))
    assert range_text(page) == "1\u201310 of 10 entries"
