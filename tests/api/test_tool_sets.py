"""``/tool-sets``: PUT creates (201) and replaces (200), readers read, errors through the one table."""

from __future__ import annotations

import httpx2
import pytest

from tests.api.conftest import Headers

pytestmark = pytest.mark.anyio

RESEARCH = {"title": "Research", "members": [{"server": "library", "tool": "lookup"}, {"server": "search"}]}


async def test_put_creates_a_set_then_replaces_it_and_get_shows_what_was_stored(
    client: httpx2.AsyncClient, as_operator: Headers
) -> None:
    created = await client.put("/api/v1/tool-sets/research", json=RESEARCH, headers=as_operator)
    replaced = await client.put("/api/v1/tool-sets/research", json={"members": [{"server": "library"}]},
                                headers=as_operator)
    shown = await client.get("/api/v1/tool-sets/research", headers=as_operator)

    assert created.status_code == 201 and replaced.status_code == 200
    assert created.json()["members"] == [{"server": "library", "tool": "lookup"}, {"server": "search", "tool": None}]
    assert created.json()["endpoint"] == "/mcp/sets/research"
    assert shown.json() == replaced.json()
    assert (shown.json()["title"], shown.json()["members"]) == (None, [{"server": "library", "tool": None}])


async def test_a_reader_lists_and_gets_sets_but_may_not_put_or_delete_them(
    client: httpx2.AsyncClient, as_operator: Headers, as_reader: Headers
) -> None:
    await client.put("/api/v1/tool-sets/research", json=RESEARCH, headers=as_operator)
    listed = (await client.get("/api/v1/tool-sets", headers=as_reader)).json()
    put = await client.put("/api/v1/tool-sets/research", json=RESEARCH, headers=as_reader)
    deleted = await client.delete("/api/v1/tool-sets/research", headers=as_reader)

    assert ([s["name"] for s in listed["items"]], listed["total"]) == (["research"], 1)
    assert (put.status_code, deleted.status_code) == (403, 403)
    assert put.json()["error"]["type"] == "forbidden"


async def test_a_consumer_may_not_read_sets(client: httpx2.AsyncClient, as_consumer: Headers) -> None:
    answer = await client.get("/api/v1/tool-sets", headers=as_consumer)
    assert answer.status_code == 403


async def test_delete_removes_a_set_and_an_unknown_one_is_404(
    client: httpx2.AsyncClient, as_operator: Headers
) -> None:
    await client.put("/api/v1/tool-sets/research", json=RESEARCH, headers=as_operator)
    deleted = await client.delete("/api/v1/tool-sets/research", headers=as_operator)
    gone = await client.get("/api/v1/tool-sets/research", headers=as_operator)
    again = await client.delete("/api/v1/tool-sets/research", headers=as_operator)

    assert deleted.status_code == 204
    assert (gone.status_code, again.status_code) == (404, 404)
    assert gone.json()["error"]["type"] == "not_found" and "research" in gone.json()["error"]["message"]


@pytest.mark.parametrize(("path", "body", "field"), [
    ("/api/v1/tool-sets/Research", RESEARCH, "name"),
    ("/api/v1/tool-sets/research", {"members": [{"server": "a"}, {"server": "a"}]}, "members.1"),
    ("/api/v1/tool-sets/research", {"members": [{"server": "Bad"}]}, "members.0.server"),
    ("/api/v1/tool-sets/research", {"members": [], "name": "other"}, "name"),
    ("/api/v1/tool-sets/research", {}, "members"),
])
async def test_a_bad_definition_is_a_422_naming_its_field(
    client: httpx2.AsyncClient, as_operator: Headers, path: str, body: dict[str, object], field: str
) -> None:
    answer = await client.put(path, json=body, headers=as_operator)
    assert answer.status_code == 422
    assert answer.json()["error"]["type"] == "invalid_input" and answer.json()["error"]["field"] == field
    assert (await client.get("/api/v1/tool-sets", headers=as_operator)).json()["total"] == 0


async def test_every_change_through_rest_is_in_the_audit_log(
    client: httpx2.AsyncClient, as_operator: Headers
) -> None:
    await client.put("/api/v1/tool-sets/research", json=RESEARCH, headers=as_operator)
    await client.put("/api/v1/tool-sets/research", json=RESEARCH, headers=as_operator)
    await client.delete("/api/v1/tool-sets/research", headers=as_operator)
    entries = (await client.get("/api/v1/audit", params={"object": "tool_set:research"}, headers=as_operator)).json()
    assert [e["action"] for e in entries["items"]] == ["tool_set.delete", "tool_set.replace", "tool_set.create"]
    assert {e["actor"] for e in entries["items"]} == {"token:operator-token"}
