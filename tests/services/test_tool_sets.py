"""Tool sets: who may write and read them, what a member may be, and one audit entry per change — on
SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from toolvet.db.models import AuditEntry
from toolvet.errors import Conflict, Forbidden, InvalidInput, NotFound
from toolvet.services import tool_sets
from toolvet.services.auth import Principal, Role
from toolvet.services.context import Context

RESEARCH: dict[str, Any] = {
    "title": "Research",
    "description": "Looking things up.",
    "members": [{"server": "library", "tool": "lookup"}, {"server": "search"}],
}
CONSUMER = Principal(actor="token:alice", role=Role.CONSUMER, user="alice", scope="default")


def audit_of(ctx: Context, name: str) -> list[tuple[str, str, Any, Any]]:
    with ctx.db.transaction() as session:
        rows = session.scalars(
            select(AuditEntry).where(AuditEntry.object_id == f"tool_set:{name}").order_by(AuditEntry.id)
        ).all()
        return [(r.actor, r.action, r.before, r.after) for r in rows]


def test_an_operator_creates_a_set_whose_servers_need_not_be_registered(ctx: Context, operator: Principal):
    out = tool_sets.create_tool_set(ctx, operator, "research", RESEARCH)

    assert (out.name, out.title, out.description, out.endpoint) == (
        "research", "Research", "Looking things up.", "/mcp/sets/research")
    assert [(m.server, m.tool) for m in out.members] == [("library", "lookup"), ("search", None)]
    assert tool_sets.get_tool_set(ctx, operator, "research") == out
    [(actor, action, before, after)] = audit_of(ctx, "research")
    assert (actor, action, before) == ("test:operator", "tool_set.create", None)
    assert after["members"] == [{"server": "library", "tool": "lookup"}, {"server": "search", "tool": None}]


def test_a_replacement_changes_the_whole_definition_and_is_audited_with_before_and_after(
    ctx: Context, operator: Principal
):
    first = tool_sets.create_tool_set(ctx, operator, "research", RESEARCH)
    second = tool_sets.replace_tool_set(ctx, operator, "research", {"members": [{"server": "library"}]})

    assert (second.title, second.description) == (None, None)
    assert [(m.server, m.tool) for m in second.members] == [("library", None)]
    assert second.created_at == first.created_at and second.updated_at > first.updated_at
    actions = audit_of(ctx, "research")
    assert [a[1] for a in actions] == ["tool_set.create", "tool_set.replace"]
    assert actions[1][2]["title"] == "Research" and actions[1][3]["title"] is None


def test_put_creates_then_replaces_and_says_which(ctx: Context, admin: Principal):
    _, created = tool_sets.put_tool_set(ctx, admin, "research", RESEARCH)
    out, again = tool_sets.put_tool_set(ctx, admin, "research", {**RESEARCH, "title": "Desk"})
    assert (created, again, out.title) == (True, False, "Desk")
    assert [a[1] for a in audit_of(ctx, "research")] == ["tool_set.create", "tool_set.replace"]


def test_create_refuses_an_existing_name_and_replace_or_delete_a_missing_one(ctx: Context, operator: Principal):
    tool_sets.create_tool_set(ctx, operator, "research", RESEARCH)
    with pytest.raises(Conflict, match="already exists"):
        tool_sets.create_tool_set(ctx, operator, "research", RESEARCH)
    with pytest.raises(NotFound, match="'nowhere'"):
        tool_sets.replace_tool_set(ctx, operator, "nowhere", RESEARCH)
    with pytest.raises(NotFound):
        tool_sets.delete_tool_set(ctx, operator, "nowhere")
    assert [a[1] for a in audit_of(ctx, "research")] == ["tool_set.create"]


def test_a_deleted_set_is_gone_and_its_removal_audited(ctx: Context, operator: Principal):
    tool_sets.create_tool_set(ctx, operator, "research", RESEARCH)
    tool_sets.delete_tool_set(ctx, operator, "research")
    with pytest.raises(NotFound):
        tool_sets.get_tool_set(ctx, operator, "research")
    [_, (_, action, before, after)] = audit_of(ctx, "research")
    assert (action, before["name"], after) == ("tool_set.delete", "research", None)


def test_readers_read_sets_and_may_not_write_them_and_consumers_may_do_neither(
    ctx: Context, operator: Principal, reader: Principal
):
    tool_sets.create_tool_set(ctx, operator, "research", RESEARCH)
    assert [s.name for s in tool_sets.list_tool_sets(ctx, reader).items] == ["research"]
    for write in (lambda p: tool_sets.create_tool_set(ctx, p, "other", RESEARCH),
                  lambda p: tool_sets.replace_tool_set(ctx, p, "research", RESEARCH),
                  lambda p: tool_sets.delete_tool_set(ctx, p, "research")):
        with pytest.raises(Forbidden):
            write(reader)
        with pytest.raises(Forbidden):
            write(CONSUMER)
    with pytest.raises(Forbidden):
        tool_sets.get_tool_set(ctx, CONSUMER, "research")
    assert [a[1] for a in audit_of(ctx, "research")] == ["tool_set.create"]


def test_sets_are_listed_by_name_in_pages(ctx: Context, admin: Principal):
    for name in ("zeta", "alpha", "mid"):
        tool_sets.create_tool_set(ctx, admin, name, {"members": []})
    page = tool_sets.list_tool_sets(ctx, admin, limit=2, offset=1)
    assert ([s.name for s in page.items], page.total) == (["mid", "zeta"], 3)


@pytest.mark.parametrize(("name", "data", "field", "says"), [
    ("Research", RESEARCH, "name", "does not match"),
    ("a" * 33, RESEARCH, "name", "does not match"),
    ("research", {"members": [{"server": "Library"}]}, "members.0.server", "is not a server name"),
    ("research", {"members": [{"server": "library", "tool": ""}]}, "members.0.tool", "at least 1"),
    ("research", {"members": [{"server": "library", "tool": "a\nb"}]}, "members.0.tool", "control"),
    ("research", {"members": [{"server": "a"}, {"server": "a"}]}, "members.1", "listed twice"),
    ("research", {"members": [{"server": "a"}, {"server": "a", "tool": "t"}]}, "members.1", "every tool of a"),
    ("research", {"members": [{"server": "a", "tools": ["t"]}]}, "members.0.tools", "Extra inputs"),
    ("research", {"members": [], "created_at": "2026-01-01T00:00:00Z"}, "created_at", "read-only"),
    ("research", {"title": "no members"}, "members", "required"),
    ("research", {"members": [{"server": f"s{i}"} for i in range(1001)]}, "members", "at most 1000"),
])
def test_bad_definitions_are_refused_naming_the_field(
    ctx: Context, operator: Principal, name: str, data: dict[str, Any], field: str, says: str
):
    with pytest.raises(InvalidInput) as raised:
        tool_sets.create_tool_set(ctx, operator, name, data)
    assert raised.value.field == field and says in raised.value.reason
    assert tool_sets.list_tool_sets(ctx, operator).total == 0


def test_the_gateways_read_returns_only_sets_that_exist(ctx: Context, operator: Principal):
    tool_sets.create_tool_set(ctx, operator, "research", RESEARCH)
    found = tool_sets.read_tool_sets(ctx, ["research", "nowhere"])
    assert list(found) == ["research"] and found["research"] == tool_sets.get_tool_set(ctx, operator, "research")
    assert tool_sets.read_tool_sets(ctx, []) == {}
