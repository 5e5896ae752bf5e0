"""Authentication, the unauthenticated routes, the error body of the unexpected."""

from __future__ import annotations

import logging
from collections.abc import Callable

import httpx2
import pytest
from fastapi import FastAPI

from tests.api.conftest import Headers, bearer

pytestmark = pytest.mark.anyio

CHALLENGE = 'Bearer realm="toolvet"'


async def test_health_needs_no_token(client: httpx2.AsyncClient) -> None:
    response = await client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


async def test_openapi_and_docs_need_no_token_and_list_the_routes(client: httpx2.AsyncClient) -> None:
    spec = (await client.get("/openapi.json")).json()
    assert spec["info"]["title"] == "toolvet"
    paths = spec["paths"]
    assert set(paths["/api/v1/servers"]) == {"get", "post"}
    assert set(paths["/api/v1/servers/{name}"]) == {"get", "patch", "delete"}
    assert set(paths["/api/v1/servers/{name}/tools/{tool}"]) == {"get", "patch", "delete"}
    assert "post" in paths["/api/v1/servers/{name}/tools"]
    assert "post" in paths["/api/v1/servers/{name}/tools/{tool}/review"]
    assert "get" in paths["/api/v1/servers/{name}/tools/{tool}/history"]
    assert "get" in paths["/api/v1/tools"]
    assert "get" in paths["/api/v1/audit"]
    assert set(paths["/api/v1/tokens"]) == {"get", "post"}
    assert (await client.get("/docs")).status_code == 200


async def test_a_request_without_a_token_is_unauthenticated(client: httpx2.AsyncClient) -> None:
    response = await client.get("/api/v1/servers")
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == CHALLENGE
    assert response.json()["error"]["type"] == "unauthenticated"


@pytest.mark.parametrize("authorization", ["Bearer tv_not-a-real-token", "Basic dXNlcjpwYXNz", "tv_bare"])
async def test_a_bad_token_is_unauthenticated(client: httpx2.AsyncClient, authorization: str) -> None:
    response = await client.get("/api/v1/servers", headers={"Authorization": authorization})
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == CHALLENGE
    assert response.json() == {
        "error": {"type": "unauthenticated", "field": None, "message": response.json()["error"]["message"]}
    }


async def test_a_revoked_token_is_unauthenticated(
    client: httpx2.AsyncClient, mint: Callable[..., str], as_admin: Headers
) -> None:
    token = mint("reader", name="leaked")
    assert (await client.get("/api/v1/servers", headers=bearer(token))).status_code == 200
    listed = (await client.get("/api/v1/tokens", headers=as_admin)).json()["items"]
    leaked = next(t for t in listed if t["name"] == "leaked")
    assert (await client.delete(f"/api/v1/tokens/{leaked['id']}", headers=as_admin)).status_code == 204
    response = await client.get("/api/v1/servers", headers=bearer(token))
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == CHALLENGE


async def test_a_consumer_cannot_read_servers(client: httpx2.AsyncClient, as_consumer: Headers) -> None:
    response = await client.get("/api/v1/servers", headers=as_consumer)
    assert response.status_code == 403
    assert response.json()["error"]["type"] == "forbidden"


async def test_an_unknown_route_answers_in_the_error_shape(
    client: httpx2.AsyncClient, as_reader: Headers
) -> None:
    response = await client.get("/api/v1/nothing-here", headers=as_reader)
    assert response.status_code == 404
    assert response.json() == {"error": {"type": "not_found", "message": "Not Found", "field": None}}


async def test_an_unexpected_error_is_a_generic_500_without_a_stack_trace(
    app: FastAPI, client: httpx2.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    def explode() -> None:
        raise RuntimeError("database password is hunter2")

    app.add_api_route("/explode", explode)
    with caplog.at_level(logging.ERROR, logger="toolvet.api"):
        response = await client.get("/explode")
    assert response.status_code == 500
    assert response.json() == {
        "error": {
            "type": "internal",
            "field": None,
            "message": "an unexpected error occurred; it has been logged",
        }
    }
    assert "hunter2" not in response.text and "Traceback" not in response.text
    assert "hunter2" in caplog.text
