"""``toolvet toolset ...`` against a real database."""

from __future__ import annotations

from tests.cli.conftest import LOCAL_ACTOR, Toolvet
from toolvet.services import audit, tool_sets
from toolvet.services.auth import Principal, Role
from toolvet.services.context import Context

READER = Principal(actor="test:reader", role=Role.READER)


def test_a_set_is_added_from_its_members_and_shown_one_member_a_line(toolvet: Toolvet) -> None:
    added = toolvet.ok("toolset", "add", "research", "--member", "library/lookup", "--member", "search",
                       "--title", "Research", "--description", "Looking things up.")
    shown = toolvet.ok("toolset", "show", "research").stdout

    assert added.stdout == "added tool set research (2 member(s)) at /mcp/sets/research\n"
    assert "Research" in shown and "Looking things up." in shown and "/mcp/sets/research" in shown
    assert "  library/lookup\n" in shown and "  search  (every offered tool)\n" in shown


def test_the_json_of_show_is_what_the_service_returns(toolvet: Toolvet, service: Context) -> None:
    toolvet.ok("toolset", "add", "research", "--member", "library/a/b")
    shown = toolvet.json("toolset", "show", "research")
    assert shown == tool_sets.get_tool_set(service, READER, "research").model_dump(mode="json")
    assert shown["members"] == [{"server": "library", "tool": "a/b"}]  # a tool's own "/" is kept


def test_add_refuses_an_existing_set_unless_told_to_replace_it(toolvet: Toolvet, service: Context) -> None:
    toolvet.ok("toolset", "add", "research", "--member", "library")
    refused = toolvet.fails("toolset", "add", "research", "--member", "search")
    replaced = toolvet.ok("toolset", "add", "research", "--member", "search", "--replace")

    assert refused == "error: tool set 'research' already exists"
    assert replaced.stdout == "replaced tool set research (1 member(s)) at /mcp/sets/research\n"
    assert [(m.server, m.tool) for m in tool_sets.get_tool_set(service, READER, "research").members] == [
        ("search", None)]
    entries = audit.list_entries(service, READER, object_id="tool_set:research").items
    assert [(e.actor, e.action) for e in entries] == [
        (LOCAL_ACTOR, "tool_set.replace"), (LOCAL_ACTOR, "tool_set.create")]


def test_list_shows_each_set_with_its_members(toolvet: Toolvet) -> None:
    toolvet.ok("toolset", "add", "research", "--member", "library/lookup", "--member", "search")
    toolvet.ok("toolset", "add", "empty")
    listing = toolvet.ok("toolset", "list").stdout
    page = toolvet.json("toolset", "list")

    assert "library/lookup search" in listing and "/mcp/sets/empty" in listing and "1-2 of 2 tool sets" in listing
    assert [s["name"] for s in page["items"]] == ["empty", "research"] and page["total"] == 2


def test_a_bad_member_or_name_is_refused_naming_it_and_nothing_is_stored(toolvet: Toolvet, service: Context) -> None:
    bad_member = toolvet.fails("toolset", "add", "research", "--member", "Library/lookup")
    bad_name = toolvet.fails("toolset", "add", "My_Set", "--member", "library")
    twice = toolvet.fails("toolset", "add", "research", "--member", "library", "--member", "library/lookup")

    assert bad_member.startswith("error: members.0.server: 'Library' is not a server name")
    assert bad_name.startswith("error: name: 'My_Set' does not match")
    assert twice.startswith("error: members.1: library/lookup is already in the set")
    assert tool_sets.list_tool_sets(service, READER).total == 0


def test_remove_deletes_a_set_with_yes_and_refuses_an_unknown_one(toolvet: Toolvet, service: Context) -> None:
    toolvet.ok("toolset", "add", "research", "--member", "library")
    removed = toolvet.ok("toolset", "remove", "research", "--yes")
    unknown = toolvet.fails("toolset", "remove", "research", "--yes")

    assert removed.stdout == "removed tool set research\n"
    assert unknown == "error: tool set 'research' not found"
    assert tool_sets.list_tool_sets(service, READER).total == 0


def test_remove_without_yes_and_without_a_terminal_refuses(toolvet: Toolvet, service: Context) -> None:
    toolvet.ok("toolset", "add", "research", "--member", "library")
    toolvet.fails("toolset", "remove", "research")
    assert tool_sets.list_tool_sets(service, READER).total == 1
