"""Every REST and MCP request has an id: the client's ``X-Request-Id`` or a fresh one, echoed in the
response and named by every log line written while the request runs (JSON logs)."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import httpx2
import pytest

from toolvet.logs import configure

pytestmark = pytest.mark.anyio


@pytest.fixture
def json_log() -> Iterator[io.StringIO]:
    """The JSON log toolvet serve writes, into a string; INFO, so each request is logged."""
    stream = io.StringIO()
    root = logging.getLogger()
    level = root.level
    handler = configure("json", "INFO", stream)
    yield stream
    root.removeHandler(handler)
    root.setLevel(level)


def lines(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


async def test_a_rest_request_keeps_the_clients_id_and_its_log_line_names_it(
    client: httpx2.AsyncClient, as_reader: dict[str, str], json_log: io.StringIO,
) -> None:
    response = await client.get("/api/v1/servers", headers={**as_reader, "X-Request-Id": "ticket-42"})
    assert response.status_code == 200
    assert response.headers["x-request-id"] == "ticket-42"
    [entry] = [e for e in lines(json_log) if e["logger"] == "toolvet.requests"]
    assert entry["request_id"] == "ticket-42" and entry["status"] == 200 and entry["path"] == "/api/v1/servers"
    assert entry["level"] == "INFO" and str(entry["time"]).endswith("+00:00")


async def test_an_mcp_request_without_an_id_gets_a_fresh_one_and_a_bad_one_is_replaced(
    client: httpx2.AsyncClient, json_log: io.StringIO,
) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    first = await client.post("/mcp", json=body)
    second = await client.post("/mcp", json=body, headers={"X-Request-Id": "two\nlines"})
    ids = [first.headers["x-request-id"], second.headers["x-request-id"]]
    assert len(set(ids)) == 2 and all(len(i) == 32 and i.isalnum() for i in ids)
    logged = [e["request_id"] for e in lines(json_log) if e["logger"] == "toolvet.requests" and e["path"] == "/mcp"]
    assert logged == ids
