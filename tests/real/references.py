"""The third-party MCP reference servers tests/real runs, how each is started, and what is called on it.

A :class:`Reference` names one (server, transport) as toolvet registers it (``name``), how to reach it
(:class:`Stdio` or :class:`Http`, each able to give both toolvet's registration fields and a transport
for the official Python SDK ``Client``), and the deterministic tool calls the tests make on it, through
toolvet and directly, to compare.

- server-everything (npm) over stdio, legacy HTTP+SSE and streamable HTTP;
- server-memory and server-filesystem (npm) over stdio;
- mcp-server-time, mcp-server-fetch and mcp-server-git (PyPI, each in its own venv) over stdio;
- a server written with FastMCP 4 (PyPI ``fastmcp``, in its own venv; ``fastmcp_server.py``) over stdio,
  streamable HTTP and legacy HTTP+SSE;
- an MCP Apps server on the TypeScript SDK 2.x server with the ext-apps helpers (``js/apps_server.mjs``),
  deployed twice: over stdio (``clock``) and streamable HTTP (``clock-copy``), whose ``ui://`` view URIs
  are the same.

The reference servers' HTTP transports are run by :func:`node_http_server`, bound to loopback by
``js/loopback.mjs``; the FastMCP and MCP Apps ones, which take a port, by :func:`http_server`.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

import mcp.types as types
from mcp import Client
from mcp.client.extension import ClientExtension
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.gateway.lab import free_port
from tests.real_software import node_modules, npm_package, system_node, venv_python

JS: Final = Path(__file__).parent / "js"
START_TIMEOUT: Final = 20.0
STOP_TIMEOUT: Final = 10.0
_LISTENING: Final = re.compile(r"^toolvet-real: listening on 127\.0\.0\.1:(\d+)$")

Call = tuple[str, dict[str, Any]]  # (tool name, arguments)


# ------------------------------------------------------------------------------------ how to reach


@dataclass(frozen=True)
class Stdio:
    """A server toolvet launches itself (and the direct client launches a second copy of)."""

    command: str
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None

    def registration(self) -> dict[str, Any]:
        return {"transport": "stdio", "command": self.command, "args": self.args, "env": self.env or None,
                "cwd": self.cwd}

    def transport(self) -> StdioServerParameters:
        return StdioServerParameters(command=self.command, args=self.args, env=self.env or None, cwd=self.cwd)


@dataclass(frozen=True)
class Http:
    """A server already listening on loopback, shared by toolvet and the direct client."""

    url: str
    kind: Literal["streamable-http", "sse"]

    def registration(self) -> dict[str, Any]:
        return {"transport": self.kind, "url": self.url}

    def transport(self) -> Any:
        return sse_client(self.url) if self.kind == "sse" else streamable_http_client(self.url)


def same(result: dict[str, Any]) -> dict[str, Any]:
    return result


@dataclass(frozen=True)
class Reference:
    """One reference server on one transport, as registered in toolvet under ``name``."""

    name: str
    reach: Stdio | Http
    calls: list[Call]
    # Applied to both sides' results before comparing: blanks what legitimately differs between two
    # calls (a clock reading), nothing else.
    normalise: Callable[[dict[str, Any]], dict[str, Any]] = same


class McpApps(ClientExtension):
    """The MCP Apps extension as a host that shows ``ui://`` views declares it."""

    identifier = "io.modelcontextprotocol/ui"

    def settings(self) -> dict[str, Any]:
        return {"mimeTypes": ["text/html;profile=mcp-app"]}


@asynccontextmanager
async def direct_client(reach: Stdio | Http, *, apps: bool = True) -> AsyncIterator[Client]:
    """The official Python SDK client straight to the server (era negotiated, response cache off).

    It declares what toolvet declares upstream (sampling, elicitation and roots, which the gateway
    relays, and MCP Apps, whose views it passes on; ``apps=False`` leaves that out), so both see the
    same capability-dependent tool list. Its callbacks are never asked anything by the tools these
    tests call.
    """

    async def refuse(context: Any, params: Any) -> types.ErrorData:
        return types.ErrorData(code=types.INVALID_REQUEST, message="not asked in these tests")

    async with Client(reach.transport(), mode="auto", cache=None, sampling_callback=refuse,
                      elicitation_callback=refuse, list_roots_callback=refuse,
                      extensions=[McpApps()] if apps else None) as client:
        yield client


