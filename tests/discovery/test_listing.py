"""fetch_listing against real upstreams: SDK servers in both eras, SSE, stdio, and hostile listings."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from tests.upstreams import (
    DROP,
    HANG,
    Fault,
    PageBehaviour,
    Upstream,
    handshake_only_http_server,
    modern_http_server,
    raw_listing_server,
    sse_server,
    stdio_server_command,
)
from toolvet.discovery import Limits, Listing, Target, fetch_listing

pytestmark = pytest.mark.anyio

TEST_BOUND = 30.0  # no test may take longer than this, whatever the code under test does
FAST = Limits(connect_timeout=5.0, read_timeout=5.0, pass_timeout=20.0)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def fetch(url: str, limits: Limits = FAST, **target: Any) -> Listing:
    with anyio.fail_after(TEST_BOUND):
        return await fetch_listing(Target("streamable-http", url, **target), limits)


def tool(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object"}, **extra}


ENTRY_LISTS = ["prompts/list", "resources/list", "resources/templates/list"]


def tools_list_requests(upstream: Upstream) -> list[Any]:
    return [r for r in upstream.requests if isinstance(r.body, dict) and r.body.get("method") == "tools/list"]


# ------------------------------------------------------------------------------------- both eras


@pytest.mark.parametrize("json_response", [False, True], ids=["sse-bodies", "json-bodies"])
async def test_modern_era_over_streamable_http(json_response: bool) -> None:
    """A 2026-07-28 server is listed statelessly: discover, then tools/list stamped for the era."""
    with modern_http_server(json_response=json_response) as upstream:
        listing = await fetch(upstream.url)

    assert listing.status == "ok", listing.error
    assert listing.error is None
    assert listing.protocol_version == "2026-07-28"
    assert listing.server_info == {"name": "demo", "version": "1.2.3"}
    assert listing.capabilities is not None and "tools" in listing.capabilities
    assert listing.instructions == "Demo upstream for toolvet tests."
    assert [t["name"] for t in listing.tools] == ["tool_0", "tool_1", "tool_2"]
    assert listing.pages == 1
    # The SDK server declares prompts and resources: their lists are read after the tools.
    assert upstream.rpc_methods() == ["server/discover", "tools/list", *ENTRY_LISTS]
    assert listing.entries == {"prompt": [], "resource": [], "template": []} and listing.entry_errors == []
    (request,) = tools_list_requests(upstream)
    assert request.headers["mcp-protocol-version"] == "2026-07-28"
    assert request.headers["mcp-method"] == "tools/list"
    assert "mcp-session-id" not in request.headers
    assert request.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert request.body["params"]["_meta"]["io.modelcontextprotocol/clientInfo"]["name"] == "toolvet"


async def test_handshake_only_server_falls_back_to_initialize() -> None:
    """A server refusing server/discover gets the 2025-11-25 handshake, a session id, and a DELETE."""
    with handshake_only_http_server() as upstream:
        listing = await fetch(upstream.url)

    assert listing.status == "ok", listing.error
    assert listing.protocol_version == "2025-11-25"
    assert listing.server_info == {"name": "demo", "version": "1.2.3"}
    assert listing.instructions == "Demo upstream for toolvet tests."
    assert [t["name"] for t in listing.tools] == ["tool_0", "tool_1", "tool_2"]
    assert upstream.rpc_methods() == [
        "server/discover",
        "initialize",
        "notifications/initialized",
        "tools/list",
        *ENTRY_LISTS,
    ]
    initialize = next(
        r for r in upstream.requests if isinstance(r.body, dict) and r.body.get("method") == "initialize"
    )
    assert "mcp-protocol-version" not in initialize.headers  # the probe's version must not leak onto it
    (request,) = tools_list_requests(upstream)
    assert request.headers["mcp-protocol-version"] == "2025-11-25"
    session_id = request.headers["mcp-session-id"]
    assert "_meta" not in (request.body.get("params") or {})
    assert [
        (r.method, r.headers.get("mcp-session-id")) for r in upstream.requests if r.method == "DELETE"
    ] == [("DELETE", session_id)]


async def test_legacy_sse_transport() -> None:
    """The SDK's deprecated HTTP+SSE transport is listed through the same state machine."""
    with sse_server() as upstream:
        with anyio.fail_after(TEST_BOUND):
            listing = await fetch_listing(Target("sse", upstream.url), FAST)

    assert listing.status == "ok", listing.error
    assert listing.protocol_version == "2026-07-28"  # the SDK's SSE server serves both eras
    assert listing.server_info == {"name": "demo", "version": "1.2.3"}
    assert [t["name"] for t in listing.tools] == ["tool_0", "tool_1", "tool_2"]


