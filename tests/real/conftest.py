"""toolvet in front of the real third-party MCP reference software (see tests/real/references.py).

``world`` is package-scoped: every reference server is started once for the whole of tests/real (the
HTTP ones as processes on loopback; the stdio ones are launched by toolvet and by the direct client),
registered in one served toolvet (the whole app over uvicorn on loopback, SQLite) and discovered in one
pass. A piece that is not installed skips (locally) or fails (under CI=true) only the tests that
need it, through tests/real_software.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import mcp.types as types
import pytest
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, PlainTextResponse
from starlette.routing import Route

from tests.gateway.conftest import ADMIN, Toolvet, open_toolvet
from tests.real.references import (
    FASTMCP_SERVER,
    JS,
    Reference,
    apps_command,
    apps_http,
    apps_stdio,
    direct_client,
    direct_client_with,
    everything_entry,
    everything_http,
    everything_stdio,
    fastmcp_http,
    fastmcp_python,
    fastmcp_stdio,
    fetch_server,
    filesystem,
    git_server,
    http_server,
    memory,
    node_http_server,
    time_server,
)
from tests.real_software import node_modules, npm_package, system_node
from tests.upstreams import serve
from toolvet.schemas.tools import DiscoveryRunOut
from toolvet.services import discovery, preferences, servers, tools

# Every (server, transport) the package runs, by its name in toolvet.
NAMES: Final = [
    "everything-stdio", "everything-sse", "everything-http", "memory", "filesystem", "time", "fetch", "git",
    "fastmcp-stdio", "fastmcp-http", "fastmcp-sse", "clock", "clock-copy",
]
BOUND: Final = 30.0
# A TypeScript server drops a request it cannot parse without answering; a pass that meets one gives
# up after this long instead of the default 30 s, so a failing run stays short.
READ_TIMEOUT: Final = 10.0

PAGE_HTML: Final = (
    "<html><head><title>toolvet test page</title></head><body><article><h1>Vetted tools</h1>"
    "<p>toolvet keeps what servers claim apart from what people decide.</p>"
    "<ul><li>discover</li><li>review</li><li>offer</li></ul></article></body></html>"
)
NOTES_TXT: Final = "line one of the notes\nline two of the notes\nline three of the notes\n"


def canonical(result: dict[str, Any]) -> dict[str, Any]:
    """A ``tools/call`` result as JSON, less what only says who answered or in which era: ``_meta``
    (a proxy's own server info), ``resultType`` (2026-07-28) and ``isError`` when false (its default)."""
    out = {key: value for key, value in result.items() if key not in ("_meta", "resultType")}
    if out.get("isError") is False:
        del out["isError"]
    return out


def sdk_result(result: Any) -> dict[str, Any]:
    """An SDK ``CallToolResult`` as its wire JSON (canonical)."""
    dumped: dict[str, Any] = result.model_dump(by_alias=True, exclude_none=True, mode="json")
    return canonical(dumped)


def sdk_tool(tool: Any) -> dict[str, Any]:
    """An SDK ``Tool`` as the JSON it was parsed from (fields the server did not send left out)."""
    dumped: dict[str, Any] = tool.model_dump(by_alias=True, exclude_unset=True, mode="json")
    return dumped


@dataclass
class World:
    toolvet: Toolvet
    references: dict[str, Reference]
    missing: dict[str, BaseException]  # name -> the skip (or, under CI=true, failure) of a missing piece
    runs: dict[str, DiscoveryRunOut]
    _tools: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    _results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def reference(self, name: str) -> Reference:
        """The reference ``name``; skips or fails the test the way tests/real_software.need does when
        a piece of it is not installed."""
        if name in self.missing:
            raise self.missing[name]
        return self.references[name]

    def discovered(self, name: str) -> Reference:
        """The reference ``name``, failing the test with the pass's own error unless it was discovered."""
        reference = self.reference(name)
        run = self.runs[name]
        assert run.status == "ok", f"discovery of {name} {run.status}: {run.error}"
        return reference

    def stored(self, name: str) -> list[dict[str, Any]]:
        """The tool definitions toolvet stored for server ``name``, verbatim."""
        page = tools.list_tools(self.toolvet.ctx, ADMIN, server=name, limit=1000)
        return [item.definition for item in page.items]

    async def direct_tools(self, name: str) -> list[dict[str, Any]]:
        """Every tool the official Python SDK client lists straight from ``name`` (read once, kept)."""
        if name not in self._tools:
            with anyio.fail_after(BOUND):
                async with direct_client(self.reference(name).reach) as client:
                    listed: list[dict[str, Any]] = []
                    cursor: str | None = None
                    for _ in range(100):
                        page = await client.list_tools(cursor=cursor)
                        listed += [sdk_tool(tool) for tool in page.tools]
                        cursor = page.next_cursor
                        if cursor is None:
                            break
            self._tools[name] = listed
        return self._tools[name]

    async def direct_results(self, name: str) -> list[dict[str, Any]]:
        """The results of ``name``'s calls made straight with the official Python SDK client,
        canonical and normalised, one per ``Reference.calls`` entry (made once, kept)."""
        if name not in self._results:
            reference = self.reference(name)
            with anyio.fail_after(BOUND):
                async with direct_client(reference.reach) as client:
                    self._results[name] = [
                        reference.normalise(sdk_result(await client.call_tool(tool, arguments)))
                        for tool, arguments in reference.calls
                    ]
        return self._results[name]


def _pages() -> Starlette:
    async def page(request: Any) -> HTMLResponse:
        return HTMLResponse(PAGE_HTML)

    async def notes(request: Any) -> PlainTextResponse:
        return PlainTextResponse(NOTES_TXT)

    return Starlette(routes=[Route("/page.html", page), Route("/notes.txt", notes)])


def _build(references: dict[str, Reference], missing: dict[str, BaseException], name: str,
           make: Any, *args: Any) -> None:
    try:
        references[name] = make(*args)
    except (pytest.skip.Exception, pytest.fail.Exception) as exc:
        missing[name] = exc


@pytest.fixture(scope="package")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    references: dict[str, Reference] = {}
    missing: dict[str, BaseException] = {}
    with ExitStack() as stack:
        try:
            entry = everything_entry()
            http_port = stack.enter_context(node_http_server(entry, "streamableHttp"))
            sse_port = stack.enter_context(node_http_server(entry, "sse"))
            references["everything-http"] = everything_http(http_port, "streamable-http")
            references["everything-sse"] = everything_http(sse_port, "sse")
        except (pytest.skip.Exception, pytest.fail.Exception) as exc:
            missing["everything-http"] = missing["everything-sse"] = exc
        try:
            python = fastmcp_python()
            http_port = stack.enter_context(http_server(python, FASTMCP_SERVER, "http"))
            sse_port = stack.enter_context(http_server(python, FASTMCP_SERVER, "sse"))
            references["fastmcp-http"] = fastmcp_http(http_port, "streamable-http")
            references["fastmcp-sse"] = fastmcp_http(sse_port, "sse")
        except (pytest.skip.Exception, pytest.fail.Exception) as exc:
            missing["fastmcp-http"] = missing["fastmcp-sse"] = exc
        _build(references, missing, "fastmcp-stdio", fastmcp_stdio)
        _build(references, missing, "clock", apps_stdio, "clock")
        try:
            http_port = stack.enter_context(http_server(*apps_command()))
            references["clock-copy"] = apps_http("clock-copy", http_port)
        except (pytest.skip.Exception, pytest.fail.Exception) as exc:
            missing["clock-copy"] = exc
        pages = stack.enter_context(serve(_pages(), ""))
        _build(references, missing, "everything-stdio", everything_stdio)
        _build(references, missing, "memory", memory, tmp_path_factory.mktemp("memory"))
        _build(references, missing, "filesystem", filesystem, tmp_path_factory.mktemp("files"))
        _build(references, missing, "time", time_server)
        _build(references, missing, "fetch", fetch_server, pages.url)
        _build(references, missing, "git", git_server, tmp_path_factory.mktemp("repo"))

        toolvet = stack.enter_context(
            open_toolvet(tmp_path_factory.mktemp("toolvet"), read_timeout=READ_TIMEOUT, call_timeout=BOUND)
        )
        for name, reference in references.items():
            servers.create_server(toolvet.ctx, ADMIN, {"name": name, **reference.reach.registration()})
        # Calls run without an approval dialog: alice's permission mode is "allow".
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")

        async def discover_all() -> list[DiscoveryRunOut]:
            with anyio.fail_after(4 * BOUND):
                return await discovery.discover(toolvet.ctx, ADMIN, list(references))

        runs = {run.server: run for run in anyio.run(discover_all)} if references else {}
        stack.enter_context(toolvet.serve())
        yield World(toolvet, references, missing, runs)


async def typescript_client(sdk: str, url: str, token: str, calls: list[dict[str, Any]],
                            **extra: Any) -> dict[str, Any]:
    """Run js/client.mjs with TypeScript SDK ``sdk`` ("v1": @modelcontextprotocol/sdk 1.x, "v2":
    @modelcontextprotocol/client 2.x) against ``url``; its JSON answer (tools listed, call results,
    resource updates heard). ``extra`` goes into its request (``roots``, ``subscribe``, ``waitFor``)."""
    npm_package("@modelcontextprotocol/sdk" if sdk == "v1" else "@modelcontextprotocol/client")
    request = json.dumps({"url": url, "token": token, "calls": calls, **extra})
    # Both packages run on node >= 20, so the machine's own node runs the script.
    command = [str(system_node()), str(JS / "client.mjs"), sdk, str(node_modules()), request]
    return await printed_json(command, f"the TypeScript {sdk} client")


async def printed_json(command: list[str], who: str) -> dict[str, Any]:
    """Run a client program (bounded); the JSON object it printed, or the test fails with its stderr."""
    with anyio.fail_after(BOUND):
        done = await anyio.run_process(command, check=False)
    stderr = done.stderr.decode(errors="replace").strip()
    assert done.returncode == 0, f"{who} failed ({done.returncode}): {stderr[-2000:]}"
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


class User:
    """Answers every form it is shown with ``answer``, and keeps the messages it was shown."""

    def __init__(self, answer: dict[str, object]) -> None:
        self.answer = answer
        self.shown: list[str] = []

    async def __call__(self, context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.shown.append(params.message)
        return types.ElicitResult(action="accept", content=self.answer)  # type: ignore[arg-type]


async def called_both_ways(world: World, name: str, mode: str, answer: dict[str, object], tool: str,
                            arguments: dict[str, object]) -> tuple[dict[str, object], dict[str, object], list[str]]:
    """``tool`` of server ``name`` called straight and through toolvet in protocol ``mode`` by a user who
    answers every question with ``answer``: (its result directly, through toolvet, the questions shown,
    which must be the same both ways)."""
    direct, through = User(answer), User(answer)
    with anyio.fail_after(BOUND):
        async with direct_client_with(world.reference(name).reach, mode, direct) as own:
            expected = await own.call_tool(tool, arguments)
        async with world.toolvet.client(world.toolvet.alice, mode=mode, elicitation_callback=through) as client:
            got = await client.call_tool(f"{name}_{tool}", arguments)
    assert through.shown == direct.shown
    return canonical(sdk_result(expected)), canonical(sdk_result(got)), direct.shown
