"""Every write lands in ``/audit`` with who, before and after; tokens are an admin's business."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from tests.api.conftest import Headers, bearer

pytestmark = pytest.mark.anyio


async def entries(client: httpx2.AsyncClient, headers: Headers, **params: Any) -> list[dict[str, Any]]:
    response = await client.get("/api/v1/audit", params=params, headers=headers)
    assert response.status_code == 200
    items: list[dict[str, Any]] = response.json()["items"]
    return items


async def test_every_write_is_audited_with_actor_before_and_after(
    client: httpx2.AsyncClient, as_operator: Headers, as_reader: Headers
) -> None:
    s = "/api/v1/servers"
    t = f"{s}/hand/tools/echo"
    writes = [
        ("POST", s, {"name": "hand", "url": "http://h.example/mcp", "discovery": "manual"}),
        ("PATCH", f"{s}/hand", {"title": "Hand"}),
        ("POST", f"{s}/hand/tools", {"name": "echo", "input_schema": {"type": "object"}}),
        ("PATCH", t, {"writable": False}),
        ("POST", f"{t}/review", {"note": "fine"}),
        ("DELETE", t, None),
        ("DELETE", f"{s}/hand", None),
    ]
    for method, url, body in writes:
        response = await client.request(method, url, json=body, headers=as_operator)
        assert response.status_code < 300, response.text
    log = list(reversed(await entries(client, as_reader, actor="token:operator-token")))
    assert [(e["action"], e["object_id"]) for e in log] == [
        ("server.create", "server:hand"),
        ("server.update", "server:hand"),
        ("tool.register", "tool:hand/echo"),
        ("tool.update", "tool:hand/echo"),
        ("tool.review", "tool:hand/echo"),
        ("tool.delete", "tool:hand/echo"),
        ("server.delete", "server:hand"),
    ]
    create, update, register, flag, review, delete_tool, delete_server = log
    assert create["before"] is None and create["after"]["name"] == "hand"
    assert (update["before"]["title"], update["after"]["title"]) == (None, "Hand")
    assert register["before"] is None and register["after"]["writable"] is True
    assert (flag["before"]["writable"], flag["after"]["writable"]) == (True, False)
    assert (review["before"]["review_state"], review["after"]["review_state"]) == ("unreviewed", "reviewed")
    assert review["after"]["note"] == "fine"
    assert delete_tool["after"] is None and delete_tool["before"]["name"] == "echo"
    assert delete_server["after"] is None and delete_server["before"]["name"] == "hand"
    assert all(e["actor"] == "token:operator-token" and e["at"] for e in log)


async def test_audit_is_filtered_by_object_and_action(
    client: httpx2.AsyncClient, as_operator: Headers
) -> None:
    for name in ("one", "two"):
        await client.post(
            "/api/v1/servers", json={"name": name, "url": "http://x.example/mcp"}, headers=as_operator
        )
    await client.patch("/api/v1/servers/two", json={"enabled": False}, headers=as_operator)
    assert [e["action"] for e in await entries(client, as_operator, object="server:two")] == [
        "server.update",
        "server.create",
    ]
    assert [e["object_id"] for e in await entries(client, as_operator, action="server.create")] == [
        "server:two",
        "server:one",
    ]
    page = (
        await client.get("/api/v1/audit", params={"action": "server.create", "limit": 1}, headers=as_operator)
    ).json()
    assert (len(page["items"]), page["total"]) == (1, 2)


async def test_a_consumer_cannot_read_the_audit_log(client: httpx2.AsyncClient, as_consumer: Headers) -> None:
    assert (await client.get("/api/v1/audit", headers=as_consumer)).status_code == 403


async def test_an_admin_mints_a_token_that_works_and_is_shown_once(
    client: httpx2.AsyncClient, as_admin: Headers
) -> None:
    created = await client.post(
        "/api/v1/tokens", json={"role": "reader", "name": "dashboard"}, headers=as_admin
    )
    assert created.status_code == 201
    token = created.json()["token"]
    assert token.startswith("tv_") and created.json()["prefix"] == token[:10]
    assert (await client.get("/api/v1/tools", headers=bearer(token))).status_code == 200
    listed = await client.get("/api/v1/tokens", headers=as_admin)
    assert token not in listed.text
    assert "dashboard" in [t["name"] for t in listed.json()["items"]]
    audited = await entries(client, as_admin, action="token.create")
    assert token not in str(audited)


async def test_a_consumer_token_needs_a_user(client: httpx2.AsyncClient, as_admin: Headers) -> None:
    response = await client.post("/api/v1/tokens", json={"role": "consumer"}, headers=as_admin)
    assert (response.status_code, response.json()["error"]["field"]) == (422, "user")


@pytest.mark.parametrize("role", ["operator", "reader", "consumer"])
async def test_only_an_admin_manages_tokens(
    client: httpx2.AsyncClient,
    as_admin: Headers,
    as_operator: Headers,
    as_reader: Headers,
    as_consumer: Headers,
    role: str,
) -> None:
    headers = {"operator": as_operator, "reader": as_reader, "consumer": as_consumer}[role]
    first = (await client.get("/api/v1/tokens", headers=as_admin)).json()["items"][0]
    assert (await client.get("/api/v1/tokens", headers=headers)).status_code == 403
    assert (await client.post("/api/v1/tokens", json={"role": "admin"}, headers=headers)).status_code == 403
    assert (await client.delete(f"/api/v1/tokens/{first['id']}", headers=headers)).status_code == 403
    assert (await client.get("/api/v1/tokens", headers=as_admin)).json()["items"][0]["revoked_at"] is None