# ------------------------------------------------------------------------------------------ stdio


async def test_stdio_subprocess_gets_only_allowlisted_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The child sees the server's env, the allow-list and cwd, but not arbitrary parent variables."""
    monkeypatch.setenv("TOOLVET_TEST_PARENT_SECRET", "must-not-leak")
    monkeypatch.setenv("LANG", "C.UTF-8")
    command, args = stdio_server_command(
        "TOOLVET_TEST_SERVER_VAR", "TOOLVET_TEST_PARENT_SECRET", "PATH", "LANG"
    )
    target = Target(
        "stdio", command=command, args=args, env={"TOOLVET_TEST_SERVER_VAR": "configured"}, cwd=str(tmp_path)
    )
    with anyio.fail_after(TEST_BOUND):
        listing = await fetch_listing(target, FAST)

    assert listing.status == "ok", listing.error
    assert listing.protocol_version == "2026-07-28"
    (probe,) = listing.tools
    seen = json.loads(probe["description"])
    assert seen["env"]["TOOLVET_TEST_SERVER_VAR"] == "configured"
    assert seen["env"]["TOOLVET_TEST_PARENT_SECRET"] is None
    assert seen["env"]["PATH"]  # from the SDK's default allow-list
    assert seen["env"]["LANG"] == "C.UTF-8"  # from ours
    assert Path(seen["cwd"]).resolve() == tmp_path.resolve()


async def test_stdio_server_that_dies_is_failed_with_its_stderr() -> None:
    command, args = stdio_server_command("--fail", "config file /etc/x.toml not found")
    with anyio.fail_after(TEST_BOUND):
        listing = await fetch_listing(Target("stdio", command=command, args=args), FAST)

    assert listing.status == "failed"
    assert listing.error is not None
    assert "connection closed" in listing.error
    assert "config file /etc/x.toml not found" in listing.error


async def test_a_stdio_servers_stderr_is_shown_without_the_secrets_of_its_own_environment() -> None:
    command, args = stdio_server_command("--fail", "auth failed for key sk-live-0123456789 (\x1b[31mred\x1b[0m)")
    target = Target("stdio", command=command, args=args, env={"API_KEY": "sk-live-0123456789", "SHORT": "ab"})
    with anyio.fail_after(TEST_BOUND):
        listing = await fetch_listing(target, FAST)
    assert listing.status == "failed" and listing.error is not None
    assert "sk-live-0123456789" not in listing.error and "auth failed for key [redacted]" in listing.error
    assert "\x1b" not in listing.error  # control characters are folded


async def test_stdio_command_that_does_not_exist_is_failed() -> None:
    with anyio.fail_after(TEST_BOUND):
        listing = await fetch_listing(Target("stdio", command="/nonexistent/toolvet-test-server"), FAST)
    assert listing.status == "failed"
    assert listing.error is not None and "cannot run '/nonexistent/toolvet-test-server'" in listing.error


# ------------------------------------------------------------------------------ headers and paging


async def test_authorization_header_reaches_the_server_on_every_http_request() -> None:
    headers = {"Authorization": "Bearer t0ken"}
    with handshake_only_http_server() as upstream:
        listing = await fetch(upstream.url, headers=headers)
    assert listing.status == "ok", listing.error
    assert upstream.requests
    assert {r.headers.get("authorization") for r in upstream.requests} == {"Bearer t0ken"}

    with sse_server() as upstream:
        with anyio.fail_after(TEST_BOUND):
            listing = await fetch_listing(Target("sse", upstream.url, headers=headers), FAST)
    assert listing.status == "ok", listing.error
    assert {r.headers.get("authorization") for r in upstream.requests} == {"Bearer t0ken"}


