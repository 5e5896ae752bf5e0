"""The prompts-and-resources page: review and hold state and findings shown, a held prompt's change
summarised, and an operator's review and disable through the page."""

from __future__ import annotations

from typing import Any

from tests.console.conftest import ADMIN, Console, screenshot, sign_in
from tests.library import POISONED, library, set_summarise
from tests.upstreams import modern_http_server
from toolvet.schemas.servers import ServerCreate
from toolvet.services import entries, servers
from toolvet.services.entries import PROMPTS


def discover_now(page: Any, console: Console) -> None:
    page.goto(console.at("/console/servers/library"))
    page.click("button:has-text('Discover now')")
    assert "ok;" in page.locator(".flash").inner_text()


def test_a_held_prompt_shows_what_changed_and_is_offered_again_once_reviewed(page: Any, console: Console) -> None:
    sign_in(page, console)
    upstream = library()
    with modern_http_server(upstream) as up:
        servers.create_server(console.ctx, ADMIN, ServerCreate(name="library", url=up.url))
        discover_now(page, console)
        entries.review_entry(console.ctx, ADMIN, PROMPTS, "library", "summarise")
        set_summarise(upstream, POISONED)
        discover_now(page, console)
    page.get_by_role("link", name="Prompts & resources").click()
    held = page.locator("tr[data-entry='library/summarise']")
    assert held.locator(".badge.held").inner_text() == "held"
    assert "changed" in held.locator(".badge.state-changed").inner_text()
    assert "description" in held.locator(".diff-summary").inner_text()
    assert held.locator(".finding").count() >= 1
    template = page.locator("tr[data-entry='library/books://by-title/{title}']")
    assert template.locator("td[data-label=Kind]").inner_text() == "resource template"
    screenshot(page, "entries")

    page.get_by_role("button", name="Review library/summarise").click()
    assert "Reviewed library/summarise" in page.locator(".flash").inner_text()
    page.get_by_role("button", name="Disable library/greet").click()
    assert page.locator("tr[data-entry='library/summarise'] .badge.on").inner_text() == "offered"
    assert page.locator("tr[data-entry='library/greet'] .badge.off").inner_text() == "disabled"
    summarise = entries.get_entry(console.ctx, ADMIN, PROMPTS, "library", "summarise")
    greet = entries.get_entry(console.ctx, ADMIN, PROMPTS, "library", "greet")
    assert summarise.offered and summarise.reviewed_by and not greet.enabled
