"""A handshake-era MCP client over streamable HTTP that speaks raw JSON-RPC, for what the SDK client lacks.

The Python SDK's client has no tasks (2025-11-25's ``tools/call`` with ``task``, ``tasks/*``): a test of
them talks to the endpoint the way any client on the wire does, through this one (httpx2, bounded).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2

PROTOCOL = "2025-11-25"


class RawError(Exception):
    """A JSON-RPC error answer: its code and message."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class RawClient:
    """One handshake-era session (``initialize``, then requests with its ``Mcp-Session-Id``)."""

    def __init__(self, http: httpx2.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url
        self.session_id: str | None = None
        self._next = 0

    def _headers(self) -> dict[str, str]:
        headers = {"accept": "application/json, text/event-stream", "content-type": "application/json",
                   "mcp-protocol-version": PROTOCOL}
        if self.session_id is not None:
            headers["mcp-session-id"] = self.session_id
        return headers

    async def initialize(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        result = await self.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": capabilities or {},
                                                   "clientInfo": {"name": "raw-tests", "version": "0"}})
        await self.notify("notifications/initialized")
        return result

    async def notify(self, method: str) -> None:
        response = await self.http.post(self.url, headers=self._headers(),
                                        content=json.dumps({"jsonrpc": "2.0", "method": method}))
        assert response.status_code in (200, 202), response.text

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send a request; its result (raises RawError for an error answer)."""
        self._next += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next, "method": method}
        if params is not None:
            message["params"] = params
        response = await self.http.post(self.url, headers=self._headers(), content=json.dumps(message))
        if method == "initialize":
            self.session_id = response.headers.get("mcp-session-id")
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            replies = [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")
                       and line[5:].strip()]
        else:
            replies = [response.json()]
        reply = next(r for r in replies if isinstance(r, dict) and r.get("id") == self._next)
        if "error" in reply:
            raise RawError(reply["error"]["code"], reply["error"]["message"])
        return reply["result"]


@asynccontextmanager
async def raw_session(url: str, token: str, *, timeout: float = 30.0,
                      capabilities: dict[str, Any] | None = None) -> AsyncIterator[RawClient]:
    """An initialized RawClient on ``url`` with a bearer token."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=timeout) as http:
        client = RawClient(http, url)
        await client.initialize(capabilities)
        yield client