@pytest.mark.parametrize(
    ("era", "sse"),
    [("modern", False), ("modern", True), ("handshake", True)],
    ids=["2026-json", "2026-sse", "2025-sse"],
)
async def test_empty_string_cursor_is_sent_back(era: Any, sse: bool) -> None:
    pages = {None: {"tools": [tool("a")], "nextCursor": ""}, "": {"tools": [tool("b")], "nextCursor": None}}
    with raw_listing_server(pages, era=era, sse=sse) as upstream:
        listing = await fetch(upstream.url)

    assert listing.status == "ok", listing.error
    assert listing.tools == [tool("a"), tool("b")]
    assert listing.pages == 2
    first, second = tools_list_requests(upstream)
    assert "cursor" not in (first.body.get("params") or {})
    assert second.body["params"]["cursor"] == ""


async def test_tools_are_kept_verbatim_including_unknown_fields_and_junk() -> None:
    """Nothing is parsed, dropped or rejected here: reconcile judges each tool downstream."""
    rich = {
        "name": "rich",
        "title": "Rich tool",
        "description": "Has everything.",
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}, "x-vendor": 1},
        "outputSchema": {"type": "array", "items": {"type": "number"}},
        "annotations": {"readOnlyHint": True, "title": "Rich", "vendorHint": "kept"},
        "icons": [{"src": "https://example.invalid/i.svg", "mimeType": "image/svg+xml", "sizes": ["any"]}],
        "_meta": {"io.modelcontextprotocol/ui": {"resourceUri": "ui://rich"}},
        "securitySchemes": [{"type": "oauth2", "scopes": ["read"]}],
        "someFutureField": {"nested": [1, 2, {"deep": None}]},
    }
    junk: list[Any] = [
        rich,
        1,
        "a string",
        None,
        [],
        {"name": "no_schema"},
        {"name": "dup", "inputSchema": {"type": "object"}},
        {"name": "dup", "inputSchema": {"type": "string"}},
        {"name": "big", "inputSchema": {"type": "object"}, "description": "x" * 1_000_000},
    ]
    with raw_listing_server({None: {"tools": junk, "ttlMs": 5, "unknownResultField": True}}) as upstream:
        listing = await fetch(upstream.url)

    assert listing.status == "ok", listing.error
    assert listing.tools == junk
    assert json.dumps(listing.tools[0], sort_keys=True) == json.dumps(rich, sort_keys=True)


async def test_sdk_server_tool_fields_arrive_verbatim() -> None:
    with modern_http_server() as upstream:
        listing = await fetch(upstream.url)
    tool_0 = next(t for t in listing.tools if t["name"] == "tool_0")
    assert tool_0["title"] == "Tool Zero"
    assert tool_0["annotations"] == {"title": "Annotated Zero", "readOnlyHint": True}
    assert tool_0["icons"] == [{"src": "https://example.invalid/icon.png", "mimeType": "image/png"}]
    assert tool_0["_meta"] == {"vendor/extra": {"kept": True}}
    assert tool_0["outputSchema"]["properties"]["result"]["type"] == "integer"


# ------------------------------------------------------------------------------------------ bounds


def chain(count: int, per_page: int) -> dict[str | None, PageBehaviour]:
    """``count`` pages of ``per_page`` tools linked by cursors p1, p2, ..."""
    pages: dict[str | None, PageBehaviour] = {}
    for index in range(count):
        cursor = None if index == 0 else f"p{index}"
        page: dict[str, Any] = {"tools": [tool(f"t{index}_{n}") for n in range(per_page)]}
        if index + 1 < count:
            page["nextCursor"] = f"p{index + 1}"
        pages[cursor] = page
    return pages


