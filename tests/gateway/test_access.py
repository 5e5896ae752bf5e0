"""securitySchemes on ``/mcp``: noauth without a token, oauth2 scopes, 401/403 with WWW-Authenticate,
and the RFC 9728 protected-resource metadata."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import MCPError

from tests.gateway.conftest import ADMIN, BOUND, Toolvet
from tests.gateway.lab import lab_server
from toolvet.services import preferences

pytestmark = pytest.mark.anyio


def call(name: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": {}}}


HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def test_a_noauth_tool_is_listed_and_callable_without_a_token_as_the_anonymous_user(toolvet: Toolvet):
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "anonymous", "allow")
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(None) as client:
                names = [t.name for t in (await client.list_tools()).tools]
                result = await client.call_tool("lab_open", {})
    assert names == ["lab_open"]
    assert not result.is_error and lab.calls == ["open"]


async def test_a_call_without_the_token_a_tool_needs_is_401_pointing_at_the_metadata(toolvet: Toolvet):
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.http() as http:
                missing = await http.post(toolvet.mcp, json=call("lab_echo"), headers=HEADERS)
            async with toolvet.http("tv_not-a-token") as http:
                bad = await http.post(toolvet.mcp, json=call("lab_open"), headers=HEADERS)
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"] == (
        f'Bearer resource_metadata="{toolvet.base}/.well-known/oauth-protected-resource/mcp"'
    )
    assert bad.status_code == 401 and 'error="invalid_token"' in bad.headers["www-authenticate"]
    assert lab.calls == []


async def test_a_token_without_an_oauth2_scope_the_tool_lists_is_403_insufficient_scope(toolvet: Toolvet):
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "carol", "allow")
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.http(toolvet.alice) as http:
                lacking = await http.post(toolvet.mcp, json=call("lab_files"), headers=HEADERS)
            async with toolvet.client(toolvet.scoped) as client:
                allowed = await client.call_tool("lab_files", {})
    assert lacking.status_code == 403
    challenge = lacking.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="files.read"' in challenge
    assert "resource_metadata=" in challenge
    assert not allowed.is_error and lab.calls == ["files"]


async def test_the_sdk_client_shows_a_missing_scope_as_an_error_naming_the_tool_and_the_scope(toolvet: Toolvet):
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.http(toolvet.alice) as http:
                raw = await http.post(toolvet.mcp, json=call("lab_files"), headers=HEADERS)
            async with toolvet.client(toolvet.alice) as client:
                with pytest.raises(MCPError) as refused:
                    await client.call_tool("lab_files", {})
    assert raw.status_code == 403 and raw.json()["id"] == 1
    assert 'error_description="lab_files needs the OAuth scopes files.read' in raw.headers["www-authenticate"]
    message = str(refused.value)
    assert "lab_files" in message and "files.read" in message
    assert lab.calls == []


async def test_the_protected_resource_metadata_names_toolvet_as_its_own_authorization_server(
    toolvet: Toolvet,
):
    with lab_server() as (up, _):
        await toolvet.register("lab", up.url)
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.http() as http:
                for_mcp = await http.get(f"{toolvet.base}/.well-known/oauth-protected-resource/mcp")
                root = await http.get(f"{toolvet.base}/.well-known/oauth-protected-resource")
    assert for_mcp.status_code == root.status_code == 200
    body = for_mcp.json()
    assert body["resource"] == toolvet.mcp
    assert body["authorization_servers"] == [toolvet.base]
    assert body["scopes_supported"] == ["files.read"]
    assert body["bearer_methods_supported"] == ["header"]
    assert root.json() == body


async def test_requests_that_miss_a_tokens_cache_entry_together_read_the_token_once(ctx, admin):
    from sqlalchemy import event

    from toolvet.gateway.access import TokenCache
    from toolvet.schemas.tools import TokenCreate
    from toolvet.services import tokens

    token = tokens.create_token(ctx, admin, TokenCreate(role="consumer", user="alice", name="alice")).token
    reads: list[str] = []

    def counted(conn, cursor, statement, *args: Any) -> None:
        if "FROM tokens" in statement:
            reads.append(statement)

    cache = TokenCache(ctx)
    event.listen(ctx.db.engine, "before_cursor_execute", counted)
    try:
        with anyio.fail_after(BOUND):
            async with anyio.create_task_group() as tg:
                for _ in range(16):
                    tg.start_soon(cache.principal, token)
            ctx.principals.clear()  # what a revocation does: the next request reads the token again
            principal = await cache.principal(token)
    finally:
        event.remove(ctx.db.engine, "before_cursor_execute", counted)
    assert len(reads) == 2 and principal.user == "alice"
