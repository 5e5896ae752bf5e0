"""Prompts and resources over the API: listed with their state, enabled and disabled, reviewed, and a
changed one's diff; each action audited and refused to a reader."""

from __future__ import annotations

from urllib.parse import quote

import anyio
import httpx2
import pytest

from tests.api.conftest import Headers
from tests.library import POISONED, library, set_summarise
from tests.upstreams import modern_http_server
from toolvet.services import audit, discovery, servers
from toolvet.services.auth import Principal
from toolvet.services.context import Context

pytestmark = pytest.mark.anyio

TEMPLATE = quote("books://by-title/{title}", safe="")


async def discover(ctx: Context, admin: Principal) -> None:
    with anyio.fail_after(30):
        [run] = await discovery.discover(ctx, admin, ["library"])
    assert run.status == "ok", run.error


async def test_prompts_and_resources_are_listed_with_their_review_and_hold_state(
    client: httpx2.AsyncClient, as_reader: Headers, ctx: Context, admin: Principal
) -> None:
    with modern_http_server(library()) as up:
        servers.create_server(ctx, admin, {"name": "library", "url": up.url})
        await discover(ctx, admin)
    prompts = (await client.get("/api/v1/prompts", headers=as_reader)).json()
    resources = (await client.get("/api/v1/resources?server=library", headers=as_reader)).json()
    template = await client.get(f"/api/v1/servers/library/resources/{TEMPLATE}", headers=as_reader)
    assert [(p["server"], p["key"], p["offered"], p["held"]) for p in prompts["items"]] == [
        ("library", "greet", True, False), ("library", "summarise", True, False)]
    assert [(r["kind"], r["key"]) for r in resources["items"]] == [
        ("resource", "books://catalogue"), ("template", "books://by-title/{title}")]
    assert template.status_code == 200 and template.json()["definition"]["name"] == "book"
    missing = await client.get("/api/v1/servers/library/prompts/nothing", headers=as_reader)
    assert missing.status_code == 404 and "prompt library/nothing" in missing.text


async def test_an_operator_disables_reviews_and_sees_the_diff_of_a_changed_prompt(
    client: httpx2.AsyncClient, as_operator: Headers, as_reader: Headers, ctx: Context, admin: Principal
) -> None:
    upstream = library()
    with modern_http_server(upstream) as up:
        servers.create_server(ctx, admin, {"name": "library", "url": up.url})
        await discover(ctx, admin)
        reviewed = await client.post("/api/v1/servers/library/prompts/summarise/review", headers=as_operator,
                                     json={"note": "reads fine"})
        set_summarise(upstream, POISONED)
        await discover(ctx, admin)
    held = (await client.get("/api/v1/prompts?held=true", headers=as_reader)).json()["items"]
    diff = (await client.get("/api/v1/servers/library/prompts/summarise/diff", headers=as_reader)).json()
    off = await client.patch(f"/api/v1/servers/library/resources/{TEMPLATE}", headers=as_operator,
                             json={"enabled": False})
    refused = await client.patch("/api/v1/servers/library/prompts/greet", headers=as_reader, json={"enabled": False})
    assert reviewed.status_code == 200 and reviewed.json()["review_state"] == "reviewed"
    assert [(p["key"], p["review_state"], p["offered"]) for p in held] == [("summarise", "changed", False)]
    assert diff["compared_with"] == "reviewed" and diff["summary"] and diff["changes"][0]["path"] == "description"
    assert diff["changes"][0]["after"] == POISONED
    assert off.status_code == 200 and off.json()["enabled"] is False and off.json()["offered"] is False
    assert refused.status_code == 403
    actions = [e.action for e in audit.list_entries(ctx, admin).items]
    assert "prompt.review" in actions and "template.update" in actions