@asynccontextmanager
async def direct_client_with(reach: Stdio | Http, mode: str, elicitation: Any) -> AsyncIterator[Client]:
    """The official Python SDK client straight to the server in protocol ``mode``, answering elicitations
    with ``elicitation``."""
    async with Client(reach.transport(), mode=mode, cache=None, elicitation_callback=elicitation) as client:
        yield client


# ------------------------------------------------------------------------------------ HTTP servers


@contextmanager
def node_http_server(entry: Path, *args: str, port: int = 0) -> Iterator[int]:
    """Run ``node ENTRY ARGS`` with ``PORT=port`` bound to 127.0.0.1; yield the port it listens on.

    ``js/loopback.mjs`` makes the server bind loopback and report the bound port on stderr; a thread
    reads stderr (so the pipe never fills), and start-up is waited for on that line, bounded.
    """
    ready = threading.Event()
    bound: list[int] = []
    tail: deque[str] = deque(maxlen=20)
    with subprocess.Popen(
        [str(system_node()), "--import", str(JS / "loopback.mjs"), str(entry), *args],
        env={**os.environ, "PORT": str(port)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,  # server-everything logs every request there
        stderr=subprocess.PIPE,
        text=True,
    ) as process:

        def drain() -> None:
            assert process.stderr is not None
            for line in process.stderr:
                tail.append(line.rstrip())
                found = _LISTENING.match(line.rstrip())
                if found and not bound:
                    bound.append(int(found.group(1)))
                    ready.set()
            ready.set()  # the process ended: wake the waiter

        reader = threading.Thread(target=drain, daemon=True, name=f"stderr:{entry}")
        reader.start()
        try:
            if not ready.wait(START_TIMEOUT) or not bound:
                raise RuntimeError(f"{entry} {' '.join(args)} did not start listening: {list(tail)}")
            yield bound[0]
        finally:
            process.terminate()
            try:
                process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(STOP_TIMEOUT)
            reader.join(STOP_TIMEOUT)


@contextmanager
def http_server(program: Path, script: Path, *args: str) -> Iterator[int]:
    """Run ``PROGRAM SCRIPT ARGS PORT`` (a server that binds 127.0.0.1:PORT: python or node); yield the
    port once it accepts connections (bounded by START_TIMEOUT)."""
    port = free_port()
    with subprocess.Popen([str(program), str(script), *args, str(port)], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as process:
        try:
            deadline = time.monotonic() + START_TIMEOUT
            while True:
                with socket.socket() as probe:
                    if probe.connect_ex(("127.0.0.1", port)) == 0:
                        break
                if process.poll() is not None or time.monotonic() > deadline:
                    process.kill()
                    _, err = process.communicate(timeout=STOP_TIMEOUT)
                    raise RuntimeError(f"{script.name} {' '.join(args)} did not start listening: {err[-2000:]}")
                time.sleep(0.1)
            yield port
        finally:
            process.terminate()
            try:
                process.communicate(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate(timeout=STOP_TIMEOUT)


def everything_entry() -> Path:
    return npm_package("@modelcontextprotocol/server-everything") / "dist" / "index.js"


# ------------------------------------------------------------------------------------- the servers

EVERYTHING_CALLS: Final[list[Call]] = [
    ("echo", {"message": "hello from toolvet"}),
    ("get-sum", {"a": 2, "b": 40}),
    ("get-structured-content", {"location": "Chicago"}),
    ("get-annotated-message", {"messageType": "success", "includeImage": True}),
    ("get-tiny-image", {}),
]


def everything_stdio() -> Reference:
    return Reference(
        "everything-stdio", Stdio(str(system_node()), [str(everything_entry()), "stdio"]), EVERYTHING_CALLS
    )


def everything_http(port: int, kind: Literal["streamable-http", "sse"]) -> Reference:
    if kind == "sse":
        return Reference("everything-sse", Http(f"http://127.0.0.1:{port}/sse", "sse"), EVERYTHING_CALLS)
    return Reference("everything-http", Http(f"http://127.0.0.1:{port}/mcp", "streamable-http"), EVERYTHING_CALLS)


MEMORY_GRAPH: Final = [
    {"type": "entity", "name": "toolvet", "entityType": "project",
     "observations": ["keeps claims apart from decisions", "fingerprints tool definitions"]},
    {"type": "entity", "name": "alice", "entityType": "person", "observations": ["reviews tools"]},
    {"type": "relation", "from": "alice", "to": "toolvet", "relationType": "operates"},
]


def memory(folder: Path) -> Reference:
    """server-memory over a knowledge graph seeded in ``folder``; only reading tools are called, so the
    two processes (toolvet's and the direct one) sharing the file see the same graph."""
    graph = folder / "memory.jsonl"
    graph.write_text("\n".join(json.dumps(item) for item in MEMORY_GRAPH), encoding="utf-8")
    entry = npm_package("@modelcontextprotocol/server-memory") / "dist" / "index.js"
    calls: list[Call] = [
        ("read_graph", {}),
        ("search_nodes", {"query": "tools"}),
        ("open_nodes", {"names": ["alice"]}),
    ]
    return Reference("memory", Stdio(str(system_node()), [str(entry)], {"MEMORY_FILE_PATH": str(graph)}), calls)


def filesystem(folder: Path) -> Reference:
    """server-filesystem allowed to read ``folder``, which gets a few files."""
    root = folder.resolve()
    (root / "notes").mkdir()
    (root / "readme.txt").write_text("toolvet reads this file.\n", encoding="utf-8")
    (root / "notes" / "one.md").write_text("# One\n\nfirst note\n", encoding="utf-8")
    (root / "notes" / "two.md").write_text("# Two\n\nsecond note\n", encoding="utf-8")
    entry = npm_package("@modelcontextprotocol/server-filesystem") / "dist" / "index.js"
    calls: list[Call] = [
        ("read_text_file", {"path": str(root / "readme.txt")}),
        ("list_directory", {"path": str(root)}),
        ("directory_tree", {"path": str(root)}),
        ("search_files", {"path": str(root), "pattern": "**/*.md"}),
        ("list_allowed_directories", {}),
    ]
    return Reference("filesystem", Stdio(str(system_node()), [str(entry), str(root)]), calls)


def _blank_clock(result: dict[str, Any]) -> dict[str, Any]:
    """get_current_time's reading differs between two calls; blank its ``datetime`` field."""

    def blank(value: Any) -> Any:
        return {**value, "datetime": "<now>"} if isinstance(value, dict) and "datetime" in value else value

    out = dict(result)
    if "structuredContent" in out:
        out["structuredContent"] = blank(out["structuredContent"])
    content = []
    for item in out.get("content", []):
        if item.get("type") == "text":
            with suppress(ValueError):  # text that is not JSON stays as it is
                item = {**item, "text": json.dumps(blank(json.loads(item["text"])), sort_keys=True)}
        content.append(item)
    out["content"] = content
    return out


def time_server() -> Reference:
    calls: list[Call] = [
        ("get_current_time", {"timezone": "Europe/Paris"}),
        ("convert_time", {"source_timezone": "UTC", "time": "12:30", "target_timezone": "Asia/Tokyo"}),
    ]
    python = str(venv_python("mcp-server-time"))
    reach = Stdio(python, ["-m", "mcp_server_time", "--local-timezone", "UTC"])
    return Reference("time", reach, calls, _blank_clock)


def fetch_server(base_url: str) -> Reference:
    """mcp-server-fetch, allowed to fetch loopback (``--allow-private-ips``) and only ever given
    ``base_url``'s pages, which a test server on 127.0.0.1 serves."""
    calls: list[Call] = [
        ("fetch", {"url": f"{base_url}/page.html"}),
        ("fetch", {"url": f"{base_url}/page.html", "raw": True}),
        ("fetch", {"url": f"{base_url}/notes.txt", "max_length": 40, "start_index": 5}),
    ]
    python = str(venv_python("mcp-server-fetch"))
    return Reference("fetch", Stdio(python, ["-m", "mcp_server_fetch", "--ignore-robots-txt",
                                             "--allow-private-ips"]), calls)


def git_repository(folder: Path) -> Path:
    """A repository with two commits at fixed dates and one unstaged change."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Alice", "GIT_AUTHOR_EMAIL": "alice@example.invalid",
        "GIT_COMMITTER_NAME": "Alice", "GIT_COMMITTER_EMAIL": "alice@example.invalid",
        "GIT_AUTHOR_DATE": "2026-01-02T03:04:05+00:00", "GIT_COMMITTER_DATE": "2026-01-02T03:04:05+00:00",
        "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
    }

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=folder, env=env, check=True, capture_output=True, timeout=30)

    git("init", "-q", "-b", "main")
    (folder / "README.md").write_text("# demo\n", encoding="utf-8")
    git("add", "README.md")
    git("commit", "-q", "-m", "First commit")
    (folder / "tool.py").write_text("print('hi')\n", encoding="utf-8")
    git("add", "tool.py")
    git("commit", "-q", "-m", "Add tool.py")
    (folder / "README.md").write_text("# demo\n\nchanged, not staged\n", encoding="utf-8")
    return folder


def git_server(folder: Path) -> Reference:
    repo = str(git_repository(folder))
    calls: list[Call] = [
        ("git_status", {"repo_path": repo}),
        ("git_log", {"repo_path": repo, "max_count": 5}),
        ("git_show", {"repo_path": repo, "revision": "HEAD"}),
        ("git_branch", {"repo_path": repo, "branch_type": "local"}),
        ("git_diff_unstaged", {"repo_path": repo}),
    ]
    python = str(venv_python("mcp-server-git"))
    return Reference("git", Stdio(python, ["-m", "mcp_server_git", "--repository", repo], cwd=repo), calls)


# ------------------------------------------------------------------------------------- FastMCP 4

FASTMCP_SERVER: Final = Path(__file__).parent / "fastmcp_server.py"
FASTMCP_CALLS: Final[list[Call]] = [
    ("add", {"a": 2, "b": 40}),
    ("forecast", {"city": "Oslo"}),
    ("greet", {"name": "toolvet"}),
    ("count", {"n": 3}),
    ("view_mode", {}),
]


def fastmcp_python() -> Path:
    return venv_python("fastmcp")


def fastmcp_stdio() -> Reference:
    return Reference("fastmcp-stdio", Stdio(str(fastmcp_python()), [str(FASTMCP_SERVER), "stdio"]), FASTMCP_CALLS)


def fastmcp_http(port: int, kind: Literal["streamable-http", "sse"]) -> Reference:
    if kind == "sse":
        return Reference("fastmcp-sse", Http(f"http://127.0.0.1:{port}/sse", "sse"), FASTMCP_CALLS)
    return Reference("fastmcp-http", Http(f"http://127.0.0.1:{port}/mcp", "streamable-http"), FASTMCP_CALLS)


# ------------------------------------------------------------------------------------- MCP Apps

APPS_CALLS: Final[list[Call]] = [("show-clock", {"zone": "Europe/Oslo"})]


def apps_command() -> tuple[Path, Path, str]:
    """node, ``js/apps_server.mjs`` and the npm folder it imports from (the MCP Apps server's command)."""
    for package in ("@modelcontextprotocol/server", "@modelcontextprotocol/ext-apps", "@modelcontextprotocol/node"):
        npm_package(package)
    return system_node(), JS / "apps_server.mjs", str(node_modules())


def apps_stdio(name: str) -> Reference:
    """``js/apps_server.mjs`` (the TypeScript SDK 2.x server and the MCP Apps helpers) over stdio."""
    node, script, modules = apps_command()
    return Reference(name, Stdio(str(node), [str(script), modules]), APPS_CALLS)


def apps_http(name: str, port: int) -> Reference:
    """The same server over streamable HTTP, listening on ``port`` (:func:`http_server`)."""
    return Reference(name, Http(f"http://127.0.0.1:{port}/mcp", "streamable-http"), APPS_CALLS)
