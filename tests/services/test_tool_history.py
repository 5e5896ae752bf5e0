"""A tool's history holds every definition it has had, each stored once: the current one in the claim,
every one it left in its history row (written before the claim changed), for tools edited by hand as for
discovered ones (those are in test_discovery_service.py)."""

from __future__ import annotations

from sqlalchemy import select

from toolvet.db.models import ToolDefinition
from toolvet.services import review, servers, tools
from toolvet.services.auth import Principal
from toolvet.services.context import Context

OBJECT = {"type": "object", "properties": {"q": {"type": "string"}}}


def test_a_hand_edited_tool_keeps_each_definition_it_left(ctx: Context, admin: Principal) -> None:
    servers.create_server(ctx, admin, {"name": "m", "url": "http://m.example/mcp", "discovery": "manual"})
    tools.register_tool(ctx, admin, "m", {"name": "t", "description": "First.", "input_schema": OBJECT})
    for description in ("Second.", "First.", "Third."):
        tools.update_tool(ctx, admin, "m", "t", {"description": description})

    page = review.history(ctx, admin, "m", "t")
    assert [d.definition["description"] for d in page.items] == ["First.", "Second.", "Third."]
    assert [d.current for d in page.items] == [False, False, True]
    with ctx.db.transaction() as session:
        stored = session.scalars(select(ToolDefinition.definition).order_by(ToolDefinition.id)).all()
    assert [d["description"] if d else None for d in stored] == ["First.", "Second.", None]
    for item in page.items:
        assert review.diff(ctx, admin, "m", "t", against=item.digest).before == item.definition
    # Never reviewed: compared with what it had before "Third.", which is "First." again, not "Second.".
    assert review.diff(ctx, admin, "m", "t").before["description"] == "First."
