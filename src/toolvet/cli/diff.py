"""``toolvet tool diff SERVER/TOOL``: what changed between the reviewed definition and the current one
(docs/review.md), for a reviewer to read at a glance: the summary first, then the text diffs, then a table.

Every string shown comes from a tool's definition, written by whoever runs the server, so it goes out
as ``Text`` (never Rich markup).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from toolvet.cli import render
from toolvet.cli.render import JsonOption
from toolvet.cli.runtime import local
from toolvet.domain.diff import ChangeKind, show, show_hint
from toolvet.schemas.tools import ChangeOut, DiffOut
from toolvet.services.tools import split_address

if TYPE_CHECKING:  # made by the prompt and resource commands, which import it themselves
    from toolvet.schemas.entries import EntryDiffOut

# Longest value shown in a table cell; --json has the whole of it.
CELL_LIMIT = 80
_LINE_STYLES = (("+++", "bold"), ("---", "bold"), ("@@", "cyan"), ("+", "green"), ("-", "red"))


def diff(
    address: Annotated[str, typer.Argument(metavar="SERVER/TOOL", help="The tool, as SERVER/TOOL.")],
    against: Annotated[
        str | None,
        typer.Option(
            "--against",
            metavar="DIGEST",
            help="Compare with this definition from the history (digest or fingerprint, or a prefix) "
            "instead of the reviewed one.",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Show what changed between the reviewed definition and the current one."""
    from toolvet.services import review  # the review module: only for `tool diff`, not for `tool list`

    server, name = split_address(address)
    with local() as (ctx, me):
        out = review.diff(ctx, me, server, name, against=against)
    if as_json:
        render.emit_json(out)
    else:
        render.print_rich(view(out))


def view(out: DiffOut | EntryDiffOut) -> RenderableType:
    """The reviewer's view: a heading, the summary sentences, each text diff, then the changes table."""
    parts: list[RenderableType] = [heading(out), Text("")]
    parts += [Text.assemble("• ", sentence) for sentence in out.summary]
    decision = out.decision if isinstance(out, DiffOut) else None  # prompts and resources have no writable
    if decision is not None and decision.must_choose:
        was = "writable" if decision.writable else "read-only"
        parts += [Text(""), Text(f"decided {was} on the reviewed definition; since then:", style="bold")]
        parts += [Text.assemble("• ", sentence) for sentence in decision.moved]
        parts.append(Text("a review must decide again: toolvet review --writable or --read-only"))
    for change in out.changes:
        if change.text_diff:
            parts += [Text(""), Text(change.path, style="bold"), unified(change.text_diff)]
    if out.changes:
        parts += [Text(""), table(out.changes)]
    return Group(*parts)


def heading(out: DiffOut | EntryDiffOut) -> Text:
    """Which tool (or prompt, resource), its review state, and which two definitions are compared."""
    what = out.tool if isinstance(out, DiffOut) else out.key
    text = Text.assemble((f"{out.server}/{what}", "bold"), f"  review state: {out.review_state.value}\n")
    before = f"{out.compared_with} {out.before_fingerprint}" if out.compared_with else "nothing"
    text.append(f"before: {before}\nafter:  current {out.after_fingerprint}")
    return text


def unified(diff_text: str) -> Text:
    """A unified diff with removed lines red and added lines green (plain where there is no colour)."""
    text = Text()
    for i, line in enumerate(diff_text.splitlines()):
        style = next((s for prefix, s in _LINE_STYLES if line.startswith(prefix)), "")
        text.append(("\n" if i else "") + line, style=style)
    return text


def table(changes: list[ChangeOut]) -> Table:
    """The changes side by side: what, where, before, after."""
    grid = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for header in ("CHANGE", "PATH", "BEFORE", "AFTER"):
        grid.add_column(header, overflow="fold")
    for change in changes:
        grid.add_row(Text(change.kind.value), Text(change.path), cell(change, change.before),
                     cell(change, change.after))
    return grid


def cell(change: ChangeOut, value: Any) -> Text:
    """One side of a change, short: an absent hint says what it means; long text points at its diff."""
    if change.kind is ChangeKind.ANNOTATION_CHANGED:
        return Text(show_hint(change.path.removeprefix("annotations."), value, value is not None))
    if change.kind is ChangeKind.READ_ONLY_CLAIM_CHANGED:
        return Text("not stated" if value is None else "yes" if value else "no")
    if isinstance(value, str):
        shown = value if len(value) <= CELL_LIMIT else value[: CELL_LIMIT - 1] + "…"
        return Text(shown.replace("\n", " ⏎ "))
    return Text(show(value, CELL_LIMIT))
