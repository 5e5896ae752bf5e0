"""Hypothesis fuzzes every route of ``/openapi.json`` with admin, reader, consumer and no tokens, and
fails on any 5xx answer or any error logged. The app runs in process over ASGI with its lifespan (the
call service and the gateway up), on SQLite.

URLs and commands in generated bodies are pointed at places that cannot do harm (a refused loopback
port, a program that does not exist), since an admin's fuzzed server may be discovered. The token
ids minted here are never revoked by the fuzz. ``GET /events`` is a stream that never ends, so it is
not fuzzed here.

``TOOLVET_FUZZ_EXAMPLES`` sets the number of examples per route and token kind (default 25); the
examples are derandomized, so a CI run is repeatable.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio.from_thread
import httpx2
import pytest
from cryptography.fernet import Fernet
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.openapi_strategies import Operation, Schemas, operations, requests
from toolvet.api.app import create_app, lifespan
from toolvet.schemas.tools import TokenCreate
from toolvet.services import servers, tokens
from toolvet.services.auth import Principal, Role
from toolvet.services.context import Context
from toolvet.settings import Settings

EXAMPLES = int(os.environ.get("TOOLVET_FUZZ_EXAMPLES", "25"))
ADMIN = Principal(actor="test:admin", role=Role.ADMIN)
HARMLESS_URL = "http://127.0.0.1:9/"  # the discard port: nothing listens, the connection is refused
HARMLESS_COMMAND = "/nonexistent/toolvet-fuzz"
NOT_FUZZED = {"GET /api/v1/events"}


class ErrorLog(logging.Handler):
    """Every record at ERROR or above, from any thread."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@dataclass
class Target:
    portal: Any
    client: httpx2.AsyncClient
    tokens: dict[str, str | None]
    token_ids: set[int]
    errors: ErrorLog


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    home: Path = tmp_path_factory.mktemp("fuzz")
    ctx = Context.open(Settings(home=home, database_url=f"sqlite:///{home}/t.sqlite3",
                                secret_key=Fernet.generate_key().decode(), connect_timeout=1.0,
                                read_timeout=2.0, pass_timeout=5.0, call_timeout=2.0, approval_wait=0.0))
    minted = {role: tokens.create_token(ctx, ADMIN, TokenCreate(role=role, name=f"fuzz-{role}",
                                                                user="ana" if role == "consumer" else None))
              for role in ("admin", "reader", "consumer")}
    servers.create_server(ctx, ADMIN, {"name": "hand", "url": HARMLESS_URL, "discovery": "manual"})
    servers.create_server(ctx, ADMIN, {"name": "web", "url": HARMLESS_URL, "headers": {"X-Key": "k"}})
    app = create_app(ctx)
    errors = ErrorLog()
    logging.getLogger().addHandler(errors)
    try:
        with anyio.from_thread.start_blocking_portal() as portal:
            client = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://toolvet",
                                        timeout=30)
            with portal.wrap_async_context_manager(lifespan(app)):
                made = portal.call(lambda: client.post(
                    "/api/v1/servers/hand/tools", json={"name": "t", "input_schema": {"type": "object"}},
                    headers={"Authorization": f"Bearer {minted['admin'].token}"}))
                assert made.status_code == 201, made.text
                yield Target(portal, client, {**{r: t.token for r, t in minted.items()}, "none": None},
                             {t.id for t in minted.values()}, errors)
            portal.call(client.aclose)
    finally:
        logging.getLogger().removeHandler(errors)
        ctx.close()


def harmless(body: Any) -> Any:
    """The body with every URL and command made safe to act on (the rest is left as generated)."""
    if isinstance(body, dict):
        safe = {k: harmless(v) for k, v in body.items()}
        if isinstance(safe.get("url"), str):
            safe["url"] = HARMLESS_URL + quote(safe["url"][:40], safe="")
        if isinstance(safe.get("command"), str):
            safe["command"] = HARMLESS_COMMAND
        return safe
    if isinstance(body, list):
        return [harmless(item) for item in body]
    return body


def openapi_document() -> dict[str, Any]:
    """The document, from an app over a throwaway database (it does not depend on the data)."""
    with tempfile.TemporaryDirectory() as tmp:
        ctx = Context.open(Settings(home=tmp, database_url=f"sqlite:///{tmp}/s.sqlite3",
                                    secret_key=Fernet.generate_key().decode()))
        try:
            return create_app(ctx).openapi()
        finally:
            ctx.close()


SERVERS = ["hand", "web", "new-one"]  # hand (manual, with tool "t") and web exist; new-one is free
KNOWN: dict[str, list[Any]] = {
    "name": [*SERVERS, "t", "u"], "server": SERVERS, "server_type": [*SERVERS, "toolvet"],
    "serverType": [*SERVERS, "toolvet"], "tool": ["t", "u"], "tool_name": ["t", "u"], "toolName": ["t", "u"],
    "scope": ["default", "team"], "user": ["ana", "bo"], "role": ["admin", "operator", "reader", "consumer"],
}
SPEC = openapi_document()
SCHEMAS = Schemas(SPEC, KNOWN)
# Deletions last: the seeded servers and tool stay for every other route.
OPERATIONS = sorted((op for op in operations(SPEC) if op.id not in NOT_FUZZED), key=lambda op: op.method == "DELETE")


@pytest.mark.parametrize("op", OPERATIONS, ids=[op.id for op in OPERATIONS])
def test_no_route_answers_5xx_to_any_input(target: Target, op: Operation) -> None:
    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(request=requests(SCHEMAS, op), who=st.sampled_from(sorted(target.tokens)))
    def check(request: tuple[str, dict[str, str], Any], who: str) -> None:
        path, query, body = request
        if op.path == "/api/v1/tokens/{token_id}" and path.rsplit("/", 1)[-1] in {str(i) for i in target.token_ids}:
            path += "0000"  # never revoke the fuzz's own tokens
        token = target.tokens[who]
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        kwargs: dict[str, Any] = {"params": query, "headers": headers}
        if op.body is not None:
            kwargs["json"] = harmless(body)
        before = len(target.errors.records)
        response = target.portal.call(lambda: target.client.request(op.method, path, **kwargs))
        assert response.status_code < 500, (op.id, who, path, query, kwargs.get("json"), response.text[:500])
        logged = target.errors.records[before:]
        assert not logged, (op.id, who, path, [r.getMessage() for r in logged])

    check()