async def test_cursor_loop_is_incomplete() -> None:
    pages = {None: {"tools": [tool("a")], "nextCursor": "x"}, "x": {"tools": [tool("b")], "nextCursor": "x"}}
    with raw_listing_server(pages) as upstream:
        listing = await fetch(upstream.url)
    assert listing.status == "incomplete"
    assert listing.error == "cursor 'x' repeated on page 2"
    assert listing.tools == [tool("a"), tool("b")]
    assert len(tools_list_requests(upstream)) == 2


async def test_more_than_max_pages_is_incomplete() -> None:
    with raw_listing_server(chain(5, 2)) as upstream:
        listing = await fetch(upstream.url, Limits(read_timeout=5, max_pages=3))
    assert listing.status == "incomplete"
    assert listing.error is not None and "max_pages=3" in listing.error
    assert listing.pages == 3
    assert [t["name"] for t in listing.tools] == ["t0_0", "t0_1", "t1_0", "t1_1", "t2_0", "t2_1"]

    with raw_listing_server(chain(3, 2)) as upstream:
        exactly = await fetch(upstream.url, Limits(read_timeout=5, max_pages=3))
    assert exactly.status == "ok", exactly.error


async def test_more_than_max_tools_is_incomplete() -> None:
    with raw_listing_server(chain(2, 3)) as upstream:
        listing = await fetch(upstream.url, Limits(read_timeout=5, max_tools=4))
        exactly = await fetch(upstream.url, Limits(read_timeout=5, max_tools=6))
    assert listing.status == "incomplete"
    assert listing.error == "more than max_tools=4 tools (page 2)"
    assert [t["name"] for t in listing.tools] == ["t0_0", "t0_1", "t0_2", "t1_0"]
    assert exactly.status == "ok", exactly.error
    assert len(exactly.tools) == 6


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        ([tool("a")], "tools/list page 1: result is not an object"),
        ({"tools": {"a": tool("a")}}, "tools/list page 1: 'tools' is missing or not a list"),
        ({"nextCursor": "x"}, "tools/list page 1: 'tools' is missing or not a list"),
        ({"tools": [], "nextCursor": 7}, "tools/list page 1: nextCursor is not a string"),
        (
            Fault(-32603, "database\non fire"),
            "tools/list page 1: server returned JSON-RPC error -32603: database on fire",
        ),
    ],
    ids=["result-array", "tools-object", "tools-missing", "cursor-number", "rpc-error"],
)
async def test_malformed_or_rejected_page_is_failed(page: PageBehaviour, expected: str) -> None:
    pages: dict[str | None, PageBehaviour] = {None: page}
    with raw_listing_server(pages) as upstream:
        listing = await fetch(upstream.url)
    assert listing.status == "failed"
    assert listing.error == expected


async def test_page_over_max_response_bytes_is_failed() -> None:
    pages: dict[str | None, PageBehaviour] = {None: {"tools": [tool("big", description="y" * 200_000)]}}
    with raw_listing_server(pages) as upstream:
        listing = await fetch(upstream.url, Limits(read_timeout=5, max_response_bytes=100_000))
    assert listing.status == "failed"
    assert listing.error is not None and "exceeds 100000 bytes" in listing.error


async def test_unreachable_server_is_failed() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago and has no listener now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    listing = await fetch(f"http://127.0.0.1:{port}/mcp")
    assert listing.status == "failed"
    assert listing.error is not None
    assert listing.error.startswith(f"server/discover: cannot connect to http://127.0.0.1:{port}/mcp")
    assert listing.tools == [] and listing.pages == 0


async def test_slow_server_past_read_timeout_is_failed() -> None:
    pages = {None: {"tools": [tool("a")], "nextCursor": "slow"}, "slow": HANG}
    with raw_listing_server(pages) as upstream:
        listing = await fetch(upstream.url, Limits(read_timeout=0.5, pass_timeout=20))
    assert listing.status == "failed"
    assert listing.error == "tools/list page 2: timed out after 0.5 s"
    assert listing.pages == 1


