"""Request bodies are capped and JSON nesting is limited, on the REST API, the console and ``/mcp``."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import httpx2
import pytest
from cryptography.fernet import Fernet
from fastapi import FastAPI

from tests.api.conftest import Headers
from tests.upstreams import serve
from toolvet.jsontext import json_depth_exceeds
from toolvet.services.context import Context
from toolvet.settings import Settings

CAP = 64 * 1024


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[Context]:
    """SQLite only (the limits sit in front of the database), with a 64 KiB body cap."""
    context = Context.open(Settings(home=tmp_path, database_url=f"sqlite:///{tmp_path}/t.sqlite3",
                                    secret_key=Fernet.generate_key().decode(), max_body_bytes=CAP))
    yield context
    context.close()


def nested(depth: int) -> bytes:
    return b'{"name":"deep","title":' + b"[" * depth + b"]" * depth + b"}"


@pytest.mark.anyio
async def test_a_server_title_past_the_cap_is_refused_with_413_naming_the_limit(
    client: httpx2.AsyncClient, as_admin: Headers, row_counts: Callable[[], dict[str, int]]
) -> None:
    before = row_counts()
    r = await client.post("/api/v1/servers", headers=as_admin,
                          json={"name": "big", "url": "http://127.0.0.1:9/mcp", "title": "x" * (CAP + 1)})
    assert r.status_code == 413
    error = r.json()["error"]
    assert error["type"] == "content_too_large"
    assert f"{CAP} bytes" in error["message"] and "TOOLVET_MAX_BODY_BYTES" in error["message"]
    assert row_counts() == before


@pytest.mark.anyio
async def test_a_body_just_under_the_cap_is_read(client: httpx2.AsyncClient, as_admin: Headers) -> None:
    r = await client.post("/api/v1/servers", headers=as_admin,
                          json={"name": "big", "url": "http://127.0.0.1:9/mcp", "title": "x" * (CAP - 200)})
    assert r.status_code == 201, r.text


@pytest.mark.anyio
async def test_a_chunked_body_is_cut_off_at_the_cap_without_reading_the_rest(
    client: httpx2.AsyncClient, as_admin: Headers
) -> None:
    sent = 0

    async def chunks() -> AsyncIterator[bytes]:
        nonlocal sent
        yield b'{"name":"big","url":"http://127.0.0.1:9/mcp","title":"'
        for _ in range(1000):  # 16 MB if it were all read
            sent += 16 * 1024
            yield b"x" * (16 * 1024)
        yield b'"}'

    r = await client.post("/api/v1/servers", headers={**as_admin, "Content-Type": "application/json"},
                          content=chunks())
    assert r.status_code == 413
    assert "TOOLVET_MAX_BODY_BYTES" in r.json()["error"]["message"]
    assert sent <= CAP + 16 * 1024


@pytest.mark.anyio
async def test_a_console_form_past_the_cap_is_refused(client: httpx2.AsyncClient) -> None:
    r = await client.post("/console/login", data={"token": "x" * (CAP + 1)})
    assert r.status_code == 413


@pytest.mark.anyio
async def test_json_nested_past_the_limit_is_a_422_naming_the_limit(
    client: httpx2.AsyncClient, as_admin: Headers, caplog: pytest.LogCaptureFixture
) -> None:
    r = await client.post("/api/v1/servers", headers={**as_admin, "Content-Type": "application/json"},
                          content=nested(3000))
    assert r.status_code == 422
    error = r.json()["error"]
    assert error["field"] == "body" and "64 levels" in error["message"]
    assert "TOOLVET_MAX_JSON_DEPTH" in error["message"]
    assert not [rec for rec in caplog.records if rec.levelno >= logging.ERROR]


@pytest.mark.anyio
async def test_json_at_the_limit_reaches_the_route(client: httpx2.AsyncClient, as_admin: Headers) -> None:
    # 63 brackets inside the object: 64 levels in all, which is allowed; the title is then wrong.
    r = await client.post("/api/v1/servers", headers={**as_admin, "Content-Type": "application/json"},
                          content=nested(63))
    assert r.status_code == 422
    assert r.json()["error"]["field"] == "title"


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    assert not json_depth_exceeds(b'{"a":"' + b"[" * 500 + b'"}', 64)
    assert not json_depth_exceeds(b'{"a":"\\"' + b"[" * 500 + b'"}', 64)
    assert json_depth_exceeds(b'{"a":"\\\\"' + b"[" * 500 + b"]" * 500 + b"}", 64)
    assert json_depth_exceeds(b"[" * 65 + b"]" * 65, 64)
    assert not json_depth_exceeds(b"[" * 64 + b"]" * 64, 64)
    assert not json_depth_exceeds(b"[]" * 5000, 64)  # many brackets, none deep


@pytest.fixture
def served(app: FastAPI) -> Iterator[str]:
    """The whole app (lifespan on) under uvicorn on loopback: ``/mcp`` as a client reaches it."""
    with serve(app, "") as running:
        yield running.url


@pytest.mark.anyio
async def test_mcp_refuses_deep_nesting_with_a_json_rpc_error_and_no_traceback(
    served: str, caplog: pytest.LogCaptureFixture
) -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":' + b"[" * 3000 + b"]" * 3000 + b"}"
    async with httpx2.AsyncClient(timeout=30) as http:
        r = await http.post(f"{served}/mcp", content=body, headers={
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    assert r.status_code == 400
    assert r.json() == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32700, "message": "parse error: JSON nested deeper than the limit of 64 levels "
        "(TOOLVET_MAX_JSON_DEPTH)"}}
    assert not [rec for rec in caplog.records if rec.levelno >= logging.ERROR]


@pytest.mark.anyio
async def test_mcp_refuses_a_body_past_the_cap_with_a_json_rpc_error(served: str) -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"x" * CAP + b'"}}'
    async with httpx2.AsyncClient(timeout=30) as http:
        r = await http.post(f"{served}/mcp", content=body, headers={
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    assert r.status_code == 413
    assert r.json()["error"]["code"] == -32600
    assert "TOOLVET_MAX_BODY_BYTES" in r.json()["error"]["message"]
