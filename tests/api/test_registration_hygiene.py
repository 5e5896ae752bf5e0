"""What a server may be registered with: URLs, header names and values, fields that follow a transport
switch; and paging parameters bounded on every list route."""

from __future__ import annotations

import re

import httpx2
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from tests.api.conftest import Headers
from toolvet.db.models import Server
from toolvet.schemas.common import MAX_OFFSET
from toolvet.services.context import Context

pytestmark = pytest.mark.anyio

BAD_URLS = [
    "http://", "http:///mcp", "https://:443/mcp", "file:///etc/passwd", "ftp://127.0.0.1/mcp",
    "javascript:alert(1)", "http://exa mple.test/mcp", "http://127.0.0.1:99999/mcp", "http://[::1/mcp",
    "http://127.0.0.1/mcp\r\nX-Injected: 1", "http://127.0.0.1/\x00", "//127.0.0.1/mcp",
]


async def create(client: httpx2.AsyncClient, auth: Headers, **fields: object) -> httpx2.Response:
    return await client.post("/api/v1/servers", json={"name": "up", **fields}, headers=auth)


@pytest.mark.parametrize("url", BAD_URLS)
async def test_a_url_that_is_not_http_with_a_host_is_refused(client: httpx2.AsyncClient, as_admin: Headers,
                                                             url: str) -> None:
    r = await create(client, as_admin, url=url)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["field"] == "url"


async def test_http_and_https_urls_with_a_host_are_accepted(client: httpx2.AsyncClient, as_admin: Headers) -> None:
    for n, url in enumerate(["http://127.0.0.1:9/mcp", "https://[::1]:8443/mcp", "https://mcp.example/"]):
        r = await client.post("/api/v1/servers", json={"name": f"up{n}", "url": url}, headers=as_admin)
        assert r.status_code == 201, r.text


@pytest.mark.parametrize("headers", [
    {"Bad Name": "x"}, {"X:Y": "x"}, {"": "x"}, {"X-Ä": "x"}, {"X-Key\r\n": "x"},
    {"X-Key": "a\r\nX-Injected: 1"}, {"X-Key": "a\nb"}, {"X-Key": "a\x00b"}, {"X-Key": "a\x7f"},
])
async def test_header_names_must_be_tokens_and_values_free_of_control_characters(
    client: httpx2.AsyncClient, as_admin: Headers, headers: dict[str, str]
) -> None:
    r = await create(client, as_admin, url="http://127.0.0.1:9/mcp", headers=headers)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["field"] == "headers"


@pytest.mark.parametrize("name", ["Host", "content-length", "Transfer-Encoding", "CONNECTION", "Keep-Alive",
                                  "Upgrade", "TE", "Trailer", "Proxy-Connection"])
async def test_framing_and_hop_by_hop_headers_are_refused_by_name(client: httpx2.AsyncClient, as_admin: Headers,
                                                                  name: str) -> None:
    r = await create(client, as_admin, url="http://127.0.0.1:9/mcp", headers={name: "x"})
    assert r.status_code == 422
    error = r.json()["error"]
    assert error["field"] == "headers" and repr(name) in error["message"]


async def test_an_ordinary_header_with_a_tab_is_accepted(client: httpx2.AsyncClient, as_admin: Headers) -> None:
    r = await create(client, as_admin, url="http://127.0.0.1:9/mcp", headers={"X-Api_Key.1": "a\tb ~!"})
    assert r.status_code == 201, r.text
    assert r.json()["header_names"] == ["X-Api_Key.1"]


async def test_a_nul_in_a_stdio_launch_field_is_refused(client: httpx2.AsyncClient, as_admin: Headers) -> None:
    for fields in ({"command": "sh\x00"}, {"command": "sh", "args": ["-c", "a\x00"]},
                   {"command": "sh", "env": {"A": "\x00"}}, {"command": "sh", "cwd": "/tmp\x00"}):
        r = await create(client, as_admin, **fields)
        assert r.status_code == 422, fields
        assert r.json()["error"]["field"] in ("command", "args", "env", "cwd")


def stored(ctx: Context, name: str) -> Server:
    with ctx.db.transaction() as session:
        server = session.scalar(select(Server).where(Server.name == name))
        assert server is not None
        return server


async def test_an_http_server_switched_to_stdio_keeps_no_headers(client: httpx2.AsyncClient, as_admin: Headers,
                                                                 ctx: Context) -> None:
    await create(client, as_admin, url="http://127.0.0.1:9/mcp", headers={"Authorization": "Bearer up"})
    r = await client.patch("/api/v1/servers/up", json={"transport": "stdio", "command": "sh"}, headers=as_admin)
    assert r.status_code == 200, r.text
    assert r.json()["header_names"] == [] and r.json()["url"] is None
    row = stored(ctx, "up")
    assert row.headers_secret is None and row.header_names == []


async def test_a_stdio_server_switched_to_http_loses_args_env_and_cwd(
    client: httpx2.AsyncClient, as_admin: Headers, ctx: Context
) -> None:
    await create(client, as_admin, command="sh", args=["-c", "x"], env={"TOKEN": "s3cret"}, cwd="/tmp")
    r = await client.patch("/api/v1/servers/up", json={"transport": "streamable-http", "url": "http://127.0.0.1:9/"},
                           headers=as_admin)
    assert r.status_code == 200, r.text
    out = r.json()
    assert (out["args"], out["env_names"], out["cwd"], out["command"]) == ([], [], None, None)
    row = stored(ctx, "up")
    assert row.env_secret is None and row.args == [] and row.cwd is None


async def test_a_patch_that_keeps_the_transport_keeps_the_other_fields(client: httpx2.AsyncClient,
                                                                        as_admin: Headers) -> None:
    await create(client, as_admin, url="http://127.0.0.1:9/mcp", headers={"X-Key": "k"})
    r = await client.patch("/api/v1/servers/up", json={"title": "Up"}, headers=as_admin)
    assert r.json()["header_names"] == ["X-Key"]


def list_paths(app: FastAPI) -> list[str]:
    """Every GET route of the OpenAPI document that pages with ``offset``, path parameters filled in."""
    paths = []
    for path, item in app.openapi()["paths"].items():
        params = item.get("get", {}).get("parameters", [])
        if any(p["name"] == "offset" for p in params):
            paths.append(re.sub(r"\{[^}]+\}", "x", path))
    return paths


async def test_every_list_route_bounds_offset_with_a_422(app: FastAPI, client: httpx2.AsyncClient,
                                                         as_admin: Headers) -> None:
    paths = list_paths(app)
    assert len(paths) >= 6, paths  # servers, tools, history, discovery runs, audit, tokens, calls
    for path in paths:
        for offset in (2**63, 2**64 + 5, MAX_OFFSET + 1, -1):
            r = await client.get(path, params={"offset": offset}, headers=as_admin)
            assert r.status_code == 422, (path, offset, r.status_code)
            assert r.json()["error"]["field"] == "offset"


async def test_offset_at_the_bound_is_answered(client: httpx2.AsyncClient, as_admin: Headers) -> None:
    r = await client.get("/api/v1/servers", params={"offset": MAX_OFFSET}, headers=as_admin)
    assert r.status_code == 200
    assert r.json()["items"] == [] and r.json()["offset"] == MAX_OFFSET


async def test_a_token_id_past_the_database_integer_is_a_422(client: httpx2.AsyncClient, as_admin: Headers) -> None:
    r = await client.delete(f"/api/v1/tokens/{2**63}", headers=as_admin)
    assert r.status_code == 422
