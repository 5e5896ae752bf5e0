"""Output: the REST representation as JSON (``--json``), else Rich tables and key/value views.

JSON goes out through plain ``typer.echo`` so Rich never wraps it or adds colour; Rich is used for
the human views only, and writes colour only to a terminal.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from pydantic import BaseModel
from rich import box
from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from toolvet.schemas.common import MAX_LIMIT, MAX_OFFSET, Page
from toolvet.schemas.servers import ServerOut, Transport
from toolvet.schemas.tools import AuditOut, DefinitionOut, TokenCreated, TokenOut, ToolOut

if TYPE_CHECKING:  # only the tool set commands build these; the rest need not import them
    from toolvet.schemas.tool_sets import ToolSetMember, ToolSetOut

M = TypeVar("M", bound=BaseModel)

# Options shared by every command that shows data.
JsonOption = Annotated[bool, typer.Option("--json", help="Print the REST API's JSON representation.")]
LimitOption = Annotated[int, typer.Option("--limit", min=1, max=MAX_LIMIT, help="Most items to show.")]
OffsetOption = Annotated[
    int, typer.Option("--offset", min=0, max=MAX_OFFSET, help="Items to skip before the first shown.")
]

DASH = "—"
# Wide enough that a table piped to a file or grep is not wrapped; a terminal uses its own width.
PIPE_WIDTH = 200


def console() -> Console:
    """A Rich console on the current stdout, for live displays (progress bars) on a terminal."""
    return Console(file=sys.stdout, highlight=False)


def print_rich(renderable: RenderableType) -> None:
    """Print a Rich renderable: styled on a terminal; elsewhere plain, unwrapped, no trailing blanks."""
    if sys.stdout.isatty():
        console().print(renderable)
        return
    buffer = io.StringIO()
    width = int(os.environ["COLUMNS"]) if os.environ.get("COLUMNS", "").isdigit() else PIPE_WIDTH
    Console(file=buffer, width=width, color_system=None, highlight=False).print(renderable)
    # Rich pads every cell to its column's width; a pipe or a file is better off without the padding.
    typer.echo("\n".join(line.rstrip() for line in buffer.getvalue().splitlines()))


def emit_json(value: BaseModel | Sequence[BaseModel] | None) -> None:
    """Print ``model_dump(mode="json")`` of the service's result (a list for a list), indented."""
    if value is None:
        data: Any = None
    elif isinstance(value, BaseModel):
        data = value.model_dump(mode="json")
    else:
        data = [item.model_dump(mode="json") for item in value]
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))


def cell(value: Any) -> Text:
    """One value as plain text: never Rich markup, because tool text is written by strangers."""
    if value is None:
        return Text(DASH)
    if isinstance(value, bool):
        return Text("yes" if value else "no")
    if isinstance(value, datetime):
        return Text(value.isoformat(timespec="seconds"))
    if isinstance(value, Enum):
        return Text(str(value.value))
    if isinstance(value, dict | list):
        return Text(json.dumps(value, indent=2, ensure_ascii=False) if value else DASH)
    return Text(str(value))


def _table(*headers: str, caption: str | None = None) -> Table:
    table = Table(
        box=box.SIMPLE_HEAD, caption=caption, caption_justify="left", pad_edge=False, show_edge=False
    )
    for header in headers:
        table.add_column(header, overflow="fold")
    return table


def _page_caption(page: Page[Any], noun: str) -> str:
    if not page.items:
        return f"no {noun}" + (f" (offset {page.offset} of {page.total})" if page.total else "")
    first = page.offset + 1
    return f"{first}-{page.offset + len(page.items)} of {page.total} {noun}"


def show_page(
    page: Page[M], as_json: bool, noun: str, row: Callable[[M], Sequence[Any]], headers: Sequence[str]
) -> None:
    """A page as the REST envelope (``--json``) or as a table of ``row(item)`` with a count."""
    if as_json:
        emit_json(page)
        return
    table = _table(*headers, caption=_page_caption(page, noun))
    for item in page.items:
        table.add_row(*(cell(v) for v in row(item)))
    print_rich(table)


def show_rows(
    items: Sequence[M], as_json: bool, row: Callable[[M], Sequence[Any]], headers: Sequence[str]
) -> None:
    """A plain list (what the service returns, not paged) as a JSON array or a table."""
    if as_json:
        emit_json(items)
        return
    table = _table(*headers)
    for item in items:
        table.add_row(*(cell(v) for v in row(item)))
    print_rich(table)


def show_object(obj: BaseModel, as_json: bool, *, skip: Iterable[str] = ()) -> None:
    """One object as JSON or as a key/value view of every field (``skip`` hides bulky ones)."""
    if as_json:
        emit_json(obj)
        return
    hidden = set(skip)
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    for name in type(obj).model_fields:
        if name not in hidden:
            grid.add_row(Text(name), cell(getattr(obj, name)))
    print_rich(grid)


def say(message: str) -> None:
    """A plain confirmation line for commands that change something and show nothing else."""
    typer.echo(message)


def show_change(obj: BaseModel, as_json: bool, message: str) -> None:
    """After a change: the changed object as JSON with ``--json``, else one confirmation line."""
    if as_json:
        emit_json(obj)
    else:
        say(message)


# Rows for each kind of object.

SERVER_HEADERS = ("NAME", "TRANSPORT", "ENDPOINT", "ENABLED", "DISCOVERY", "APPROVAL", "AUTH", "LAST DISCOVERY",
                  "TOOLS")


