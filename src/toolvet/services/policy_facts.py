"""Policy facts: everything ``domain.policy.decide`` weighs about one tool for one user in one scope,
read from the registry in one place.

``POST /api/v1/decide`` and ``toolvet check`` (``preferences.decide_for``), the catalog, and every call
(REST and MCP, ``CallService`` through :class:`PolicyFactsCache`) read the same three parts here:

- the tool's facts (:func:`read_tool`, or :func:`facts_of` over :data:`FACT_COLUMNS` for many tools
  at once): its claim's fingerprint and annotations, its settings (``enabled``, ``writable``), its
  review state and its server's flags. toolvet's own host tools (serverType ``toolvet``) are read
  from their definitions in code (``services.host_tools``);
- the user's permission mode (:func:`read_mode`), ``auto`` when never chosen;
- the scope's disabled map and always-allow index (:func:`read_scope`): its own, or ``default``'s
  for a scope with no entry of its own (``services.preferences`` explains the fallback).

:func:`gather` joins them into :class:`PolicyFacts`, whose :meth:`~PolicyFacts.decide` is the one
decision that is explained and obeyed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import anyio.to_thread
from sqlalchemy import exists, or_, select
from sqlalchemy.orm import Session

from toolvet.cache import Loader, TtlCache
from toolvet.db.models import AlwaysAllow, ScopeDisabled, Server, Tool, ToolReview, ToolSettings, UserPreference
from toolvet.domain.names import HOST_SERVER
from toolvet.domain.policy import (
    DEFAULT_MODE,
    AllowEntry,
    AllowIndex,
    Decision,
    PermissionMode,
    ReviewState,
    ToolFacts,
    decide,
    held_for_findings,
    is_available,
    review_state,
    stricter,
)
from toolvet.services.access import NEEDS_TOKEN, Requirement, requirement
from toolvet.services.context import Context
from toolvet.services.host_tools import HostDefinition, definitions
from toolvet.services.tools import TOOL_RECORDS

DEFAULT_SCOPE: Final = "default"

# --- the tool ---------------------------------------------------------------------------------------

#: The columns a tool's facts are read from, in :func:`facts_of`'s order (over ``TOOL_RECORDS``
#: joined with ``Server``). A query may select more columns after these. The definition is among them
#: (the facts read its annotations): a reader that needs it too takes it with :func:`definition_of`.
FACT_COLUMNS: Final = (
    Server.name,
    Tool.name,
    Tool.definition_fingerprint,
    Tool.definition,
    ToolSettings.enabled,
    ToolSettings.writable,
    ToolReview.fingerprint,
    Server.enabled,
    Server.hold_changed_tools,
    Server.trust_annotations,
    Server.hold_flagged_tools,
    Tool.findings,
    Server.approval,
    ToolSettings.approval,
)
_FACTS: Final = len(FACT_COLUMNS)
_DEFINITION: Final = next(i for i, column in enumerate(FACT_COLUMNS) if column is Tool.definition)


def definition_of(row: Sequence[Any]) -> dict[str, Any]:
    """The definition in a row that starts with :data:`FACT_COLUMNS`."""
    definition: dict[str, Any] = row[_DEFINITION]
    return definition


def facts_of(row: Sequence[Any]) -> ToolFacts:
    """The facts of a row that starts with :data:`FACT_COLUMNS`."""
    (server, name, fingerprint, definition, enabled, writable, reviewed, server_enabled, hold,
     trust, hold_flagged, findings, server_floor, tool_floor) = row[:_FACTS]
    state = review_state(reviewed, fingerprint)
    return ToolFacts(
        server_type=server,
        name=name,
        fingerprint=fingerprint,
        available=is_available(enabled, server_enabled),
        review_state=state,
        hold_changed_tools=hold,
        writable=writable,
        trust_annotations=trust,
        annotations=definition.get("annotations"),
        held_flagged=held_for_findings(hold_flagged, state, findings or []),
        approval=stricter(server_floor, tool_floor),
    )


def host_facts(name: str, host: HostDefinition) -> ToolFacts:
    """A host tool's facts: always available and reviewed (its definition is toolvet's own code),
    writable exactly when it asks for approval, its ``requireApproval`` set (false for read-only ones)."""
    return ToolFacts(
        server_type=HOST_SERVER,
        name=name,
        fingerprint=host.fingerprint,
        available=True,
        review_state=ReviewState.REVIEWED,
        hold_changed_tools=False,
        writable=host.require_approval,
        trust_annotations=False,
        annotations=host.definition.get("annotations"),
        require_approval=host.require_approval,
    )


@dataclass(frozen=True, slots=True)
class ToolRecord:
    """One tool as the policy and a call see it: its facts, its contract's schemas and what calling it
    needs (its ``securitySchemes``, ``services.access``). ``server`` is its server's row, usable only
    inside the session that read it (None for a host tool)."""

    facts: ToolFacts
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    server: Server | None
    need: Requirement


def read_tool(session: Session, server: str, tool: str) -> ToolRecord | None:
    """The tool ``server``/``tool`` (a host tool when ``server`` is ``toolvet``), None when unknown."""
    if server == HOST_SERVER:
        host = definitions().get(tool)
        if host is None:
            return None
        definition = host.definition
        return ToolRecord(host_facts(tool, host), definition["inputSchema"], definition.get("outputSchema"), None,
                          requirement(definition))
    row = session.execute(
        select(*FACT_COLUMNS, Server)
        .select_from(TOOL_RECORDS)
        .join(Server, Tool.server_id == Server.id)
        .where(Server.name == server, Tool.name == tool)
    ).one_or_none()
    if row is None:
        return None
    definition = definition_of(row)
    return ToolRecord(facts_of(row), definition["inputSchema"], definition.get("outputSchema"), row[_FACTS],
                      requirement(definition))


def host_records() -> list[tuple[ToolFacts, dict[str, Any]]]:
    """Every host tool's facts and definition, by name (the catalog lists them beside the registry's)."""
    return [(host_facts(name, host), host.definition) for name, host in sorted(definitions().items())]


# --- the user ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UserMode:
    """A user's permission mode; ``chosen`` is false when they never set one (``auto``)."""

    user: str
    mode: PermissionMode
    chosen: bool


