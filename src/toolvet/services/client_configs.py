"""Server entries of MCP clients' config files, read into toolvet's server fields.

The files: Claude Desktop's ``claude_desktop_config.json``, Claude Code's ``.mcp.json`` and
``~/.claude.json`` (its ``projects`` too) and Cursor's ``mcp.json`` hold ``mcpServers``; VS Code's
``.vscode/mcp.json`` holds ``servers`` (its user settings hold ``mcp.servers``). An entry is a stdio
server (``command``, ``args``, ``env``, ``cwd``) or an HTTP one (``url``, ``headers``, a ``type`` of
``http``/``streamable-http``/``sse``). References in the values (``${VAR}``, ``${env:VAR}``) are read
from the environment toolvet runs in; one that has no value there (VS Code's ``${input:...}`` prompts,
``${workspaceFolder}``) leaves the entry out, saying which.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolvet.services.references import Unresolved, expand

HTTP_TYPES = {"http": "streamable-http", "streamable-http": "streamable-http", "streamableHttp": "streamable-http",
              "sse": "sse"}


@dataclass
class Entry:
    """One server of an imported file: its name there and the server fields read from it (``problem``
    set when it cannot be registered as written)."""

    source: str
    fields: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    problem: str | None = None
    #: The arguments as the file writes them (references unexpanded): what a plan shows.
    written_args: list[str] | None = None


def client_kind(document: Any) -> str | None:
    """``mcpServers``, ``vscode`` or None (not a client's config file)."""
    if not isinstance(document, dict):
        return None
    if isinstance(document.get("mcpServers"), dict):
        return "mcpServers"
    if isinstance(document.get("servers"), dict):
        return "vscode"
    mcp = document.get("mcp")
    if isinstance(mcp, dict) and isinstance(mcp.get("servers"), dict):
        return "vscode"
    return None


def _servers(document: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    if isinstance(document.get("mcpServers"), dict):
        yield from document["mcpServers"].items()
        # ~/.claude.json keeps each project's servers under its path.
        for project in (document.get("projects") or {}).values():
            if isinstance(project, dict) and isinstance(project.get("mcpServers"), dict):
                yield from project["mcpServers"].items()
        return
    servers = document.get("servers")
    if not isinstance(servers, dict):
        servers = document["mcp"]["servers"]
    yield from servers.items()


def client_entries(document: dict[str, Any], environ: Mapping[str, str], base: Path) -> list[Entry]:
    """Every server entry of a client's config file, in the file's order."""
    return [_entry(str(name), raw, environ, base) for name, raw in _servers(document)]


def _strings(raw: Any, what: str) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(v, str) for v in raw):
        raise ValueError(f"{what} must be a list of strings")
    return list(raw)


def _mapping(raw: Any, what: str) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ValueError(f"{what} must be an object of strings")
    return {str(k): v if isinstance(v, str) else _scalar(v, f"{what}.{k}") for k, v in raw.items()}


def _scalar(value: Any, what: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    raise ValueError(f"{what} must be a string")


def _entry(name: str, raw: Any, environ: Mapping[str, str], base: Path) -> Entry:
    entry = Entry(source=name, fields={})
    if not isinstance(raw, dict):
        entry.problem = "the entry is not an object"
        return entry
    try:
        entry.fields = _fields(raw, entry.notes)
        entry.written_args = list(entry.fields.get("args") or [])
        entry.fields = _expanded(entry.fields, environ, base)
        if entry.fields.get("args", []) != entry.written_args:
            entry.notes.append("args take values from references; toolvet stores arguments in the clear "
                               "(keep secrets in env)")
    except ValueError as exc:
        entry.problem = str(exc)
    except Unresolved as exc:
        entry.problem = f"{exc}: give it a value and import again, or register the server by hand"
    return entry


def _fields(raw: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    kind = raw.get("type") or raw.get("transport")
    url = raw.get("url") or raw.get("serverUrl")
    fields: dict[str, Any] = {}
    if raw.get("command") is not None and kind in (None, "stdio"):
        fields["transport"] = "stdio"
        fields["command"] = raw["command"] if isinstance(raw["command"], str) else _scalar(raw["command"], "command")
        fields["args"] = _strings(raw.get("args"), "args")
        fields["env"] = _mapping(raw.get("env"), "env")
        if raw.get("cwd") is not None:
            fields["cwd"] = _scalar(raw["cwd"], "cwd") if not isinstance(raw["cwd"], str) else raw["cwd"]
        if raw.get("envFile"):
            notes.append("envFile is not read: give its variables with toolvet server set --env")
    elif isinstance(url, str) and (kind is None or kind in HTTP_TYPES):
        fields["transport"] = HTTP_TYPES.get(kind or "http", "streamable-http")
        fields["url"] = url
        fields["headers"] = _mapping(raw.get("headers"), "headers")
    else:
        raise ValueError(f"neither a stdio entry (command) nor an HTTP one (url) toolvet reads (type {kind!r})")
    if raw.get("disabled") is True:
        fields["enabled"] = False
        notes.append("disabled in the file: registered disabled")
    for key in sorted(set(raw) - {"type", "transport", "command", "args", "env", "cwd", "envFile", "url",
                                  "serverUrl", "headers", "disabled"}):
        notes.append(f"{key} is not read")
    return fields


def _expanded(fields: dict[str, Any], environ: Mapping[str, str], base: Path) -> dict[str, Any]:
    def one(text: str) -> str:
        return expand(text, environ, base)

    out = dict(fields)
    for key in ("command", "url", "cwd"):
        if isinstance(out.get(key), str):
            out[key] = one(out[key])
    if "args" in out:
        out["args"] = [one(a) for a in out["args"]]
    for key in ("env", "headers"):
        if key in out:
            out[key] = {k: one(v) for k, v in out[key].items()}
    return out