def endpoint(server: ServerOut) -> str:
    """Where a server lives: its URL, or the command line toolvet launches."""
    if server.transport is Transport.STDIO:
        return " ".join([server.command or "", *server.args]).strip()
    return server.url or ""


def last_discovery(server: ServerOut) -> str:
    if server.last_discovery_at is None:
        return "never"
    return f"{server.last_discovery_status or '?'} {server.last_discovery_at.isoformat(timespec='seconds')}"


def server_row(server: ServerOut) -> Sequence[Any]:
    return (
        server.name,
        server.transport,
        endpoint(server),
        server.enabled,
        server.discovery,
        server.approval,
        "none" if server.oauth is None else f"oauth2: {server.oauth.status.value}",
        last_discovery(server),
        server.tool_count,
    )


TOOL_SET_HEADERS = ("NAME", "TITLE", "MEMBERS", "ENDPOINT", "UPDATED")


def member_label(member: ToolSetMember) -> str:
    """A member as ``toolset add --member`` takes it: ``SERVER/TOOL``, or ``SERVER`` for all its tools."""
    return member.server if member.tool is None else f"{member.server}/{member.tool}"


def show_tool_set(tool_set: ToolSetOut, as_json: bool) -> None:
    """A set as JSON, or its fields with one member a line (``SERVER/TOOL``, ``SERVER``)."""
    if as_json:
        emit_json(tool_set)
        return
    show_object(tool_set, False, skip=("members",))
    typer.echo("members:" if tool_set.members else "members: none")
    for member in tool_set.members:
        typer.echo(f"  {member_label(member)}" + ("  (every offered tool)" if member.tool is None else ""))


def tool_set_row(tool_set: ToolSetOut) -> Sequence[Any]:
    return (
        tool_set.name,
        tool_set.title,
        " ".join(member_label(m) for m in tool_set.members) or None,
        tool_set.endpoint,
        tool_set.updated_at,
    )


TOOL_HEADERS = ("TOOL", "ENABLED", "WRITABLE", "APPROVAL", "CLAIM", "REVIEW", "OFFERED", "FINDINGS")


def read_only_claim(tool: ToolOut) -> str:
    """The server's read-only claim in words; it decides nothing."""
    if tool.advertised_read_only is None:
        return DASH
    return "read-only" if tool.advertised_read_only else "writes"


def findings_cell(findings: list[dict[str, Any]]) -> str:
    """How many findings, and the most serious severity among them ("2 high")."""
    ranked = [f.get("severity") for f in findings if f.get("severity") in SEVERITY_ORDER]
    if not ranked:
        return str(len(findings))
    return f"{len(findings)} {max(ranked, key=SEVERITY_ORDER.index)}"


SEVERITY_ORDER = ("info", "warning", "high")


def tool_row(tool: ToolOut) -> Sequence[Any]:
    return (
        f"{tool.server}/{tool.name}",
        tool.enabled,
        tool.writable,
        tool.effective_approval,
        read_only_claim(tool),
        tool.review_state,
        tool.offered,
        findings_cell(tool.findings),
    )


def show_findings(findings: list[dict[str, Any]]) -> None:
    """A tool's findings, most serious first: severity, code, path and span, message and evidence."""
    if not findings:
        typer.echo("findings     none")
        return
    table = _table("SEVERITY", "CODE", "PATH", "SPAN", "MESSAGE", "EVIDENCE")
    order = {name: i for i, name in enumerate(SEVERITY_ORDER)}
    for f in sorted(findings, key=lambda f: -order.get(f.get("severity", ""), -1)):
        span = f.get("span")
        table.add_row(Text(str(f.get("severity", DASH))), Text(str(f.get("code") or f.get("kind", DASH))),
                      Text(str(f.get("path", DASH))), Text(f"{span[0]}-{span[1]}" if span else DASH),
                      Text(str(f.get("message", ""))), Text(repr(f["evidence"]) if "evidence" in f else DASH))
    print_rich(table)


HISTORY_HEADERS = ("FINGERPRINT", "FIRST SEEN", "CURRENT", "REVIEWED", "REVIEW NOTES")


def history_row(definition: DefinitionOut) -> Sequence[Any]:
    notes = "; ".join(f"{r.reviewed_by}: {r.note}" for r in definition.reviews if r.note)
    return (definition.fingerprint, definition.first_seen_at, definition.current, definition.reviewed, notes or None)


TOKEN_HEADERS = ("ID", "NAME", "PREFIX", "ROLE", "USER", "SCOPE", "OAUTH SCOPES", "CREATED", "REVOKED")


def token_row(token: TokenOut) -> Sequence[Any]:
    return (
        token.id,
        token.name,
        token.prefix + "…",
        token.role,
        token.user,
        token.scope,
        " ".join(token.oauth_scopes) or None,
        token.created_at,
        token.revoked_at,
    )


def show_new_token(token: TokenCreated, as_json: bool, quiet: bool) -> None:
    """The new token, once: alone on stdout with ``quiet`` (for ``$(...)``), else with its details."""
    if quiet:
        typer.echo(token.token)
        return
    if as_json:
        emit_json(token)
        return
    show_object(token, False, skip=("token",))
    typer.echo("")
    typer.echo("token (shown once, toolvet keeps only its hash):")
    typer.echo(token.token)


AUDIT_HEADERS = ("ID", "AT", "ACTOR", "ACTION", "OBJECT")


def audit_row(entry: AuditOut) -> Sequence[Any]:
    return (entry.id, entry.at, entry.actor, entry.action, entry.object_id)
