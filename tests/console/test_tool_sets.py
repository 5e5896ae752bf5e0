"""Tool sets in the console: an operator lists, adds, edits and deletes them; a reader only reads."""

from __future__ import annotations

from typing import Any

import pytest

from tests.console.conftest import ADMIN, Console, new_page, screenshot, sign_in
from toolvet.errors import NotFound
from toolvet.schemas.tool_sets import ToolSetMember
from toolvet.services import audit, tool_sets


def test_an_operator_adds_edits_and_deletes_a_tool_set(page: Any, console: Console) -> None:
    sign_in(page, console)
    page.goto(console.at("/console/sets"))
    assert "No tool sets yet." in page.inner_text("main")
    page.click("a:has-text('Add a tool set')")
    page.fill("input[name=name]", "research")
    page.fill("input[name=title]", "Research desk")
    page.fill("textarea[name=members]", "library/lookup\n\nweather\n")
    page.click("button:has-text('Add tool set')")
    assert "served at /mcp/sets/research" in page.locator(".flash").inner_text()
    made = tool_sets.get_tool_set(console.ctx, ADMIN, "research")
    assert (made.title, made.members) == ("Research desk", [ToolSetMember(server="library", tool="lookup"),
                                                            ToolSetMember(server="weather")])

    page.fill("textarea[name=members]", "library/lookup\nlibrary/find/by/isbn")
    page.click("button:has-text('Save changes')")
    assert "Tool set research saved." in page.locator(".flash").inner_text()
    assert page.input_value("textarea[name=members]") == "library/lookup\nlibrary/find/by/isbn"
    edited = tool_sets.get_tool_set(console.ctx, ADMIN, "research")
    assert [m.tool for m in edited.members] == ["lookup", "find/by/isbn"]

    page.goto(console.at("/console/sets"))
    row = page.locator("tr", has_text="research")
    assert "/mcp/sets/research" in row.inner_text() and "library/find/by/isbn" in row.inner_text()

    page.goto(console.at("/console/sets/research"))
    page.get_by_role("button", name="Delete tool set research").click()
    assert "is no longer served" in page.locator(".flash").inner_text()
    with pytest.raises(NotFound):
        tool_sets.get_tool_set(console.ctx, ADMIN, "research")
    actions = [e.action for e in audit.list_entries(console.ctx, ADMIN, object_id="tool_set:research").items]
    assert sorted(actions) == ["tool_set.create", "tool_set.delete", "tool_set.replace"]


def test_a_refused_tool_set_keeps_what_was_typed_and_says_why(page: Any, console: Console) -> None:
    sign_in(page, console)
    page.goto(console.at("/console/sets/new"))
    page.fill("input[name=name]", "desk")
    page.fill("textarea[name=members]", "library\nlibrary/lookup")  # a tool of a server taken whole
    page.click("button:has-text('Add tool set')")
    assert page.locator(".flash.error").is_visible()
    assert page.input_value("textarea[name=members]") == "library\nlibrary/lookup"
    with pytest.raises(NotFound):
        tool_sets.get_tool_set(console.ctx, ADMIN, "desk")


def test_a_reader_sees_tool_sets_but_no_form(browser: Any, console: Console) -> None:
    tool_sets.create_tool_set(console.ctx, ADMIN, "desk", {"members": [{"server": "library"}]})
    page = new_page(browser, width=390, height=844)
    sign_in(page, console, "reader")
    page.goto(console.at("/console/sets"))
    assert "Add a tool set" not in page.inner_text("main")
    page.goto(console.at("/console/sets/desk"))
    assert page.locator("form.card").count() == 0 and "library" in page.inner_text("main")
    screenshot(page, "tool-set-reader-phone")
    page.context.close()