def read_mode(session: Session, user: str) -> UserMode:
    """The user's permission mode, ``auto`` when they chose none."""
    row = session.get(UserPreference, user)
    if row is None:
        return UserMode(user, DEFAULT_MODE, chosen=False)
    return UserMode(user, PermissionMode(row.permission_mode), chosen=True)


# --- the scope --------------------------------------------------------------------------------------


def has_own_entries(session: Session, scope: str) -> bool:
    """True when the scope holds a disabled-map row or an always-allow entry of its own."""
    return bool(
        session.scalar(
            select(
                or_(
                    exists().where(ScopeDisabled.scope == scope),
                    exists().where(AlwaysAllow.scope == scope),
                )
            )
        )
    )


def reads_from(session: Session, scope: str) -> str:
    """The scope whose map and list apply to ``scope``: itself, or ``default`` when it has no entry
    of its own."""
    return scope if scope == DEFAULT_SCOPE or has_own_entries(session, scope) else DEFAULT_SCOPE


def disabled_map(session: Session, scope: str) -> dict[str, list[str]]:
    """The map stored under ``scope`` (no fallback), serverTypes with an empty list left out."""
    rows = session.execute(
        select(ScopeDisabled.server_type, ScopeDisabled.tool_names)
        .where(ScopeDisabled.scope == scope)
        .order_by(ScopeDisabled.server_type)
    ).all()
    return {server_type: list(names) for server_type, names in rows if names}


def entries(session: Session, scope: str) -> Sequence[AlwaysAllow]:
    """The always-allow entries stored under ``scope`` (no fallback), by server, tool and age."""
    return session.scalars(
        select(AlwaysAllow)
        .where(AlwaysAllow.scope == scope)
        .order_by(AlwaysAllow.server_type, AlwaysAllow.tool_name, AlwaysAllow.id)
    ).all()


_NONE: Final[frozenset[str]] = frozenset()


