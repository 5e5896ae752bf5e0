"""``/catalog``, ``/decide`` and the preference routes over HTTP, on both databases."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from tests.api.conftest import Headers, bearer
from tests.services.test_preferences import build_registry
from toolvet.services.auth import Principal
from toolvet.services.context import Context

pytestmark = pytest.mark.anyio

#: toolvet's own host tools, listed in every catalog beside the registry's; all but discover_server
#: are read-only (requireApproval false).
HOST_TOOLS = ["toolvet/discover_server", "toolvet/list_servers", "toolvet/list_tools", "toolvet/tool_diff"]
READ_ONLY_HOST_TOOLS = {"toolvet/list_servers", "toolvet/list_tools", "toolvet/tool_diff"}


@pytest.fixture
def registry(ctx: Context, admin: Principal) -> Context:
    build_registry(ctx, admin)
    return ctx


@pytest.fixture
def as_alice(mint: Callable[..., str]) -> Headers:
    """A consumer token for user alice in scope ``default``."""
    return bearer(mint("consumer", name="alice", user="alice"))


async def catalog(client: httpx2.AsyncClient, headers: Headers, **params: str) -> dict[str, dict[str, Any]]:
    response = await client.get("/api/v1/catalog", params=params, headers=headers)
    assert response.status_code == 200, response.text
    return {f"{item['serverType']}/{item['name']}": item for item in response.json()}


async def test_the_all_view_lists_offered_tools_as_descriptors(
    registry: Context, client: httpx2.AsyncClient, as_alice: Headers
) -> None:
    items = await catalog(client, as_alice, view="all")
    # a changed held tool and a disabled one are not offered: absent
    assert sorted(items) == ["hand/search", "hand/widget", "hand/write", "other/search", *HOST_TOOLS]
    assert items["hand/search"] == {
        "name": "search",
        "description": "Find things",
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
        "enabled": True,
        "serverType": "hand",
        "requireApproval": False,
        "annotations": {"readOnlyHint": True},
        "title": "Search",
        "outputSchema": {"type": "object"},
        "icons": [{"src": "https://x/i.png"}],
    }
    assert items["hand/widget"]["_meta"] == {"ui": {"visibility": ["app"]}}
    assert items["hand/write"]["annotations"] == {"readOnlyHint": False, "destructiveHint": True}


async def test_require_approval_is_false_exactly_when_reviewed_read_only(
    registry: Context, client: httpx2.AsyncClient, as_alice: Headers, as_operator: Headers
) -> None:
    items = await catalog(client, as_alice)
    assert {k for k, v in items.items() if "requireApproval" in v} == {"hand/search", *READ_ONLY_HOST_TOOLS}
    # writable again: the descriptor no longer says so
    response = await client.patch(
        "/api/v1/servers/hand/tools/search", json={"writable": True}, headers=as_operator
    )
    assert response.status_code == 200
    assert "requireApproval" not in (await catalog(client, as_alice))["hand/search"]


@pytest.mark.parametrize(("route", "floor"), [("/api/v1/servers/hand/tools/search", "always"),
                                              ("/api/v1/servers/hand", "operator")])
async def test_no_descriptor_says_require_approval_false_under_an_approval_floor(
    registry: Context, client: httpx2.AsyncClient, as_alice: Headers, as_operator: Headers, route: str, floor: str
) -> None:
    assert (await catalog(client, as_alice))["hand/search"]["requireApproval"] is False
    response = await client.patch(route, json={"approval": floor}, headers=as_operator)
    assert response.status_code == 200, response.text
    assert "requireApproval" not in (await catalog(client, as_alice))["hand/search"]


async def test_the_model_view_drops_disabled_and_app_only_tools_and_annotations(
    registry: Context, client: httpx2.AsyncClient, as_alice: Headers
) -> None:
    response = await client.put(
        "/api/v1/scopes/default/disabled", headers=as_alice, json={"serverType": "other", "tools": ["search"]}
    )
    assert response.status_code == 200, response.text
    everything = await catalog(client, as_alice, view="all")
    assert everything["other/search"]["enabled"] is False
    model = await catalog(client, as_alice, view="model")
    assert sorted(model) == ["hand/search", "hand/write", *HOST_TOOLS]
    assert all("annotations" not in item for item in model.values())


async def test_host_tools_are_descriptors_too_and_a_scope_can_disable_them(
    registry: Context, client: httpx2.AsyncClient, as_alice: Headers
) -> None:
    items = await catalog(client, as_alice)
    listed = items["toolvet/list_tools"]
    assert (listed["serverType"], listed["name"], listed["enabled"]) == ("toolvet", "list_tools", True)
    assert listed["requireApproval"] is False and listed["title"] == "List tools"
    assert listed["annotations"]["readOnlyHint"] is True and listed["inputSchema"]["type"] == "object"
    assert listed["_meta"]["ui"] == {"visibility": ["model", "app"]}
    assert "requireApproval" not in items["toolvet/discover_server"]
    response = await client.put(
        "/api/v1/scopes/default/disabled", headers=as_alice, json={"serverType": "toolvet", "tools": ["list_tools"]}
    )
    assert response.status_code == 200, response.text
    assert (await catalog(client, as_alice))["toolvet/list_tools"]["enabled"] is False
    assert "toolvet/list_tools" not in await catalog(client, as_alice, view="model")


async def test_a_consumer_reads_only_its_own_scopes_catalog(
    registry: Context, client: httpx2.AsyncClient, as_alice: Headers, as_reader: Headers
) -> None:
    assert (await client.get("/api/v1/catalog?scope=room-9", headers=as_alice)).status_code == 403
    assert (await client.get("/api/v1/catalog?scope=room-9", headers=as_reader)).status_code == 200
    bad = await client.get("/api/v1/catalog?view=everything", headers=as_alice)
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "view"


async def test_post_decide_answers_with_every_reason(
    registry: Context, client: httpx2.AsyncClient, as_alice: Headers
) -> None:
    body = {"user": "alice", "scope": "default", "serverType": "hand", "toolName": "write"}
    response = await client.post("/api/v1/decide", json=body, headers=as_alice)
    assert response.status_code == 200, response.text
    decision = response.json()
    assert (decision["autoAllow"], decision["refused"]) == (False, False)
    assert "not reviewed as read-only: writable is true" in decision["reasons"]
    assert len(decision["reasons"]) >= 6
    other_user = await client.post("/api/v1/decide", json={**body, "user": "bob"}, headers=as_alice)
    assert other_user.status_code == 403
    unknown = await client.post("/api/v1/decide", json={**body, "toolName": "nope"}, headers=as_alice)
    assert unknown.status_code == 404


async def test_permission_mode_routes_validate_and_guard_the_user(
    client: httpx2.AsyncClient, as_alice: Headers, as_admin: Headers
) -> None:
    got = await client.get("/api/v1/users/alice/permission-mode", headers=as_alice)
    assert got.json() == {"user": "alice", "mode": "auto", "default": True}
    bad = await client.put("/api/v1/users/alice/permission-mode", json={"mode": "never"}, headers=as_alice)
    assert bad.status_code == 422 and "ask, auto, allow" in bad.json()["error"]["message"]
    ok = await client.put("/api/v1/users/alice/permission-mode", json={"mode": "ask"}, headers=as_alice)
    assert ok.json() == {"user": "alice", "mode": "ask", "default": False}
    forbidden = await client.put("/api/v1/users/bob/permission-mode", json={"mode": "ask"}, headers=as_alice)
    assert forbidden.status_code == 403
    assert (
        await client.put("/api/v1/users/bob/permission-mode", json={"mode": "allow"}, headers=as_admin)
    ).status_code == 200


async def test_scope_routes_refuse_unknown_server_types_and_other_scopes(
    registry: Context, client: httpx2.AsyncClient, as_alice: Headers
) -> None:
    unknown = await client.put(
        "/api/v1/scopes/default/disabled", json={"serverType": "nope", "tools": []}, headers=as_alice
    )
    assert unknown.status_code == 422
    assert unknown.json()["error"]["field"] == "serverType"
    assert "hand, other, toolvet" in unknown.json()["error"]["message"]
    other = await client.put(
        "/api/v1/scopes/room-2/disabled", json={"serverType": "hand", "tools": []}, headers=as_alice
    )
    assert other.status_code == 403


async def test_always_allow_routes_add_list_and_remove(
    registry: Context, client: httpx2.AsyncClient, as_alice: Headers
) -> None:
    added = await client.put(
        "/api/v1/scopes/default/always-allow",
        json={"serverType": "hand", "toolName": "write"},
        headers=as_alice,
    )
    assert added.status_code == 200, added.text
    entry = added.json()["entries"][0]
    assert (entry["serverType"], entry["toolName"]) == ("hand", "write")
    assert entry["fingerprint"].startswith("sha256:")
    decision = await client.post(
        "/api/v1/decide",
        headers=as_alice,
        json={"user": "alice", "scope": "default", "serverType": "hand", "toolName": "write"},
    )
    assert decision.json()["autoAllow"] is True
    listed = await client.get("/api/v1/scopes/default/always-allow", headers=as_alice)
    assert listed.json()["entries"] == added.json()["entries"]
    removed = await client.delete(
        "/api/v1/scopes/default/always-allow",
        params={"serverType": "hand", "toolName": "write"},
        headers=as_alice,
    )
    assert removed.status_code == 200 and removed.json()["entries"] == []
    again = await client.delete(
        "/api/v1/scopes/default/always-allow",
        params={"serverType": "hand", "toolName": "write"},
        headers=as_alice,
    )
    assert again.status_code == 404
