"""Prompts, resources and resource templates discovered, stored verbatim, fingerprinted, given findings,
held after a change past review, and retired when no longer listed (SQLite and PostgreSQL)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from sqlalchemy import func, select

from tests.library import POISONED, library, set_summarise
from tests.upstreams import handshake_only_http_server, modern_http_server, raw_listing_server
from toolvet.db.models import Entry, EntryDefinition, EntryReview, EntrySettings
from toolvet.domain.entries import KINDS
from toolvet.domain.fingerprint import fingerprint
from toolvet.services import discovery, entries, servers
from toolvet.services.entries import PROMPTS, RESOURCES

pytestmark = pytest.mark.anyio


async def discover(ctx: Any, admin: Any) -> Any:
    with anyio.fail_after(30):
        [run] = await discovery.discover(ctx, admin, ["library"])
    assert run.status == "ok", run.error
    return run


@pytest.mark.parametrize("served", [modern_http_server, handshake_only_http_server], ids=["2026-07-28", "handshake"])
async def test_a_pass_stores_each_prompt_resource_and_template_verbatim_with_its_fingerprint(ctx, admin, served):
    with served(library()) as up:
        servers.create_server(ctx, admin, {"name": "library", "url": up.url})
        await discover(ctx, admin)
    prompts = entries.list_entries(ctx, admin, PROMPTS).items
    resources = entries.list_entries(ctx, admin, RESOURCES).items
    assert [(p.kind, p.key) for p in prompts] == [("prompt", "greet"), ("prompt", "summarise")]
    assert [(r.kind, r.key) for r in resources] == [("resource", "books://catalogue"),
                                                    ("template", "books://by-title/{title}")]
    summarise = prompts[1]
    assert summarise.definition["description"] == "Summarise a book."
    assert summarise.definition["arguments"][0]["name"] == "title"
    assert summarise.fingerprint == fingerprint(summarise.definition, KINDS["prompt"].contract)
    assert all(e.enabled and e.offered and not e.held and e.review_state == "unreviewed" for e in prompts + resources)


async def test_a_prompt_changed_after_review_is_held_and_its_diff_shows_the_change(ctx, admin):
    upstream = library()
    with modern_http_server(upstream) as up:
        servers.create_server(ctx, admin, {"name": "library", "url": up.url})
        await discover(ctx, admin)
        entries.review_entry(ctx, admin, PROMPTS, "library", "summarise", note="fine")
        set_summarise(upstream, POISONED)
        await discover(ctx, admin)
    held = entries.get_entry(ctx, admin, PROMPTS, "library", "summarise")
    untouched = entries.get_entry(ctx, admin, PROMPTS, "library", "greet")
    diff = entries.diff_entry(ctx, admin, PROMPTS, "library", "summarise")
    assert held.review_state == "changed" and held.held and not held.offered
    assert any(f["code"] for f in held.findings)  # the new description earns a finding
    assert untouched.offered and untouched.review_state == "unreviewed"
    assert diff.compared_with == "reviewed" and diff.before["description"] == "Summarise a book."
    assert [c.path for c in diff.changes] == ["description"] and diff.after["description"] == POISONED
    refusals = {(e.server, e.key): e.refusal for e in entries.listed_entries(ctx)}
    assert "held for review" in refusals[("library", "summarise")] and refusals[("library", "greet")] is None

    entries.review_entry(ctx, admin, PROMPTS, "library", "summarise")
    assert entries.get_entry(ctx, admin, PROMPTS, "library", "summarise").offered


async def test_a_disabled_prompt_is_not_offered_and_a_pass_does_not_enable_it_again(ctx, admin):
    with modern_http_server(library()) as up:
        servers.create_server(ctx, admin, {"name": "library", "url": up.url})
        await discover(ctx, admin)
        entries.update_entry(ctx, admin, PROMPTS, "library", "greet", {"enabled": False})
        await discover(ctx, admin)
    greet = entries.get_entry(ctx, admin, PROMPTS, "library", "greet")
    assert not greet.enabled and not greet.offered and not greet.held
    assert "disabled" in {e.key: e.refusal for e in entries.listed_entries(ctx)}["greet"]


def _listing(prompts: list[Any]) -> dict[Any, Any]:
    return {None: {"tools": [], "prompts": prompts}}


async def test_an_entry_no_longer_listed_is_retired_and_a_bad_one_rejected_with_its_kind(ctx, admin):
    upstream = library()
    with modern_http_server(upstream) as up:
        servers.create_server(ctx, admin, {"name": "library", "url": up.url})
        await discover(ctx, admin)
        upstream.remove_prompt("greet")
        await discover(ctx, admin)
    greet = entries.get_entry(ctx, admin, PROMPTS, "library", "greet")
    assert greet.retired_at is not None and not greet.enabled and not greet.offered
    assert "greet" not in {e.key for e in entries.listed_entries(ctx)}


async def test_a_server_that_declares_no_prompts_is_never_asked_for_them(ctx, admin):
    with raw_listing_server({None: {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}}) as up:
        servers.create_server(ctx, admin, {"name": "library", "url": up.url})
        run = await discover(ctx, admin)
        asked = [r.method for r in up.requests]
    assert run.error is None and "prompts/list" not in asked and "resources/list" not in asked
    assert entries.list_entries(ctx, admin, PROMPTS + RESOURCES).total == 0


async def test_a_flagged_prompt_is_held_until_reviewed_on_a_server_holding_flagged_ones(ctx, admin):
    upstream = library()
    set_summarise(upstream, POISONED)
    with modern_http_server(upstream) as up:
        servers.create_server(ctx, admin, {"name": "library", "url": up.url, "hold_flagged_tools": True})
        await discover(ctx, admin)
    flagged = entries.get_entry(ctx, admin, PROMPTS, "library", "summarise")
    assert flagged.held and not flagged.offered and flagged.review_state == "unreviewed"
    assert "a finding on it must be reviewed" in {e.key: e.refusal for e in entries.listed_entries(ctx)}["summarise"]
    assert entries.review_entry(ctx, admin, PROMPTS, "library", "summarise").offered


async def test_removing_a_server_removes_its_entries(ctx, admin):
    with modern_http_server(library()) as up:
        servers.create_server(ctx, admin, {"name": "library", "url": up.url})
        await discover(ctx, admin)
    entries.review_entry(ctx, admin, PROMPTS, "library", "greet")
    servers.delete_server(ctx, admin, "library")
    with ctx.db.transaction() as session:
        left = [session.scalar(select(func.count()).select_from(table))
                for table in (Entry, EntrySettings, EntryReview, EntryDefinition)]
    assert left == [0, 0, 0, 0]


async def test_a_prompt_never_reviewed_is_diffed_against_the_definition_it_left_last(ctx, admin):
    # A -> B -> A -> C: the prompt had A before C; B is only the newer history row.
    upstream = library()
    with modern_http_server(upstream) as up:
        servers.create_server(ctx, admin, {"name": "library", "url": up.url})
        await discover(ctx, admin)
        for description in ("A second wording.", "Summarise a book.", "A third wording."):
            set_summarise(upstream, description)
            await discover(ctx, admin)
    diff = entries.diff_entry(ctx, admin, PROMPTS, "library", "summarise")
    assert diff.compared_with == "previous"
    assert (diff.before["description"], diff.after["description"]) == ("Summarise a book.", "A third wording.")
