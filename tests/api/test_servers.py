"""``/servers``: who may do what, defaults, secrets, deletion."""

from __future__ import annotations

import httpx2
import pytest
from sqlalchemy import select

from tests.api.conftest import Headers
from toolvet.db.models import Server
from toolvet.services import tools
from toolvet.services.auth import Principal
from toolvet.services.context import Context

pytestmark = pytest.mark.anyio

HTTP_SERVER = {"name": "weather", "url": "https://weather.example/mcp"}
STDIO_SERVER = {"name": "files", "command": "mcp-files", "args": ["--root", "/srv"]}


async def test_an_operator_creates_an_http_server_with_the_defaults(
    client: httpx2.AsyncClient, as_operator: Headers
) -> None:
    response = await client.post("/api/v1/servers", json=HTTP_SERVER, headers=as_operator)
    assert response.status_code == 201
    server = response.json()
    assert server["transport"] == "streamable-http"
    assert (server["enabled"], server["discovery"], server["trust_annotations"]) == (True, "auto", False)
    assert (server["new_tools_enabled"], server["hold_changed_tools"], server["remove_stale"]) == (
        True,
        True,
        False,
    )
    assert server["tool_count"] == 0
    assert (await client.get("/api/v1/servers/weather", headers=as_operator)).json() == server


async def test_a_reader_lists_servers_but_cannot_create_them(
    client: httpx2.AsyncClient, as_reader: Headers, as_admin: Headers
) -> None:
    await client.post("/api/v1/servers", json=HTTP_SERVER, headers=as_admin)
    listed = (await client.get("/api/v1/servers", headers=as_reader)).json()
    assert [s["name"] for s in listed["items"]] == ["weather"]
    response = await client.post("/api/v1/servers", json={**HTTP_SERVER, "name": "other"}, headers=as_reader)
    assert response.status_code == 403
    assert response.json()["error"]["type"] == "forbidden"


async def test_a_reader_cannot_change_or_delete_servers(
    client: httpx2.AsyncClient, as_reader: Headers, as_admin: Headers
) -> None:
    await client.post("/api/v1/servers", json=HTTP_SERVER, headers=as_admin)
    assert (
        await client.patch("/api/v1/servers/weather", json={"enabled": False}, headers=as_reader)
    ).status_code == 403
    assert (await client.delete("/api/v1/servers/weather", headers=as_reader)).status_code == 403
    assert (await client.get("/api/v1/servers/weather", headers=as_reader)).json()["enabled"] is True


async def test_an_operator_cannot_create_a_stdio_server(
    client: httpx2.AsyncClient, as_operator: Headers
) -> None:
    response = await client.post("/api/v1/servers", json=STDIO_SERVER, headers=as_operator)
    assert response.status_code == 403


async def test_an_operator_cannot_edit_a_stdio_server_or_turn_a_server_into_one(
    client: httpx2.AsyncClient, as_operator: Headers, as_admin: Headers
) -> None:
    assert (await client.post("/api/v1/servers", json=STDIO_SERVER, headers=as_admin)).status_code == 201
    await client.post("/api/v1/servers", json=HTTP_SERVER, headers=as_admin)
    assert (
        await client.patch("/api/v1/servers/files", json={"title": "Files"}, headers=as_operator)
    ).status_code == 403
    assert (
        await client.patch(
            "/api/v1/servers/weather", json={"transport": "stdio", "command": "sh"}, headers=as_operator
        )
    ).status_code == 403
    assert (await client.delete("/api/v1/servers/files", headers=as_operator)).status_code == 403


async def test_an_admin_creates_a_stdio_server(client: httpx2.AsyncClient, as_admin: Headers) -> None:
    response = await client.post("/api/v1/servers", json=STDIO_SERVER, headers=as_admin)
    assert response.status_code == 201
    assert response.json()["transport"] == "stdio"
    assert response.json()["args"] == ["--root", "/srv"]


async def test_patch_changes_only_the_fields_it_sets(
    client: httpx2.AsyncClient, as_operator: Headers
) -> None:
    await client.post("/api/v1/servers", json={**HTTP_SERVER, "title": "Weather"}, headers=as_operator)
    response = await client.patch("/api/v1/servers/weather", json={"enabled": False}, headers=as_operator)
    assert response.status_code == 200
    assert (response.json()["enabled"], response.json()["title"]) == (False, "Weather")


