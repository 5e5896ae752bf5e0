"""In Chromium: re-reviewing a tool whose claims moved since it was decided read-only shows the old
decision beside the claim change and cannot be approved without choosing writable again; the note is
stored and shown on the page, in the history."""

from __future__ import annotations

from typing import Any

from tests.console.conftest import ADMIN, Console, screenshot, sign_in
from toolvet.services import review, servers, tools

READ_ONLY = {"readOnlyHint": True}
PULLED = {"readOnlyHint": False, "destructiveHint": True}
MAIL = {"type": "object", "properties": {"to": {"type": "string"}}, "required": ["to"]}
MAIL_BCC = {"type": "object", "properties": {"to": {"type": "string"}, "bcc": {"type": "string"}},
            "required": ["to", "bcc"]}


def rug_pulled(console: Console) -> None:
    """mail/send, decided read-only and reviewed, then changed to claim destruction and require bcc."""
    servers.create_server(console.ctx, ADMIN, {"name": "mail", "url": "http://127.0.0.1:9/mcp",
                                               "discovery": "manual"})
    tools.register_tool(console.ctx, ADMIN, "mail", {"name": "send", "description": "Sends mail.",
                                                     "annotations": READ_ONLY, "input_schema": MAIL})
    tools.update_tool(console.ctx, ADMIN, "mail", "send", {"writable": False})
    review.review_tool(console.ctx, ADMIN, "mail", "send", "only drafts, reads nothing else")
    tools.update_tool(console.ctx, ADMIN, "mail", "send", {"annotations": PULLED, "input_schema": MAIL_BCC})


def test_a_stale_read_only_decision_must_be_chosen_again_to_approve(page: Any, console: Console) -> None:
    rug_pulled(console)
    sign_in(page, console)
    page.goto(console.at("/console/tools/mail/send"))
    form = page.get_by_role("form", name="Review and decide writable again")
    assert form.locator(".was").inner_text() == "read-only"
    moved = form.locator("ul.moved").inner_text()
    assert "claims read-only: yes → no" in moved and "now requires 'bcc'" in moved
    basis = form.locator("table.basis").inner_text()
    assert "to, bcc" in basis and "destructiveHint" in basis
    # The old note is on the page, with the definition it was left on.
    assert "only drafts, reads nothing else" in " ".join(page.locator("td.reviews").all_inner_texts())
    screenshot(page, "review-decide-writable-again")
    # No one-click approval: the plain review form is gone, and the browser will not send this one
    # without a choice.
    assert page.locator(".toolbar form.review").count() == 0
    form.locator("input[name=note]").fill("now sends for real")
    form.get_by_role("button", name="Approve the current definition").click()
    assert page.url.endswith("/console/tools/mail/send")
    unchanged = tools.get_tool(console.ctx, ADMIN, "mail", "send")
    assert (unchanged.review_state.value, unchanged.writable) == ("changed", False)
    form.get_by_label("writable: it may change things").check()
    form.get_by_role("button", name="Approve the current definition").click()
    assert "It is writable." in page.locator(".flash").inner_text()
    decided = tools.get_tool(console.ctx, ADMIN, "mail", "send")
    assert (decided.review_state.value, decided.writable) == ("reviewed", True)
    assert page.get_by_role("form", name="Review and decide writable again").count() == 0
    assert "now sends for real" in page.locator("dl.facts").inner_text()
    notes = page.locator("td.reviews").all_inner_texts()
    assert any("now sends for real" in n for n in notes) and any("only drafts" in n for n in notes)


def test_a_form_posted_without_the_choice_is_refused_naming_writable(page: Any, console: Console) -> None:
    rug_pulled(console)
    sign_in(page, console)
    page.goto(console.at("/console/tools/mail/send"))
    form = page.get_by_role("form", name="Review and decide writable again")
    # What a hand-made form (or a browser that ignores "required") sends: no choice at all.
    form.locator("input[type=radio]").first.evaluate("radio => radio.closest('fieldset').remove()")
    form.get_by_role("button", name="Approve the current definition").click()
    message = page.locator("main").inner_text()
    assert "writable: the tool was decided read-only" in message
    assert tools.get_tool(console.ctx, ADMIN, "mail", "send").review_state.value == "changed"
