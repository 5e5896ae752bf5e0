"""server-everything's prompts, resources and resource templates, discovered over stdio (and its HTTP
transports), are stored as the official Python SDK lists them, and federated by the gateway."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from tests.gateway.conftest import ADMIN
from tests.real.conftest import BOUND, NAMES, World
from tests.real.references import direct_client
from toolvet.gateway.federation import MARKER, namespaced, split_namespaced
from toolvet.services import entries

pytestmark = pytest.mark.anyio

EVERYTHING = ["everything-stdio", "everything-sse", "everything-http"]
# (entries' kind, the SDK client's list method, the page member holding the items, the item's key)
LISTS = [("prompt", "list_prompts", "prompts", "name"), ("resource", "list_resources", "resources", "uri"),
         ("template", "list_resource_templates", "resource_templates", "uri_template")]


async def listed_directly(world: World, name: str) -> dict[str, list[dict[str, Any]]]:
    """Every item of each list, as the official SDK client reads them (every page)."""
    found: dict[str, list[dict[str, Any]]] = {}
    with anyio.fail_after(BOUND):
        async with direct_client(world.reference(name).reach) as client:
            for kind, method, member, _ in LISTS:
                items: list[dict[str, Any]] = []
                cursor: str | None = None
                for _ in range(100):
                    page = await getattr(client, method)(cursor=cursor)
                    items += [item.model_dump(by_alias=True, exclude_unset=True, mode="json")
                              for item in getattr(page, member)]
                    cursor = page.next_cursor
                    if cursor is None:
                        break
                found[kind] = items
    return found


@pytest.mark.parametrize("name", EVERYTHING)
async def test_server_everythings_prompts_resources_and_templates_are_stored_as_the_sdk_lists_them(
    world: World, name: str
) -> None:
    world.discovered(name)
    direct = await listed_directly(world, name)
    stored = entries.list_entries(world.toolvet.ctx, ADMIN, ("prompt", "resource", "template"), server=name,
                                  limit=10_000).items
    assert direct["prompt"] and direct["resource"] and direct["template"], direct
    for kind, _, _, key in LISTS:
        wire_key = {"uri_template": "uriTemplate"}.get(key, key)
        mine = {e.key: e.definition for e in stored if e.kind == kind}
        theirs = {item[wire_key]: item for item in direct[kind]}
        assert sorted(mine) == sorted(theirs), kind
        for item_key, item in theirs.items():  # every member the SDK read, exactly as the server sent it
            assert {k: mine[item_key].get(k) for k in item} == item, (kind, item_key)
    assert all(e.offered and e.review_state == "unreviewed" for e in stored)


async def test_the_gateway_lists_server_everythings_prompts_and_gets_one(world: World) -> None:
    world.discovered("everything-stdio")
    direct = await listed_directly(world, "everything-stdio")
    with anyio.fail_after(BOUND):
        async with world.toolvet.client(world.toolvet.alice) as client:
            prompts = [p.name for p in (await client.list_prompts()).prompts]
            simple = next(p["name"] for p in direct["prompt"] if not p.get("arguments"))
            got = await client.get_prompt(f"everything-stdio_{simple}")
    assert {f"everything-stdio_{p['name']}" for p in direct["prompt"]} <= set(prompts)
    assert got.messages


@pytest.mark.parametrize("name", NAMES)
async def test_every_reference_servers_declared_lists_are_read_whole_and_nothing_rejected(
    world: World, name: str
) -> None:
    world.discovered(name)
    run = world.runs[name]
    assert run.error is None, run.error  # an entry list that failed would be named here
    assert [r for r in run.rejections if "kind" in r] == []


async def test_the_same_uris_of_three_server_everythings_are_each_listed_and_read_from_their_own_server(
    world: World,
) -> None:
    """server-everything over stdio, SSE and streamable HTTP lists the same resource URIs three times:
    through ``/mcp`` each copy is listed under a URI naming its server, and reads as the server reads it."""
    for name in EVERYTHING:
        world.discovered(name)
    direct = await listed_directly(world, "everything-stdio")
    uris = [item["uri"] for item in direct["resource"]]
    with anyio.fail_after(BOUND):
        async with direct_client(world.reference("everything-stdio").reach) as own:
            expected = [(await own.read_resource(uri)).model_dump(mode="json")["contents"] for uri in uris[:2]]
        async with world.toolvet.client(world.toolvet.alice) as client:
            listed = []
            cursor: str | None = None
            for _ in range(100):
                page = await client.list_resources(cursor=cursor)
                listed += [r.uri for r in page.resources]
                if (cursor := page.next_cursor) is None:
                    break
            reads = {name: [(await client.read_resource(namespaced(uri, name))).model_dump(mode="json")["contents"]
                            for uri in uris[:2]] for name in EVERYTHING}
    for name in EVERYTHING:
        assert [u for u in listed if u.endswith(f"{MARKER}{name}")] == [namespaced(uri, name) for uri in uris]
        # The contents name the URI as the client asked for it; the rest is the server's own.
        assert [[{**c, "uri": split_namespaced(c["uri"])[1]} for c in contents] for contents in reads[name]] == \
            expected, name
    assert not set(uris) & set(listed)  # no copy under the bare URI, which would read one of the three
