"""The approval floor in the console: an operator sets it on a server and on a tool, sees it, and
approves an operator-floor call from the calls page; the call's own consumer token is refused."""

from __future__ import annotations

from typing import Any

from tests.console.conftest import ADMIN, Console, new_page, sign_in
from tests.upstreams import modern_http_server
from toolvet.services import servers, tools


def test_an_operator_sets_the_floor_and_approves_an_operator_floor_call_from_the_page(
    browser: Any, console: Console
) -> None:
    page = new_page(browser)
    with modern_http_server() as upstream:
        sign_in(page, console)
        servers.create_server(console.ctx, ADMIN, {"name": "demo", "url": upstream.url})
        page.goto(console.at("/console/servers/demo"))
        page.click("button:has-text('Discover now')")
        assert "ok;" in page.locator(".flash").inner_text()

        page.goto(console.at("/console/servers/demo"))
        page.select_option("select[name=approval]", "always")
        page.click("button:has-text('Save changes')")
        assert servers.get_server(console.ctx, ADMIN, "demo").approval == "always"
        assert page.locator("select[name=approval]").input_value() == "always"

        page.goto(console.at("/console/tools/demo/tool_1"))
        assert "every call asks" in page.locator(".badges").inner_text()
        page.select_option("form.approval select[name=approval]", "operator")
        page.click("button:has-text('Set floor')")
        assert "approval floor operator" in page.locator(".flash").inner_text()
        assert "every call asks an operator" in page.locator(".badges").inner_text()
        tool = tools.get_tool(console.ctx, ADMIN, "demo", "tool_1")
        assert (tool.approval, tool.effective_approval) == ("operator", "operator")

        api = page.context.request
        consumer = {"Authorization": f"Bearer {console.tokens['consumer']}"}
        made = api.post(console.at("/api/v1/calls"), headers=consumer,
                        data={"server_type": "demo", "tool_name": "tool_1", "arguments": {"text": "hi"}})
        assert made.status == 202, made.text()
        call_id = made.json()["id"]
        refused = api.post(console.at(f"/api/v1/calls/{call_id}/approve"), headers=consumer, data={})
        assert refused.status == 403 and "only an operator or an admin" in refused.text()

        page.goto(console.at("/console/calls"))
        row = page.locator(f"tr[data-call='{call_id}']")
        assert "approval floor operator" in row.inner_text()
        row.get_by_role("button", name="Approve", exact=True).click()
        assert "approved" in page.locator(".flash").inner_text()
        status = api.get(console.at(f"/api/v1/calls/{call_id}"), headers=consumer).json()["status"]
        assert status == "done"
    page.context.close()
