"""Hypothesis drives ``/mcp`` of a served toolvet (uvicorn on loopback, lifespan on, SQLite) with
malformed JSON-RPC: wrong types, deep nesting, huge ids, batches, non-JSON bodies, odd headers and
methods; with and without a token. Any 5xx answer, or any error logged (a traceback), fails.

``TOOLVET_FUZZ_EXAMPLES`` sets the number of examples (default 25, times 8 here); derandomized.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from cryptography.fernet import Fernet
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.openapi_strategies import ANY_JSON
from tests.upstreams import serve
from toolvet.api.app import create_app
from toolvet.jsontext import compact
from toolvet.schemas.tools import TokenCreate
from toolvet.services import servers, tokens
from toolvet.services.auth import Principal, Role
from toolvet.services.context import Context
from toolvet.settings import Settings

EXAMPLES = int(os.environ.get("TOOLVET_FUZZ_EXAMPLES", "25")) * 8
ADMIN = Principal(actor="test:admin", role=Role.ADMIN)
METHODS = [
    "initialize", "notifications/initialized", "ping", "server/discover", "tools/list", "tools/call",
    "resources/list", "resources/read", "resources/templates/list", "prompts/list", "prompts/get",
    "completion/complete", "logging/setLevel", "subscriptions/listen", "notifications/cancelled",
    "notifications/progress", "tasks/get", "nope/nope", "",
]
VERSIONS = ["2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05", "1999-01-01", ""]


class ErrorLog(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@dataclass
class Served:
    url: str
    token: str
    errors: ErrorLog


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home: Path = tmp_path_factory.mktemp("mcp-fuzz")
    ctx = Context.open(Settings(home=home, database_url=f"sqlite:///{home}/t.sqlite3",
                                secret_key=Fernet.generate_key().decode(), connect_timeout=1.0, read_timeout=2.0,
                                call_timeout=2.0, approval_wait=0.0))
    servers.create_server(ctx, ADMIN, {"name": "hand", "url": "http://127.0.0.1:9/", "discovery": "manual"})
    token = tokens.create_token(ctx, ADMIN, TokenCreate(role="consumer", name="app", user="ana")).token
    errors = ErrorLog()
    watched = [logging.getLogger(), logging.getLogger("uvicorn.error")]  # uvicorn's does not propagate
    try:
        with serve(create_app(ctx), "") as running:
            for logger in watched:
                logger.addHandler(errors)
            yield Served(running.url + "/mcp", token, errors)
    finally:
        for logger in watched:
            logger.removeHandler(errors)
        ctx.close()


IDS = st.one_of(st.integers(), st.integers(min_value=2**63 - 2, max_value=2**200), st.text(max_size=40),
                st.just("x" * 70_000), st.floats(allow_nan=False, allow_infinity=False), st.none(), st.booleans(),
                ANY_JSON)
PARAMS = st.one_of(
    ANY_JSON,
    st.fixed_dictionaries({}, optional={
        "name": st.one_of(st.sampled_from(["hand_t", "toolvet_pending_calls", "hand_", "_t"]), ANY_JSON),
        "arguments": ANY_JSON, "cursor": ANY_JSON, "uri": ANY_JSON, "requestState": ANY_JSON,
        "inputResponses": ANY_JSON, "protocolVersion": st.one_of(st.sampled_from(VERSIONS), ANY_JSON),
        "capabilities": ANY_JSON, "clientInfo": ANY_JSON, "level": ANY_JSON,
        "_meta": st.one_of(ANY_JSON, st.fixed_dictionaries({}, optional={
            "io.modelcontextprotocol/protocolVersion": st.sampled_from(VERSIONS), "progressToken": IDS})),
    }),
)
MESSAGES = st.fixed_dictionaries({}, optional={
    "jsonrpc": st.one_of(st.just("2.0"), st.just("2.0"), ANY_JSON),
    "id": IDS,
    "method": st.one_of(st.sampled_from(METHODS), st.sampled_from(METHODS), ANY_JSON),
    "params": PARAMS,
    "result": ANY_JSON,
    "error": ANY_JSON,
})


def nested(depth: int, kind: str) -> bytes:
    opening, closing = ("[", "]") if kind == "list" else ('{"a":', "}")
    return (opening * depth + "1" + closing * depth).encode()


BODIES = st.one_of(
    MESSAGES.map(compact).map(str.encode),
    st.lists(MESSAGES, max_size=6).map(compact).map(str.encode),  # batches, the empty one included
    st.lists(st.lists(MESSAGES, max_size=2), max_size=3).map(compact).map(str.encode),
    # Hypothesis favours small numbers: the depths around the limit and past the parser's are named.
    st.builds(nested, st.one_of(st.sampled_from([64, 65, 999, 1001, 3000, 5000]), st.integers(10, 5000)),
              st.sampled_from(["list", "object"])),
    st.builds(lambda digits: b'{"jsonrpc":"2.0","id":' + b"9" * digits + b',"method":"ping"}',
              st.integers(300, 20_000)),  # an id past Python's int-from-text limit
    st.binary(max_size=200),
    st.text(max_size=200).map(str.encode),
    ANY_JSON.map(compact).map(str.encode),
)
HEADERS = st.fixed_dictionaries({}, optional={
    "Content-Type": st.sampled_from(["application/json", "text/plain", "application/json; charset=latin-1", ""]),
    "Accept": st.sampled_from(["application/json, text/event-stream", "application/json", "text/event-stream",
                               "*/*", ""]),
    "MCP-Protocol-Version": st.sampled_from(VERSIONS),
    "Mcp-Session-Id": st.text(alphabet="abcdef0123456789-", max_size=40),
    "Mcp-Method": st.sampled_from(METHODS),
})


def test_malformed_json_rpc_to_mcp_never_answers_5xx_nor_logs_a_traceback(served: Served) -> None:
    with httpx2.Client(timeout=httpx2.Timeout(10.0)) as http:

        @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
        @given(body=BODIES, headers=HEADERS, method=st.sampled_from(["POST"] * 6 + ["GET", "DELETE"]),
               with_token=st.booleans())
        def check(body: bytes, headers: dict[str, str], method: str, with_token: bool) -> None:
            sent = {k: v for k, v in headers.items() if v}
            if with_token:
                sent["Authorization"] = f"Bearer {served.token}"
            before = len(served.errors.records)
            # A stream (an SSE answer, subscriptions/listen) is not read: its status is the answer.
            with http.stream(method, served.url, content=body if method == "POST" else None,
                             headers=sent) as response:
                status = response.status_code
            assert status < 500, (method, sent, body[:300], status)
            logged = served.errors.records[before:]
            assert not logged, (method, sent, body[:300], [r.getMessage() for r in logged])

        check()
    assert not served.errors.records, [r.getMessage() for r in served.errors.records]
