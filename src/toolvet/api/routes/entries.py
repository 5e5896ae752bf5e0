"""``/prompts`` and ``/resources`` (static resources and resource templates together), and each one's
``/servers/{name}/prompts/{prompt}`` or ``/servers/{name}/resources/{uri}``: listing, ``enabled``,
review and the review diff, in the shape of the tools' routes.

A resource's segment is its URI (a template's: its URI template), percent-encoded; like a tool's name
it is a ``path`` parameter, and the ``/review`` and ``/diff`` routes are declared first."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Body, Query

from toolvet.api.deps import ContextDep, Limit, Offset, PrincipalDep
from toolvet.domain.policy import ReviewState
from toolvet.schemas.common import Page
from toolvet.schemas.entries import EntryDiffOut, EntryKind, EntryOut, EntryPatch
from toolvet.schemas.tools import ReviewCreate
from toolvet.services import entries

router = APIRouter(tags=["prompts and resources"])

Severity = Literal["info", "warning", "high"]


def _routes(plural: str, segment: str, kinds: tuple[EntryKind, ...]) -> None:
    """The routes of one group (prompts, or resources with templates)."""
    item = f"/servers/{{name}}/{plural}/{{key:path}}"

    @router.get(f"/{plural}", name=f"list_{plural}")
    def list_all(
        ctx: ContextDep, principal: PrincipalDep,
        server: Annotated[str | None, Query(description="Only this server's.")] = None,
        offered: Annotated[bool | None, Query(description="Enabled, on an enabled server, and not held.")] = None,
        held: Annotated[bool | None, Query(description="Enabled but held for review.")] = None,
        review_state: Annotated[ReviewState | None, Query()] = None,
        findings: Annotated[Severity | None, Query(description="Only those with a finding at least this severe.")]
        = None,
        limit: Limit = 100, offset: Offset = 0,
    ) -> Page[EntryOut]:
        return entries.list_entries(ctx, principal, kinds, server=server, offered_=offered, held=held,
                                    state=review_state, min_severity=findings, limit=limit, offset=offset)

    @router.post(f"{item}/review", name=f"review_{segment}")
    def review(
        ctx: ContextDep, principal: PrincipalDep, name: str, key: str,
        data: Annotated[ReviewCreate | None, Body()] = None,
    ) -> EntryOut:
        return entries.review_entry(ctx, principal, kinds, name, key, data.note if data else None)

    @router.get(f"{item}/diff", name=f"diff_{segment}")
    def diff(ctx: ContextDep, principal: PrincipalDep, name: str, key: str) -> EntryDiffOut:
        return entries.diff_entry(ctx, principal, kinds, name, key)

    @router.get(item, name=f"get_{segment}")
    def get(ctx: ContextDep, principal: PrincipalDep, name: str, key: str) -> EntryOut:
        return entries.get_entry(ctx, principal, kinds, name, key)

    @router.patch(item, name=f"update_{segment}")
    def update(ctx: ContextDep, principal: PrincipalDep, name: str, key: str,
               patch: EntryPatch) -> EntryOut:
        return entries.update_entry(ctx, principal, kinds, name, key, patch)

    list_all.__doc__ = f"Every {segment} (by server and key), filtered on the derived fields."
    review.__doc__ = f"Record a review of the {segment}'s current definition; a held one is offered again."
    diff.__doc__ = f"What changed between the reviewed definition of the {segment} and its current one."
    get.__doc__ = f"One {segment}."
    update.__doc__ = f"Enable or disable the {segment}."


_routes("prompts", "prompt", entries.PROMPTS)
_routes("resources", "uri", entries.RESOURCES)
