"""The registry's tables. A tool is three records, each with one owner: its claim (``tools``, written
by discovery, or by hand on manual servers), its settings (``tool_settings``, an operator's) and its
current review (``tool_reviews``, a reviewer's). A server's prompts, resources and resource templates
(its *entries*) are split the same way: ``entries``, ``entry_settings``, ``entry_reviews``. See
docs/discovery.md."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final, TypeVar

from sqlalchemy import Boolean, ColumnElement, ForeignKey, Index, Integer, String, Text, UniqueConstraint, false, text
from sqlalchemy.ext.hybrid import hybrid_property
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from toolvet.db.types import Json, UTCDateTime, utcnow

#: Which calls :data:`PENDING_INTENT` covers.
PENDING: Final = "status = 'pending'"


class Base(DeclarativeBase):
    pass


class Server(Base):
    __tablename__ = "servers"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(32), unique=True)
    title: Mapped[str | None] = mapped_column(Text)
    transport: Mapped[str] = mapped_column(String(20))
    url: Mapped[str | None] = mapped_column(Text)
    command: Mapped[str | None] = mapped_column(Text)
    args: Mapped[list[str]] = mapped_column(Json, default=list)
    cwd: Mapped[str | None] = mapped_column(Text)
    # Secrets: Fernet tokens of a JSON object; values never leave toolvet, only the names do.
    headers_secret: Mapped[str | None] = mapped_column(Text)
    header_names: Mapped[list[str]] = mapped_column(Json, default=list)
    env_secret: Mapped[str | None] = mapped_column(Text)
    env_names: Mapped[list[str]] = mapped_column(Json, default=list)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    discovery: Mapped[str] = mapped_column(String(10), default="auto")
    trust_annotations: Mapped[bool] = mapped_column(Boolean, default=False)
    new_tools_enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    hold_changed_tools: Mapped[bool] = mapped_column(Boolean, default=True)
    # Off by default: findings decide nothing unless an operator asks.
    hold_flagged_tools: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    remove_stale: Mapped[bool] = mapped_column(Boolean, default=False)
    # The operator's approval floor for every tool of this server (domain.policy.ApprovalFloor).
    approval: Mapped[str] = mapped_column(String(10), default="user", server_default="user")
    # Operator-owned: the software this server runs, as the operator names it. Servers that run the same
    # software are not compared with each other by the cross-server findings (services.shadowing).
    software: Mapped[str | None] = mapped_column(String(32))
    # Discovery-owned.
    last_discovery_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_discovery_status: Mapped[str | None] = mapped_column(String(12))
    last_error: Mapped[str | None] = mapped_column(Text)
    protocol_version: Mapped[str | None] = mapped_column(String(32))
    server_info: Mapped[dict[str, Any] | None] = mapped_column(Json)
    capabilities: Mapped[dict[str, Any] | None] = mapped_column(Json)
    instructions: Mapped[str | None] = mapped_column(Text)
    # Discovery-owned: the key of the last listing reconciled in full with nothing rejected (listing
    # digest, settings, updated_at; see services.discovery) and how many live tools it left. NULL
    # after a pass that was not ok or had rejections: the next pass then reconciles in full.
    listing_key: Mapped[str | None] = mapped_column(String(71))
    listing_tools: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)

    tools: Mapped[list[Tool]] = relationship(back_populates="server", cascade="all, delete-orphan",
                                             passive_deletes=True)
    #: Set when the server's ``auth`` is ``oauth2`` (loaded with the server: every target needs it).
    oauth: Mapped[ServerOAuth | None] = relationship(cascade="all, delete-orphan", passive_deletes=True,
                                                     lazy="selectin")


def _member(name: str, key: str) -> hybrid_property[Any]:
    """The attribute ``name`` of a tool: its definition's member ``key``, the decoded definition's on a
    row (None when absent or null), the database's JSON extraction of it in a query (labelled ``name``)."""

    def on_row(tool: Tool) -> Any:
        return tool.definition.get(key)

    def in_query(cls: type[Tool]) -> ColumnElement[Any]:
        return cls.definition[key]

    on_row.__name__ = in_query.__name__ = name  # what a query labels the member's column
    return hybrid_property(on_row, expr=in_query)


