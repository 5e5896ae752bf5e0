"""Every bad input is refused with a message naming the field, and nothing is written."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from tests.api.conftest import Headers
from toolvet.services import servers, tools
from toolvet.services.auth import Principal
from toolvet.services.context import Context

pytestmark = pytest.mark.anyio

OBJECT = {"type": "object"}
URL = "http://u.example/mcp"


@pytest.fixture
def auto_tool(ctx: Context, admin: Principal) -> str:
    """A tool on an ``auto`` server (registered while the server was manual, then switched)."""
    servers.create_server(ctx, admin, {"name": "auto", "url": URL, "discovery": "manual"})
    tools.register_tool(ctx, admin, "auto", {"name": "echo", "input_schema": OBJECT})
    servers.update_server(ctx, admin, "auto", {"discovery": "auto"})
    return "/api/v1/servers/auto/tools/echo"


async def refused(
    client: httpx2.AsyncClient,
    counts: Callable[[], dict[str, int]],
    method: str,
    url: str,
    body: Any,
    headers: Headers,
    *,
    status: int = 422,
) -> dict[str, Any]:
    """Send the request, expect ``status`` and no change in any table; the error object."""
    before = counts()
    response = await client.request(method, url, json=body, headers=headers)
    assert response.status_code == status, response.text
    assert counts() == before
    error: dict[str, Any] = response.json()["error"]
    return error


@pytest.mark.parametrize(
    ("body", "field", "says"),
    [
        ({"name": "-bad-", "url": URL}, "name", "does not match"),
        ({"name": "Weather", "url": URL}, "name", "^[a-z0-9]"),
        ({"name": "my_server", "url": URL}, "name", "does not match"),
        ({"name": "x" * 33, "url": URL}, "name", "does not match"),
        ({"name": "toolvet", "url": URL}, "name", "reserved"),
        ({"name": "ok", "url": URL, "transport": "carrier-pigeon"}, "transport", "streamable-http"),
        ({"name": "ok", "transport": "stdio"}, "command", "needs a command"),
        ({"name": "ok", "transport": "sse"}, "url", "needs a url"),
        ({"name": "ok"}, "url", "needs a url"),
        ({"name": "ok", "url": "ftp://files.example/mcp"}, "url", "http://"),
        ({"name": "ok", "url": "file:///etc/passwd"}, "url", "http://"),
        ({"name": "ok", "url": URL, "tool_count": 3}, "tool_count", "read-only"),
        ({"name": "ok", "url": URL, "colour": "red"}, "colour", "not permitted"),
        ({"url": URL}, "name", "required"),
    ],
)
async def test_a_bad_server_is_refused_naming_the_field(
    client: httpx2.AsyncClient,
    as_admin: Headers,
    row_counts: Callable[[], dict[str, int]],
    body: dict[str, Any],
    field: str,
    says: str,
) -> None:
    error = await refused(client, row_counts, "POST", "/api/v1/servers", body, as_admin)
    assert error["type"] == "invalid_input"
    assert error["field"] == field
    assert field in error["message"] and says in error["message"]


async def test_a_body_that_is_not_json_is_refused(
    client: httpx2.AsyncClient, as_admin: Headers, row_counts: Callable[[], dict[str, int]]
) -> None:
    before = row_counts()
    response = await client.post(
        "/api/v1/servers", content=b"{name:", headers={**as_admin, "Content-Type": "application/json"}
    )
    assert response.status_code == 422
    assert response.json()["error"]["field"] == "body"
    assert row_counts() == before


async def test_a_duplicate_server_is_a_conflict(
    client: httpx2.AsyncClient,
    as_admin: Headers,
    manual_server: str,
    row_counts: Callable[[], dict[str, int]],
) -> None:
    error = await refused(
        client,
        row_counts,
        "POST",
        "/api/v1/servers",
        {"name": manual_server, "url": URL},
        as_admin,
        status=409,
    )
    assert error["type"] == "conflict" and manual_server in error["message"]


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"name": "renamed"}, "name"),
        ({"url": "gopher://old.example"}, "url"),
        ({"transport": "stdio"}, "command"),
        ({"enabled": None}, "enabled"),
        ({"last_error": "nope"}, "last_error"),
    ],
)
async def test_a_bad_server_patch_is_refused_naming_the_field(
    client: httpx2.AsyncClient,
    as_admin: Headers,
    manual_server: str,
    row_counts: Callable[[], dict[str, int]],
    patch: dict[str, Any],
    field: str,
) -> None:
    error = await refused(client, row_counts, "PATCH", f"/api/v1/servers/{manual_server}", patch, as_admin)
    assert error["field"] == field


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"definition_fingerprint": "sha256:" + "0" * 64}, "definition_fingerprint"),
        ({"last_seen_at": "2030-01-01T00:00:00Z"}, "last_seen_at"),
        ({"review_state": "reviewed"}, "review_state"),
        ({"enabled": True, "description": "hand-edited"}, "description"),
        ({"input_schema": {"type": "object"}}, "input_schema"),
        ({"writable": "perhaps"}, "writable"),
    ],
)
async def test_a_person_cannot_set_discovery_owned_tool_fields(
    client: httpx2.AsyncClient,
    as_admin: Headers,
    auto_tool: str,
    row_counts: Callable[[], dict[str, int]],
    patch: dict[str, Any],
    field: str,
) -> None:
    before = (await client.get(auto_tool, headers=as_admin)).json()
    error = await refused(client, row_counts, "PATCH", auto_tool, patch, as_admin)
    assert (error["type"], error["field"]) == ("invalid_input", field)
    assert field in error["message"]
    assert (await client.get(auto_tool, headers=as_admin)).json() == before


@pytest.mark.parametrize(
    ("schema", "says"),
    [
        ({"type": "string"}, '"type": "object"'),
        ({"type": 5}, '"type": "object"'),
        ({"type": "object", "properties": {"q": {"type": 5}}}, "not a valid JSON Schema"),
        ("not-a-schema", "valid dictionary"),
    ],
)
async def test_a_hand_registered_tool_needs_an_object_input_schema(
    client: httpx2.AsyncClient,
    as_operator: Headers,
    manual_server: str,
    row_counts: Callable[[], dict[str, int]],
    schema: Any,
    says: str,
) -> None:
    error = await refused(
        client,
        row_counts,
        "POST",
        f"/api/v1/servers/{manual_server}/tools",
        {"name": "bad", "input_schema": schema},
        as_operator,
    )
    assert error["field"] == "input_schema"
    assert says in error["message"]


async def test_a_tool_patch_on_a_manual_server_checks_the_schema_too(
    client: httpx2.AsyncClient,
    as_operator: Headers,
    manual_server: str,
    ctx: Context,
    admin: Principal,
    row_counts: Callable[[], dict[str, int]],
) -> None:
    tools.register_tool(ctx, admin, manual_server, {"name": "echo", "input_schema": OBJECT})
    error = await refused(
        client,
        row_counts,
        "PATCH",
        f"/api/v1/servers/{manual_server}/tools/echo",
        {"input_schema": {"type": "array"}},
        as_operator,
    )
    assert error["field"] == "input_schema"


async def test_hand_registration_on_an_auto_server_is_refused(
    client: httpx2.AsyncClient, as_operator: Headers, auto_tool: str, row_counts: Callable[[], dict[str, int]]
) -> None:
    error = await refused(
        client,
        row_counts,
        "POST",
        "/api/v1/servers/auto/tools",
        {"name": "new", "input_schema": OBJECT},
        as_operator,
    )
    assert error["field"] == "server" and "manual" in error["message"]


async def test_a_duplicate_tool_is_a_conflict(
    client: httpx2.AsyncClient,
    as_operator: Headers,
    manual_server: str,
    ctx: Context,
    admin: Principal,
    row_counts: Callable[[], dict[str, int]],
) -> None:
    tools.register_tool(ctx, admin, manual_server, {"name": "echo", "input_schema": OBJECT})
    error = await refused(
        client,
        row_counts,
        "POST",
        f"/api/v1/servers/{manual_server}/tools",
        {"name": "echo", "input_schema": OBJECT},
        as_operator,
        status=409,
    )
    assert error["type"] == "conflict"


@pytest.mark.parametrize(
    ("method", "url", "body"),
    [
        ("GET", "/api/v1/servers/nowhere", None),
        ("PATCH", "/api/v1/servers/nowhere", {"enabled": False}),
        ("DELETE", "/api/v1/servers/nowhere", None),
        ("GET", "/api/v1/servers/nowhere/tools/echo", None),
        ("POST", "/api/v1/servers/nowhere/tools", {"name": "echo", "input_schema": OBJECT}),
        ("GET", "/api/v1/servers/hand/tools/missing", None),
        ("PATCH", "/api/v1/servers/hand/tools/missing", {"enabled": False}),
        ("DELETE", "/api/v1/servers/hand/tools/missing", None),
        ("POST", "/api/v1/servers/hand/tools/missing/review", None),
        ("GET", "/api/v1/servers/hand/tools/missing/history", None),
        ("GET", "/api/v1/tools?server=nowhere", None),
        ("DELETE", "/api/v1/tokens/999999", None),
    ],
)
async def test_an_unknown_server_or_tool_is_not_found(
    client: httpx2.AsyncClient,
    as_admin: Headers,
    manual_server: str,
    row_counts: Callable[[], dict[str, int]],
    method: str,
    url: str,
    body: Any,
) -> None:
    error = await refused(client, row_counts, method, url, body, as_admin, status=404)
    assert error["type"] == "not_found"


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 1001}, "limit"),
        ({"offset": -1}, "offset"),
        ({"available": "maybe"}, "available"),
        ({"review_state": "approved"}, "review_state"),
    ],
)
async def test_bad_list_parameters_are_refused_naming_the_parameter(
    client: httpx2.AsyncClient, as_reader: Headers, params: dict[str, Any], field: str
) -> None:
    response = await client.get("/api/v1/tools", params=params, headers=as_reader)
    assert response.status_code == 422
    assert response.json()["error"]["field"] == field