@dataclass(frozen=True, slots=True)
class ScopeLists:
    """What applies in ``scope``: the disabled map (serverType -> tool names) and always-allow index
    of ``source``, which is the scope itself or ``default``."""

    scope: str
    source: str
    disabled: Mapping[str, frozenset[str]]
    always_allow: AllowIndex

    def disables(self, server: str, tool: str) -> bool:
        """Whether the disabled map lists this tool of this server."""
        return tool in self.disabled.get(server, _NONE)


def read_scope(session: Session, scope: str) -> ScopeLists:
    """The disabled map and always-allow index that apply in ``scope`` (its own, else ``default``'s)."""
    source = reads_from(session, scope)
    disabled = {server: frozenset(names) for server, names in disabled_map(session, source).items()}
    # Three columns, not ORM rows: a scope may hold hundreds of entries and every catalog reads them.
    pinned = session.execute(
        select(AlwaysAllow.server_type, AlwaysAllow.tool_name, AlwaysAllow.fingerprint)
        .where(AlwaysAllow.scope == source)
    ).all()
    return ScopeLists(scope, source, disabled, AllowIndex(AllowEntry(*entry) for entry in pinned))


# --- all of it --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PolicyFacts:
    """Everything one decision weighs: the tool, the user's mode, the scope's lists; and what calling
    the tool needs (``need``), which the caller's token is checked against before the decision."""

    tool: ToolFacts
    user: UserMode
    scope: ScopeLists
    need: Requirement = NEEDS_TOKEN

    @property
    def disabled(self) -> bool:
        """Whether the scope's disabled map lists the tool."""
        return self.scope.disables(self.tool.server_type, self.tool.name)

    def decide(self) -> Decision:
        """The approval decision: refused, run without a dialog, or asked about, with reasons."""
        return decide(self.user.mode, self.tool, disabled=self.disabled, always_allow=self.scope.always_allow)


def gather(session: Session, user: str, scope: str, server: str, tool: str) -> PolicyFacts | None:
    """The policy facts for ``user`` in ``scope`` about ``server``/``tool``; None when the tool is unknown."""
    record = read_tool(session, server, tool)
    if record is None:
        return None
    return PolicyFacts(record.facts, read_mode(session, user), read_scope(session, scope), record.need)


class PolicyFactsCache:
    """The call path's reading of the user and scope parts: each kept for ``seconds`` (this process's
    own changes clear them at once through :meth:`forget`), read in a worker thread on a miss, never
    on the event loop that serves every MCP session. The tool part is the caller's (it caches the
    tool with what a call needs besides its facts)."""

    def __init__(self, ctx: Context, seconds: float) -> None:
        self.ctx = ctx
        self._modes: Loader[str, UserMode] = Loader(self._load_mode, TtlCache(seconds))
        self._scopes: Loader[str, ScopeLists] = Loader(self._load_scope, TtlCache(seconds))

    def forget(self, scope: str | None = None) -> None:
        """Drop every cached read, or only ``scope``'s lists."""
        if scope is not None:
            self._scopes.pop(scope)
            return
        self._modes.clear()
        self._scopes.clear()

    async def mode(self, user: str) -> UserMode:
        """The user's mode, cached (one read at a time per user)."""
        return await self._modes.get(user)

    async def scope(self, scope: str) -> ScopeLists:
        """The scope's lists, cached (one read at a time per scope)."""
        return await self._scopes.get(scope)

    async def _load_mode(self, user: str) -> UserMode:
        return await anyio.to_thread.run_sync(self._read_mode, user)

    async def _load_scope(self, scope: str) -> ScopeLists:
        return await anyio.to_thread.run_sync(self._read_scope, scope)

    async def facts(self, user: str, scope: str, tool: ToolFacts) -> PolicyFacts:
        """The policy facts for ``user`` in ``scope`` about a tool whose facts the caller read."""
        return PolicyFacts(tool, await self.mode(user), await self.scope(scope))

    def _read_mode(self, user: str) -> UserMode:
        with self.ctx.db.transaction() as session:
            return read_mode(session, user)

    def _read_scope(self, scope: str) -> ScopeLists:
        with self.ctx.db.transaction() as session:
            return read_scope(session, scope)