class Tool(Base):
    """A tool as its server claims it: the record discovery owns (hand-set on manual servers). Its
    operator-owned settings and its review are records of their own (``ToolSettings``, ``ToolReview``),
    so no statement on this table can change what an operator or a reviewer decided."""

    __tablename__ = "tools"
    # Case sensitive on both databases: SQLite's BINARY and PostgreSQL's deterministic collations.
    __table_args__ = (UniqueConstraint("server_id", "name", name="uq_tools_server_name"),
                      # Cross-server findings: the earliest tools of other servers whose name has a key.
                      Index("ix_tools_name_key_id", "name_key", "id"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # Looked up by server through uq_tools_server_name, whose first column it is (no index of its own).
    server_id: Mapped[int] = mapped_column(ForeignKey("servers.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(Text)
    #: ``domain.findings.name_key(name)``: how another server's pass finds this tool whatever the spelling
    #: of its name (case, separators, look-alike letters). Always written with the name; NULL only in a
    #: row written by hand outside toolvet, which the cross-server checks then do not see.
    name_key: Mapped[str | None] = mapped_column(Text)
    title: Mapped[str | None] = mapped_column(Text)
    description: Mapped[str | None] = mapped_column(Text)
    #: The tool object as the server sent it, verbatim: the one place its members are stored
    #: (``input_schema`` and the others below read them from it).
    definition: Mapped[dict[str, Any]] = mapped_column(Json)
    advertised_read_only: Mapped[bool | None] = mapped_column(Boolean)
    definition_fingerprint: Mapped[str] = mapped_column(String(71))
    definition_digest: Mapped[str] = mapped_column(String(71))
    first_seen_at: Mapped[datetime] = mapped_column(UTCDateTime)
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime)
    retired_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    findings: Mapped[list[dict[str, Any]]] = mapped_column(Json, default=list)

    server: Mapped[Server] = relationship(back_populates="tools")
    # Read with the claim (one joined SELECT); written only through their own tables (viewonly), so
    # flushing a claim never writes a setting or a review. The database deletes them with the claim.
    settings: Mapped[ToolSettings] = relationship(lazy="joined", innerjoin=True, viewonly=True)
    review: Mapped[ToolReview | None] = relationship(lazy="joined", viewonly=True)

    # The definition's members, read from it (``_member``). In a query the database's JSON extraction
    # gives equal values, numbers as it reads them back: code that sends a member on (a listing, a call's
    # schema check) reads it from ``definition`` itself.

    input_schema: hybrid_property[dict[str, Any]] = _member("input_schema", "inputSchema")
    output_schema: hybrid_property[dict[str, Any] | None] = _member("output_schema", "outputSchema")
    annotations: hybrid_property[dict[str, Any] | None] = _member("annotations", "annotations")
    icons: hybrid_property[list[Any] | None] = _member("icons", "icons")
    meta: hybrid_property[dict[str, Any] | None] = _member("meta", "_meta")


class ToolMention(Base):
    """A word a tool's title, description or annotations' title mentions as a tool's name (``send_email``,
    ``sendEmail``, ```search```; ``domain.findings.mentioned_names``), by its key
    (``domain.findings.name_key``): so a pass that brings a tool of that name finds the other servers'
    tools that already speak of it. Discovery's own record, derived from the claim and written with it."""

    __tablename__ = "tool_mentions"
    __table_args__ = (Index("ix_tool_mentions_name_key", "name_key"),)

    tool_id: Mapped[int] = mapped_column(ForeignKey("tools.id", ondelete="CASCADE"), primary_key=True)
    name_key: Mapped[str] = mapped_column(Text, primary_key=True)


class ToolSettings(Base):
    """An operator's settings of one tool, 1:1 with its claim. Made with the claim, with its first
    values (``enabled`` = the server's ``new_tools_enabled``, ``writable`` true); after that only an
    operator changes them, except that a pass clears ``enabled`` of a tool it retires (see
    ``services.discovery_settings``, the one place a pass names this table)."""

    __tablename__ = "tool_settings"

    tool_id: Mapped[int] = mapped_column(ForeignKey("tools.id", ondelete="CASCADE"), primary_key=True)
    enabled: Mapped[bool] = mapped_column(Boolean)
    writable: Mapped[bool] = mapped_column(Boolean, default=True)
    # The operator's approval floor for this tool; the stricter of it and its server's applies. A
    # database default only: discovery's insert of a new tool's settings never names this column.
    approval: Mapped[str] = mapped_column(String(10), server_default="user")


class ToolReview(Base):
    """A tool's current review: which definition a person last reviewed, by whom and when. No row: never
    reviewed. ``reviews`` keeps every review (with its note); this row is the newest of them, kept so
    every read of a tool's review state is one outer join on the tool's id."""

    __tablename__ = "tool_reviews"

    tool_id: Mapped[int] = mapped_column(ForeignKey("tools.id", ondelete="CASCADE"), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(71))
    digest: Mapped[str] = mapped_column(String(71))
    reviewed_at: Mapped[datetime] = mapped_column(UTCDateTime)
    reviewed_by: Mapped[str] = mapped_column(Text)


class ToolDefinition(Base):
    """Every distinct definition a tool has had (its history), keyed by the whole-object digest.

    ``definition`` is NULL while the row is the tool's current definition, which its claim
    (``tools.definition``) holds: a definition is stored once, not twice. A change of the claim writes
    the outgoing text into its row first (``services.history.keep_outgoing``), so a NULL is never a
    definition the tool has left; :func:`history_definition` reads either."""

    __tablename__ = "tool_definitions"
    __table_args__ = (UniqueConstraint("tool_id", "digest", name="uq_tool_definitions_digest"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # Looked up by tool through uq_tool_definitions_digest, whose first column it is.
    tool_id: Mapped[int] = mapped_column(ForeignKey("tools.id", ondelete="CASCADE"))
    digest: Mapped[str] = mapped_column(String(71))
    fingerprint: Mapped[str] = mapped_column(String(71))
    definition: Mapped[dict[str, Any] | None] = mapped_column(Json)
    first_seen_at: Mapped[datetime] = mapped_column(UTCDateTime)
    #: When the tool's claim last moved off this definition (NULL: never since toolvet kept it, or it is
    #: the first and current one): a tool that went A, B, A, C had A before C, whatever the rows' order.
    left_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


def history_definition(row: ToolDefinition, tool: Tool) -> dict[str, Any]:
    """The definition a history row of ``tool`` stands for: its own text, or the claim's while it is the
    tool's current definition."""
    return row.definition if row.definition is not None else tool.definition


class Review(Base):
    """A person's review of one definition of a tool."""

    __tablename__ = "reviews"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tool_id: Mapped[int] = mapped_column(ForeignKey("tools.id", ondelete="CASCADE"), index=True)
    fingerprint: Mapped[str] = mapped_column(String(71))
    digest: Mapped[str] = mapped_column(String(71))
    reviewed_by: Mapped[str] = mapped_column(Text)
    reviewed_at: Mapped[datetime] = mapped_column(UTCDateTime)
    note: Mapped[str | None] = mapped_column(Text)


class Entry(Base):
    """A prompt, resource or resource template as its server lists it: the record discovery owns, like
    ``Tool``. ``kind`` is ``prompt``, ``resource`` or ``template``; ``key`` is what names it on its
    server (a prompt's name, a resource's URI, a template's URI template). Its settings and its review
    are records of their own (``EntrySettings``, ``EntryReview``)."""

    __tablename__ = "entries"
    __table_args__ = (UniqueConstraint("server_id", "kind", "key", name="uq_entries_server_kind_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # Looked up by server through uq_entries_server_kind_key, whose first column it is.
    server_id: Mapped[int] = mapped_column(ForeignKey("servers.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(10))
    key: Mapped[str] = mapped_column(Text)
    name: Mapped[str | None] = mapped_column(Text)
    title: Mapped[str | None] = mapped_column(Text)
    description: Mapped[str | None] = mapped_column(Text)
    definition: Mapped[dict[str, Any]] = mapped_column(Json)
    fingerprint: Mapped[str] = mapped_column(String(71))
    digest: Mapped[str] = mapped_column(String(71))
    first_seen_at: Mapped[datetime] = mapped_column(UTCDateTime)
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime)
    retired_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    findings: Mapped[list[dict[str, Any]]] = mapped_column(Json, default=list)

    settings: Mapped[EntrySettings] = relationship(lazy="joined", innerjoin=True, viewonly=True)
    review: Mapped[EntryReview | None] = relationship(lazy="joined", viewonly=True)


class EntrySettings(Base):
    """An operator's settings of one entry, 1:1 with its claim: made with the claim (``enabled`` = the
    server's ``new_tools_enabled``), then an operator's, except that a pass clears ``enabled`` of an
    entry it retires (``services.discovery_settings``)."""

    __tablename__ = "entry_settings"

    entry_id: Mapped[int] = mapped_column(ForeignKey("entries.id", ondelete="CASCADE"), primary_key=True)
    enabled: Mapped[bool] = mapped_column(Boolean)


class EntryReview(Base):
    """An entry's current review (no row: never reviewed); the note of each review is in the audit log."""

    __tablename__ = "entry_reviews"

    entry_id: Mapped[int] = mapped_column(ForeignKey("entries.id", ondelete="CASCADE"), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(71))
    digest: Mapped[str] = mapped_column(String(71))
    reviewed_at: Mapped[datetime] = mapped_column(UTCDateTime)
    reviewed_by: Mapped[str] = mapped_column(Text)


class EntryDefinition(Base):
    """Every distinct definition an entry has had (for the review diff), keyed by its digest."""

    __tablename__ = "entry_definitions"
    __table_args__ = (UniqueConstraint("entry_id", "digest", name="uq_entry_definitions_digest"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # Looked up by entry through uq_entry_definitions_digest, whose first column it is.
    entry_id: Mapped[int] = mapped_column(ForeignKey("entries.id", ondelete="CASCADE"))
    digest: Mapped[str] = mapped_column(String(71))
    fingerprint: Mapped[str] = mapped_column(String(71))
    definition: Mapped[dict[str, Any]] = mapped_column(Json)
    first_seen_at: Mapped[datetime] = mapped_column(UTCDateTime)
    #: When the entry's claim last moved off this definition (as ``ToolDefinition.left_at``).
    left_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


HistoryRow = TypeVar("HistoryRow", ToolDefinition, EntryDefinition)


def previous_definition(rows: Sequence[HistoryRow], current_digest: str) -> HistoryRow | None:
    """Of a tool's or an entry's history rows, the definition it had before its current one: the one it
    left last (rows kept before toolvet noted when a definition was left count as left before every noted
    one, in their order); None when it has had no other."""
    earlier = [r for r in rows if r.digest != current_digest]
    return max(earlier, key=lambda r: (r.left_at is not None, r.left_at or r.first_seen_at, r.id), default=None)


class DiscoveryRun(Base):
    __tablename__ = "discovery_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    server_id: Mapped[int | None] = mapped_column(ForeignKey("servers.id", ondelete="SET NULL"), index=True)
    server_name: Mapped[str] = mapped_column(String(32), index=True)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    status: Mapped[str] = mapped_column(String(12))
    trigger: Mapped[str] = mapped_column(String(20), default="manual")
    runner: Mapped[str | None] = mapped_column(String(64))  # the process (lease holder) that ran it
    protocol_version: Mapped[str | None] = mapped_column(String(32))
    pages: Mapped[int] = mapped_column(Integer, default=0)
    added: Mapped[int] = mapped_column(Integer, default=0)
    changed: Mapped[int] = mapped_column(Integer, default=0)
    unchanged: Mapped[int] = mapped_column(Integer, default=0)
    retired: Mapped[int] = mapped_column(Integer, default=0)
    rejected: Mapped[int] = mapped_column(Integer, default=0)
    rejections: Mapped[list[dict[str, Any]]] = mapped_column(Json, default=list)
    error: Mapped[str | None] = mapped_column(Text)


class Lease(Base):
    """Who may discover a server now, so two processes on one database never list it at once."""

    __tablename__ = "leases"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    holder: Mapped[str] = mapped_column(String(64))
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)


class BusMessage(Base):
    """An event too big for one PostgreSQL ``NOTIFY`` payload: stored here, and its id notified instead
    (``services.pg_bus``). Kept for minutes only."""

    __tablename__ = "bus_messages"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    topic: Mapped[str] = mapped_column(String(32))
    payload: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)


class ApiToken(Base):
    __tablename__ = "tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str | None] = mapped_column(Text)
    prefix: Mapped[str] = mapped_column(String(16))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    role: Mapped[str] = mapped_column(String(10))
    user: Mapped[str | None] = mapped_column(Text)
    scope: Mapped[str | None] = mapped_column(Text)
    oauth_scopes: Mapped[list[str]] = mapped_column(Json, default=list)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    created_by: Mapped[str] = mapped_column(Text)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class AuditEntry(Base):
    """Append-only: nothing in toolvet updates or deletes these rows."""

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
    actor: Mapped[str] = mapped_column(Text, index=True)
    action: Mapped[str] = mapped_column(String(40))
    object_type: Mapped[str] = mapped_column(String(20))
    object_id: Mapped[str] = mapped_column(Text, index=True)
    before: Mapped[Any] = mapped_column(Json, nullable=True)
    after: Mapped[Any] = mapped_column(Json, nullable=True)


class UserPreference(Base):
    """A user's permission mode; a user without a row is in the default mode, ``auto``."""

    __tablename__ = "user_preferences"

    user: Mapped[str] = mapped_column(Text, primary_key=True)
    permission_mode: Mapped[str] = mapped_column(String(8))


class ScopeDisabled(Base):
    """One serverType's list in a scope's disabled map. An empty list is kept (outside ``default``): it
    is an entry of the scope's own, so the scope does not fall back to ``default``."""

    __tablename__ = "scope_disabled"

    scope: Mapped[str] = mapped_column(Text, primary_key=True)
    server_type: Mapped[str] = mapped_column(String(32), primary_key=True)
    tool_names: Mapped[list[str]] = mapped_column(Json, default=list)


class AlwaysAllow(Base):
    """An always-allow entry of a scope, pinned to a server and a definition fingerprint."""

    __tablename__ = "always_allow"
    __table_args__ = (
        UniqueConstraint("scope", "server_type", "tool_name", "fingerprint", name="uq_always_allow_entry"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    scope: Mapped[str] = mapped_column(Text)
    server_type: Mapped[str] = mapped_column(String(32))
    tool_name: Mapped[str] = mapped_column(Text)
    fingerprint: Mapped[str] = mapped_column(String(71))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    created_by: Mapped[str] = mapped_column(Text)


#: At most one pending call per intent: a unique index over the pending calls alone, on both databases
#: (migration 0011). SQLite's clause is given here and PostgreSQL's by :func:`complete_for_dialect`,
#: because naming a dialect's option imports that dialect, which a process on SQLite has no use for.
PENDING_INTENT: Final = Index("ix_calls_pending_intent", "intent", unique=True, sqlite_where=text(PENDING))


class PendingCall(Base):
    """A call made through toolvet: pending ones wait here for an approver, so they
    survive a restart; the others are kept as the record of what ran."""

    __tablename__ = "calls"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user: Mapped[str] = mapped_column(Text, index=True)
    scope: Mapped[str] = mapped_column(Text)
    server_type: Mapped[str] = mapped_column(String(32))
    tool_name: Mapped[str] = mapped_column(Text)
    arguments: Mapped[dict[str, Any]] = mapped_column(Json)
    fingerprint: Mapped[str] = mapped_column(String(71))
    status: Mapped[str] = mapped_column(String(10), index=True)
    auto_allow: Mapped[bool] = mapped_column(Boolean)
    reasons: Mapped[list[str]] = mapped_column(Json, default=list)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    decided_by: Mapped[str | None] = mapped_column(Text)
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    allow_always: Mapped[bool] = mapped_column(Boolean, default=False)
    # The approval floor the call was decided under: ``operator`` means no consumer token approves it.
    approval: Mapped[str] = mapped_column(String(10), default="user", server_default="user")
    result: Mapped[dict[str, Any] | None] = mapped_column(Json)
    error: Mapped[str | None] = mapped_column(Text)
    # Who asked, as one digest (token, tool, arguments, MCP session): a retry of a pending call finds it
    # here instead of making another (services.call_intents). At most one pending call per intent.
    intent: Mapped[str | None] = mapped_column(String(64))
    # When the process waiting on the pending call last said it still waits: a stale one is orphaned.
    waited_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Whether a caller has been given the call's outcome (an orphaned call's retry collects it once).
    delivered: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())

    __table_args__ = (PENDING_INTENT,)


class McpSession(Base):
    """What a handshake-era MCP session's client changed after ``initialize``, or that it ended; the
    rest of the session is in its signed id (services.mcp_sessions). Keyed by the id's digest."""

    __tablename__ = "mcp_sessions"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    endpoint: Mapped[str] = mapped_column(Text)  # "/mcp", "/mcp/servers/{name}" or "/mcp/sets/{name}"
    log_level: Mapped[str | None] = mapped_column(String(16))
    ended: Mapped[bool] = mapped_column(Boolean, default=False)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)


class RateWindow(Base):
    """Requests one token made in one fixed minute, counted across the fleet (services.rate_limit)."""

    __tablename__ = "rate_windows"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    window: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    count: Mapped[int] = mapped_column(Integer, default=0)


class ToolSet(Base):
    """An operator's named allow-list of tools, served at ``/mcp/sets/{name}``. ``members`` is a list
    of ``{"server": ..., "tool": ... | null}`` (null: every offered tool of that server); a member may
    name a server that is not registered (yet), so nothing here references ``servers``."""

    __tablename__ = "tool_sets"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(32), unique=True)
    title: Mapped[str | None] = mapped_column(Text)
    description: Mapped[str | None] = mapped_column(Text)
    members: Mapped[list[dict[str, Any]]] = mapped_column(Json, default=list)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class ServerOAuth(Base):
    """An OAuth-protected server's authorization (``auth = oauth2``): the operator's settings in the
    clear, everything secret (client secret, registered client, tokens) sealed in ``secret``.

    ``version`` is bumped by every write of the grant: a refresh writes only if the version it read
    is still there (compare-and-set), so two processes refreshing at once keep one token."""

    __tablename__ = "server_oauth"

    server_id: Mapped[int] = mapped_column(ForeignKey("servers.id", ondelete="CASCADE"), primary_key=True)
    grant: Mapped[str] = mapped_column(String(24))
    client_id: Mapped[str | None] = mapped_column(Text)
    scope: Mapped[str | None] = mapped_column(Text)
    secret: Mapped[str | None] = mapped_column(Text)
    # Shown as is: "not connected", "connected" or "needs reconnect", with the reason of the last.
    status: Mapped[str] = mapped_column(String(20), default="not connected")
    error: Mapped[str | None] = mapped_column(Text)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    version: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class Webhook(Base):
    """An operator's alert webhook (``services.webhooks``): where alerts of the kinds it asks for are
    POSTed, signed with its own secret (a Fernet token, like upstream secrets). No kinds: every kind."""

    __tablename__ = "webhooks"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(32), unique=True)
    url: Mapped[str] = mapped_column(Text)
    secret_sealed: Mapped[str] = mapped_column(Text)
    kinds: Mapped[list[str]] = mapped_column(Json, default=list)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    created_by: Mapped[str] = mapped_column(Text)


class WebhookDelivery(Base):
    """One alert sent (or being sent) to one webhook. ``(webhook, alert_key)`` is unique, so processes
    that notice the same event (replicas polling one database) deliver it once."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (UniqueConstraint("webhook", "alert_key", name="uq_webhook_deliveries_alert"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # The webhook's name (a REST-managed hook's, or a settings hook's): kept after the hook is removed.
    webhook: Mapped[str] = mapped_column(String(40), index=True)
    alert_key: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(40))
    payload: Mapped[dict[str, Any]] = mapped_column(Json)
    status: Mapped[str] = mapped_column(String(12))  # sending, delivered, failed
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_status_code: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


def complete_for_dialect(name: str) -> None:
    """Add the options the models leave out at import for the database whose SQLAlchemy dialect is
    ``name``: PostgreSQL's partial-index clause (see :data:`PENDING_INTENT`). Called for every engine
    toolvet makes and in the migrations' environment, before any DDL is emitted or compared; calling it
    again changes nothing."""
    if name == "postgresql":
        PENDING_INTENT.dialect_kwargs["postgresql_where"] = text(PENDING)
