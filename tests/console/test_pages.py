"""Pages without JavaScript, the audit log's filters, and a phone-width screenshot."""

from __future__ import annotations

from typing import Any

from tests.console.conftest import ADMIN, Console, new_page, screenshot, sign_in
from tests.upstreams import raw_listing_server
from toolvet.schemas.servers import ServerCreate
from toolvet.services import servers, tools

LISTING = {
    None: {
        "tools": [
            {
                "name": "lookup",
                "description": "Look a word up.",
                "annotations": {"readOnlyHint": True},
                "inputSchema": {
                    "type": "object",
                    "properties": {"word": {"type": "string"}},
                    "required": ["word"],
                },
            },
        ]
    }
}


def registered(page: Any, console: Console, url: str) -> None:
    """Server ``dict`` registered and discovered, through the page (Playwright owns this thread's loop)."""
    servers.create_server(console.ctx, ADMIN, ServerCreate(name="dict", url=url))
    page.goto(console.at("/console/servers/dict"))
    page.click("button:has-text('Discover now')")
    assert "ok; 1 added" in page.locator(".flash").inner_text()


def test_without_javascript_an_operator_can_toggle_and_review(browser: Any, console: Console) -> None:
    page = new_page(browser, javascript=False)
    sign_in(page, console)
    with raw_listing_server(LISTING) as upstream:
        registered(page, console, upstream.url)
    page.goto(console.at("/console/tools"))
    page.get_by_role("button", name="Mark read-only dict/lookup").click()
    page.get_by_role("button", name="Disable dict/lookup").click()
    page.goto(console.at("/console/tools/dict/lookup"))
    page.fill("input[name=note]", "checked by hand")
    page.click("button:has-text('Approve the current definition')")
    tool = tools.get_tool(console.ctx, ADMIN, "dict", "lookup")
    assert (tool.writable, tool.enabled, tool.review_state.value) == (False, False, "reviewed")
    page.context.close()


def test_the_audit_log_is_newest_first_and_filters_by_actor_and_object(page: Any, console: Console) -> None:
    sign_in(page, console)
    with raw_listing_server(LISTING) as upstream:
        registered(page, console, upstream.url)
    tools.update_tool(console.ctx, ADMIN, "dict", "lookup", {"writable": False})
    page.goto(console.at("/console/tools"))
    page.get_by_role("button", name="Disable dict/lookup").click()
    page.goto(console.at("/console/audit"))
    actions = page.locator("#audit td[data-label=Action]").all_inner_texts()
    assert actions[:3] == ["tool.update", "tool.update", "server.create"]
    page.fill("input[name=actor]", "token:operator")
    page.click("button:has-text('Filter')")
    assert page.locator("#audit tbody tr").count() == 1
    assert "enabled" in page.locator("#audit td[data-label=Change]").inner_text()
    page.goto(console.at("/console/audit"))
    page.locator("#audit a", has_text="server:dict").first.click()
    assert page.locator("#audit td[data-label=Action]").all_inner_texts() == ["server.create"]
    screenshot(page, "audit")


def test_the_pages_read_on_a_phone(browser: Any, console: Console) -> None:
    page = new_page(browser, width=390, height=844)
    sign_in(page, console)
    with raw_listing_server(LISTING) as upstream:
        registered(page, console, upstream.url)
    for name, path in (
        ("phone-tools", "/console/tools"),
        ("phone-servers", "/console/servers"),
        ("phone-review", "/console/tools/dict/lookup"),
    ):
        page.goto(console.at(path))
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"{path} scrolls sideways ({width}px)"
        screenshot(page, name)
    page.context.close()