async def test_pass_timeout_is_a_hard_bound() -> None:
    with raw_listing_server({None: HANG}) as upstream:
        listing = await fetch(upstream.url, Limits(read_timeout=20, pass_timeout=0.5))
    assert listing.status == "failed"
    assert listing.error == "tools/list page 1: pass timed out after 0.5 s"


async def test_connection_closed_mid_pagination_is_failed() -> None:
    pages = {None: {"tools": [tool("a")], "nextCursor": "next"}, "next": DROP}
    with raw_listing_server(pages) as upstream:
        listing = await fetch(upstream.url)
    assert listing.status == "failed"
    assert listing.error is not None and listing.error.startswith("tools/list page 2: RemoteProtocolError")
    assert listing.pages == 1


async def test_shared_client_is_reused_and_left_open() -> None:
    with modern_http_server() as first, handshake_only_http_server() as second:
        async with httpx2.AsyncClient() as client:
            with anyio.fail_after(TEST_BOUND):
                results: dict[str, Listing] = {}

                async def one(name: str, url: str) -> None:
                    results[name] = await fetch_listing(Target("streamable-http", url), FAST, http=client)

                async with anyio.create_task_group() as tg:
                    tg.start_soon(one, "modern", first.url)
                    tg.start_soon(one, "handshake", second.url)
            assert not client.is_closed
    assert {name: r.status for name, r in results.items()} == {"modern": "ok", "handshake": "ok"}
    assert results["handshake"].protocol_version == "2025-11-25"


# ------------------------------------------------------------------------------- listing digest


async def test_an_identical_listing_has_the_same_digest_and_any_change_another() -> None:
    pages: dict[str | None, Any] = {None: {"tools": [tool("a")], "nextCursor": "p2"},
                                    "p2": {"tools": [tool("b", description="B")]}}
    with raw_listing_server(pages) as upstream:
        first = await fetch(upstream.url)
        again = await fetch(upstream.url)
        pages["p2"] = {"tools": [tool("b", description="B!")]}
        changed = await fetch(upstream.url)
    assert first.status == again.status == changed.status == "ok"
    assert first.digest is not None and first.digest.startswith("sha256:")
    assert again.digest == first.digest  # each pass numbers its JSON-RPC ids alike; only tools are hashed
    assert changed.digest != first.digest


@pytest.mark.parametrize("sse", [False, True], ids=["json-body", "sse-body"])
async def test_the_digest_covers_the_reply_as_received_not_only_its_tools(sse: bool) -> None:
    """The digest hashes each page's reply text as it arrived (re-encoding the tools cost as much as
    decoding them): a page that differs only outside ``tools`` is another listing, which costs one
    full reconcile and never hides a change."""
    pages: dict[str | None, Any] = {None: {"tools": [tool("a")]}}
    with raw_listing_server(pages, sse=sse) as upstream:
        first = await fetch(upstream.url)
        again = await fetch(upstream.url)
        pages[None] = {"tools": [tool("a")], "_meta": {"page": 1}}
        other_meta = await fetch(upstream.url)
    assert first.status == again.status == other_meta.status == "ok"
    assert first.tools == other_meta.tools
    assert again.digest == first.digest
    assert other_meta.digest != first.digest


@pytest.mark.parametrize("json_response", [False, True], ids=["sse-bodies", "json-bodies"])
async def test_an_sdk_server_listed_twice_gives_one_digest(json_response: bool) -> None:
    # The SDK's server answers with SSE by default; its events carry no per-request state but the id.
    with modern_http_server(json_response=json_response) as upstream:
        first = await fetch(upstream.url)
        again = await fetch(upstream.url)
    assert first.status == again.status == "ok" and first.digest is not None
    assert again.digest == first.digest


async def test_a_listing_that_is_not_ok_has_no_digest() -> None:
    with raw_listing_server({None: {"tools": [tool("a")], "nextCursor": "x"},
                             "x": {"tools": [], "nextCursor": "x"}}) as upstream:
        listing = await fetch(upstream.url)
    assert listing.status == "incomplete" and listing.digest is None
