"""What the gateway offers of prompts, resources and templates follows their vetting: a prompt held
after a change past review, or disabled, is neither listed nor served; what is listed is what
discovery stored."""

from __future__ import annotations

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from tests.gateway.conftest import ADMIN, BOUND, Toolvet
from tests.gateway.test_views import ERAS, client_at
from tests.library import POISONED, library, set_summarise
from tests.upstreams import modern_http_server
from toolvet.services import discovery, entries
from toolvet.services.entries import PROMPTS, RESOURCES

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", ERAS)
async def test_a_prompt_held_after_a_change_is_not_listed_and_getting_it_is_refused_saying_why(
    toolvet: Toolvet, mode
):
    upstream = library()
    with modern_http_server(upstream) as up:
        await toolvet.register("library", up.url)
        entries.review_entry(toolvet.ctx, ADMIN, PROMPTS, "library", "summarise")
        set_summarise(upstream, POISONED)
        with anyio.fail_after(BOUND):
            [run] = await discovery.discover(toolvet.ctx, ADMIN, ["library"])
        assert run.status == "ok"
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with client_at(toolvet, "/mcp", toolvet.alice, mode) as client:
                listed = [p.name for p in (await client.list_prompts()).prompts]
                greeting = await client.get_prompt("library_greet", {"reader": "Ann"})
                with pytest.raises(MCPError, match="held for review: its definition changed") as refused:
                    await client.get_prompt("library_summarise", {"title": "Emma"})
            async with client_at(toolvet, "/mcp/servers/library", toolvet.alice, mode) as own:
                own_listed = [p.name for p in (await own.list_prompts()).prompts]
                with pytest.raises(MCPError, match="held for review"):
                    await own.get_prompt("summarise", {"title": "Emma"})
    assert listed == ["library_greet"] and own_listed == ["greet"]
    assert greeting.messages[0].content.text == "Say hello to Ann."
    assert "library_summarise" in str(refused.value)


async def test_a_disabled_resource_and_template_are_not_listed_but_the_rest_is_as_stored(toolvet: Toolvet):
    with modern_http_server(library()) as up:
        await toolvet.register("library", up.url)
        entries.update_entry(toolvet.ctx, ADMIN, RESOURCES, "library", "books://by-title/{title}", {"enabled": False})
        entries.update_entry(toolvet.ctx, ADMIN, PROMPTS, "library", "greet", {"enabled": False})
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with client_at(toolvet, "/mcp", toolvet.alice, "2026-07-28") as client:
                resources = (await client.list_resources()).resources
                templates = (await client.list_resource_templates()).resource_templates
                with pytest.raises(MCPError, match="disabled by the operator"):
                    await client.get_prompt("library_greet", {"reader": "Ann"})
                read = await client.read_resource("books://catalogue")  # contents pass through unchanged
    assert [(str(r.uri), r.description) for r in resources] == [("books://catalogue", "Every book.")]
    assert templates == []
    assert read.contents[0].text == "Dune; Emma"