async def test_secret_values_never_appear_in_a_response_and_are_not_stored_in_clear(
    client: httpx2.AsyncClient, as_admin: Headers, ctx: Context
) -> None:
    created = await client.post(
        "/api/v1/servers",
        headers=as_admin,
        json={
            **HTTP_SERVER,
            "headers": {"Authorization": "Bearer sekrit-header-value"},
        },
    )
    stdio = await client.post(
        "/api/v1/servers",
        headers=as_admin,
        json={
            **STDIO_SERVER,
            "env": {"API_KEY": "sekrit-env-value"},
        },
    )
    patched = await client.patch(
        "/api/v1/servers/weather", headers=as_admin, json={"headers": {"X-Key": "sekrit-patched-value"}}
    )
    responses = [
        created,
        stdio,
        patched,
        await client.get("/api/v1/servers", headers=as_admin),
        await client.get("/api/v1/servers/files", headers=as_admin),
        await client.get("/api/v1/audit", headers=as_admin),
    ]
    for response in responses:
        assert response.status_code in (200, 201)
        assert "sekrit" not in response.text
    assert created.json()["header_names"] == ["Authorization"]
    assert stdio.json()["env_names"] == ["API_KEY"]
    assert patched.json()["header_names"] == ["X-Key"]
    assert "headers" not in created.json() and "env" not in stdio.json()
    with ctx.db.transaction() as session:
        rows = session.scalars(select(Server)).all()
        raw = [(row.headers_secret, row.env_secret) for row in rows]
    assert all("sekrit" not in (value or "") for pair in raw for value in pair)
    assert any(value for pair in raw for value in pair)


async def test_deleting_a_server_deletes_its_tools(
    client: httpx2.AsyncClient, as_operator: Headers, manual_server: str, ctx: Context, admin: Principal
) -> None:
    tools.register_tool(ctx, admin, manual_server, {"name": "echo", "input_schema": {"type": "object"}})
    assert (await client.delete(f"/api/v1/servers/{manual_server}", headers=as_operator)).status_code == 204
    assert (await client.get(f"/api/v1/servers/{manual_server}", headers=as_operator)).status_code == 404
    listed = (await client.get("/api/v1/tools", headers=as_operator)).json()
    assert (listed["items"], listed["total"]) == ([], 0)


async def test_servers_are_paged(client: httpx2.AsyncClient, as_admin: Headers) -> None:
    for name in ("a1", "a2", "a3", "a4", "a5"):
        await client.post(
            "/api/v1/servers", json={"name": name, "url": "http://x.example/mcp"}, headers=as_admin
        )
    page = (await client.get("/api/v1/servers", params={"limit": 2, "offset": 1}, headers=as_admin)).json()
    assert [s["name"] for s in page["items"]] == ["a2", "a3"]
    assert (page["total"], page["limit"], page["offset"]) == (5, 2, 1)


async def test_servers_are_listed_by_the_software_they_run(
    client: httpx2.AsyncClient, as_reader: Headers, as_operator: Headers
) -> None:
    for name, software in (("sales-eu", "crm"), ("sales-us", "crm"), ("wiki", None), ("hr", "erp")):
        body = {"name": name, "url": f"https://{name}.example/mcp", "software": software}
        assert (await client.post("/api/v1/servers", json=body, headers=as_operator)).status_code == 201

    async def listed(**params: str) -> list[str]:
        response = await client.get("/api/v1/servers", params=params, headers=as_reader)
        assert response.status_code == 200, response.text
        return [s["name"] for s in response.json()["items"]]

    assert await listed(software="crm") == ["sales-eu", "sales-us"]
    assert await listed(software="erp") == ["hr"]
    assert await listed(software="none-such") == []
    assert await listed() == ["hr", "sales-eu", "sales-us", "wiki"]
    # Free text: name, URL and software, case-insensitive; with software, both must hold.
    assert await listed(q="SALES") == ["sales-eu", "sales-us"]
    assert await listed(q="wiki.example") == ["wiki"]
    assert await listed(q="erp") == ["hr"]
    assert await listed(q="-us", software="crm") == ["sales-us"]
    assert await listed(q="50%_") == []  # LIKE's wildcards are plain characters
    too_long = await client.get("/api/v1/servers", params={"q": "x" * 201}, headers=as_reader)
    assert too_long.status_code == 422 and "q" in too_long.text
