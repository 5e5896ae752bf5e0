"""Writing one discovery pass (docs/discovery.md#one-pass): the change set of ``domain.reconcile`` applied in one
transaction, with statements built once on the claim table (``tools``) and the tool's history, the
no-change fast path, and the run's record. ``services.discovery`` plans and runs passes; this module is
their write side. It cannot name an operator's or a reviewer's column: those live in tables this
module does not import. What a pass must do to settings (a new tool's first values, a retired tool's
``enabled`` cleared) is ``services.discovery_settings.settle_settings``, one statement.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import Any, Final, Protocol, cast

from sqlalchemy import BindParameter, Connection, Update, bindparam, delete, func, insert, select, update

from toolvet.db.bulk import BulkInsert
from toolvet.db.engine import Database
from toolvet.db.models import DiscoveryRun, Server, Tool, ToolDefinition
from toolvet.db.types import Preserialized, utcnow
from toolvet.domain import findings as checks
from toolvet.domain.listing import Listing
from toolvet.domain.reconcile import ChangeSet, StoredTool, Upsert, reconcile
from toolvet.errors import NotFound
from toolvet.jsontext import compact
from toolvet.schemas.tools import DiscoveryRunOut
from toolvet.services import leases
from toolvet.services.context import Context
from toolvet.services.discovery_settings import settle_settings
from toolvet.services.entry_writes import write_entries
from toolvet.services.history import keep_outgoing
from toolvet.services.shadowing import CrossServer, write_mentions

# ------------------------------------------------------------------ the pass's statements, built once
#
# Built once at import and executed on a Core connection: constructing a statement, deriving its
# cache key and the ORM's bulk-statement handling cost more than the SQL itself for the small
# statements of a pass (a few ms per server). Every value is a bound parameter, typed by its column.


def _ids(name: str = "p_ids") -> BindParameter[Any]:
    return bindparam(name, expanding=True)


def _param(column: Any, name: str | None = None) -> BindParameter[Any]:
    return bindparam(name or f"p_{column.key}", type_=column.type)


_SELECT_STORED = select(
    Tool.id, Tool.name, Tool.definition_digest, Tool.advertised_read_only, Tool.retired_at
).where(Tool.server_id == _param(Tool.server_id))
_SELECT_INPUT_SCHEMAS = select(Tool.id, Tool.input_schema).where(Tool.id.in_(_ids()))
# A new tool's claim: every column of the claim table but its id.
_TOOL_ROW_SHARED = ("server_id", "first_seen_at", "last_seen_at", "retired_at")
_TOOL_ROW_OWN = ("name", "name_key", "title", "description", "definition", "advertised_read_only",
                 "definition_fingerprint", "definition_digest", "findings")
_INSERT_TOOLS = BulkInsert(Tool.__table__, _TOOL_ROW_SHARED + _TOOL_ROW_OWN)  # type: ignore[arg-type]
_SELECT_IDS_BY_NAME = select(Tool.id, Tool.name).where(Tool.server_id == _param(Tool.server_id),
                                                       Tool.name.in_(bindparam("p_names", expanding=True)))
_UPDATE_CLAIM = update(Tool).where(Tool.id == _param(Tool.id))  # SET: the discovery columns given
_SELECT_KNOWN_DIGESTS = select(ToolDefinition.tool_id, ToolDefinition.digest).where(
    ToolDefinition.tool_id.in_(_ids())
)
# A history row is inserted without its text (NULL: the claim holds the current definition); before a
# claim changes, its outgoing definition is written into its row (services.history.keep_outgoing).
_INSERT_HISTORY = BulkInsert(ToolDefinition.__table__, ("tool_id", "digest", "fingerprint", "first_seen_at"))  # type: ignore[arg-type]
# The no-change fast path's one tool write: every live tool of the server seen now, but only while the
# server still has exactly the live tools the recorded listing left (p_count). An operator's delete
# (or anything else that moved the count) makes it match nothing, and the pass reconciles in full.
# The count reads an alias of tools: a bare Tool subquery would be auto-correlated to the row updated.
_live = Tool.__table__.alias("live")
_LIVE_COUNT = (
    select(func.count()).select_from(_live)
    .where(_live.c.server_id == bindparam("p_server_id"), _live.c.retired_at.is_(None))
    .scalar_subquery()
)
_TOUCH_LIVE_IF_COUNT = (
    update(Tool)
    .where(Tool.server_id == bindparam("p_server_id"), Tool.retired_at.is_(None),
           bindparam("p_count") == _LIVE_COUNT)
    .values(last_seen_at=_param(Tool.last_seen_at))
)
_TOUCH_UNCHANGED = update(Tool).where(Tool.id.in_(_ids())).values(last_seen_at=_param(Tool.last_seen_at))
_DELETE_STALE = delete(Tool).where(Tool.id.in_(_ids()))
# Retiring is the claim's retired_at here; clearing the tool's enabled is settle_settings'.
_RETIRE_STALE = update(Tool).where(Tool.id.in_(_ids())).values(retired_at=_param(Tool.retired_at))
_INSERT_RUN = insert(DiscoveryRun).returning(DiscoveryRun.id)

_SERVER_RUN_COLUMNS = (Server.last_discovery_at, Server.last_discovery_status, Server.last_error)
_SERVER_OK_COLUMNS = (*_SERVER_RUN_COLUMNS, Server.protocol_version, Server.server_info, Server.capabilities,
                      Server.instructions)


def _server_update(columns: Sequence[Any], **fixed: Any) -> Update:
    # updated_at is set to itself: discovery's own columns are no operator-visible edit, and an
    # explicit value keeps the column's onupdate from bumping it. RETURNING hands back what the tool
    # writes and the fast-path test need, so the server row is never read separately. The listing
    # columns are left alone here (RETURNING shows their values from before this pass), except that a
    # pass that is not ok clears the key (``fixed``): the next pass must then reconcile in full.
    return (
        update(Server).where(Server.id == _param(Server.id))
        .values({**{c.key: _param(c) for c in columns}, **fixed, "updated_at": Server.updated_at})
        .returning(Server.id, Server.name, Server.new_tools_enabled, Server.remove_stale, Server.updated_at,
                   Server.listing_key, Server.listing_tools, Server.software)
    )


_UPDATE_SERVER_OK = _server_update(_SERVER_OK_COLUMNS)
_UPDATE_SERVER_NOT_OK = _server_update(_SERVER_RUN_COLUMNS, listing_key=None, listing_tools=None)
_UPDATE_SERVER_LISTING = (
    update(Server).where(Server.id == _param(Server.id))
    .values(listing_key=_param(Server.listing_key), listing_tools=_param(Server.listing_tools),
            updated_at=Server.updated_at)
)


#: 2: fingerprints cover a tool's declared ``securitySchemes``.
RECONCILE_VERSION: Final = 2


def listing_key(listing_digest: str, max_definition_bytes: int, server_updated_at: datetime) -> str:
    """What must be equal for a pass to skip reconcile: the listing as received, and everything else
    a full reconcile of it depends on that is not in the tools table.

    - ``max_definition_bytes``: a changed limit may reject (or now accept) a stored tool;
    - the server row's ``updated_at``: any operator edit of the server (``new_tools_enabled``,
      ``remove_stale``, its URL, a switch to ``manual`` and back with tools edited by hand meanwhile)
      forces one full reconcile. Discovery never moves ``updated_at`` itself.

    - :data:`RECONCILE_VERSION`: what a stored claim is made of (raised when the fingerprint came to
      cover more of a definition, so each listing is reconciled once more and its tools re-fingerprinted).

    The stored tools' side is checked separately (their live count, in ``_TOUCH_LIVE_IF_COUNT``).
    """
    text = (f"{listing_digest}\nmax_definition_bytes={max_definition_bytes}\nupdated_at={server_updated_at.isoformat()}"
            f"\nreconcile={RECONCILE_VERSION}")
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _stored(conn: Connection, server_id: int) -> list[StoredTool]:
    # No input_schema: decoding every tool's JSON schema on every pass cost more than the rest of a
    # no-change pass's reads; reconcile asks _input_schemas for the few changed tools that need it.
    rows = conn.execute(_SELECT_STORED, {"p_server_id": server_id}).all()
    return [StoredTool(id=r.id, name=r.name, digest=r.definition_digest,
                       advertised_read_only=r.advertised_read_only, retired=r.retired_at is not None) for r in rows]


def _input_schemas(conn: Connection, tool_ids: Sequence[int]) -> Mapping[int, Any]:
    """The stored input schemas of ``tool_ids``, read in the pass's transaction (reconcile's loader)."""
    rows = conn.execute(_SELECT_INPUT_SCHEMAS, {"p_ids": list(tool_ids)}).all()
    return {r.id: r.input_schema for r in rows}


def _definition_text(claim: Any) -> Preserialized:
    """The definition encoded as its column would encode it (:func:`toolvet.jsontext.compact`), bound as a
    :class:`Preserialized` text."""
    return Preserialized(compact(claim.definition))


def _claim_columns(upsert: Upsert, now: datetime) -> dict[str, Any]:
    c = upsert.claim
    return {
        "title": c.title, "description": c.description, "definition": _definition_text(c),
        "advertised_read_only": c.advertised_read_only,
        "definition_fingerprint": c.fingerprint, "definition_digest": c.digest, "last_seen_at": now,
        "retired_at": None, "findings": upsert.findings,
    }


class ServerFlags(Protocol):
    """What ``write_changes`` reads of a server: a ``Server`` or a row with these columns."""

    @property
    def id(self) -> int: ...
    @property
    def new_tools_enabled(self) -> bool: ...
    @property
    def remove_stale(self) -> bool: ...


def write_changes(conn: Connection, server: ServerFlags, changes: ChangeSet, now: datetime) -> int:
    """Apply a change set; the caller's transaction makes it all or nothing. Returns how many names the
    written claims' texts mention (``tool_mentions`` rows)."""
    mentions = 0
    history: list[dict[str, Any]] = []
    new_ids: list[int] = []
    retired_ids: list[int] = []
    if changes.added:
        shared = {"server_id": server.id, "first_seen_at": now, "last_seen_at": now, "retired_at": None}
        _INSERT_TOOLS.execute(conn, shared, [
            {"definition": _definition_text(u.claim), "name": u.claim.name, "name_key": checks.name_key(u.claim.name),
             "title": u.claim.title, "description": u.claim.description,
             "advertised_read_only": u.claim.advertised_read_only, "definition_fingerprint": u.claim.fingerprint,
             "definition_digest": u.claim.digest, "findings": u.findings}
            for u in changes.added])
        ids = conn.execute(_SELECT_IDS_BY_NAME, {"p_server_id": server.id,
                                                 "p_names": [u.claim.name for u in changes.added]}).all()
        by_name = {u.claim.name: u.claim for u in changes.added}
        new_ids = [r.id for r in ids]
        history += [{"tool_id": r.id, "digest": by_name[r.name].digest, "fingerprint": by_name[r.name].fingerprint}
                    for r in ids]
        mentions += write_mentions(conn, [(r.id, by_name[r.name].title, by_name[r.name].description,
                                           by_name[r.name].annotations) for r in ids],
                                   [])
    if changes.changed:
        changed_ids = [cast(int, u.tool_id) for u in changes.changed]  # changed: ids are set
        known = {(r.tool_id, r.digest) for r in conn.execute(_SELECT_KNOWN_DIGESTS, {"p_ids": changed_ids})}
        # The definitions the claims leave go into their history rows before the claims change.
        keep_outgoing(conn, changed_ids, now)
        # One executemany; every row sets the same discovery-owned columns (_claim_columns).
        conn.execute(_UPDATE_CLAIM, [{**_claim_columns(u, now), "p_id": u.tool_id} for u in changes.changed])
        mentions += write_mentions(conn, [(cast(int, u.tool_id), u.claim.title, u.claim.description,
                                           u.claim.annotations)
                                          for u in changes.changed], changed_ids)
        for u in changes.changed:
            if (u.tool_id, u.claim.digest) not in known:
                history.append({"tool_id": u.tool_id, "digest": u.claim.digest, "fingerprint": u.claim.fingerprint})
    if history:
        _INSERT_HISTORY.execute(conn, {"first_seen_at": now}, history)
    if changes.unchanged_ids:
        # One bulk statement for every unchanged tool, never one write per row.
        conn.execute(_TOUCH_UNCHANGED, {"p_ids": changes.unchanged_ids, "p_last_seen_at": now})
    if changes.retire_ids:
        if server.remove_stale:
            conn.execute(_DELETE_STALE, {"p_ids": changes.retire_ids})
        else:
            conn.execute(_RETIRE_STALE, {"p_ids": changes.retire_ids, "p_retired_at": now})
            retired_ids = changes.retire_ids
    if new_ids or retired_ids:
        # New tools get their first settings here, once; a retired one has enabled cleared.
        settle_settings(conn, new_ids, server.new_tools_enabled, retired_ids)
    return mentions


_SELECT_LAST_DISCOVERY = select(Server.id, Server.last_discovery_at).where(Server.id.in_(_ids()))

#: Why a pass is skipped (its lease not held).
#: Said of a lease another process holds, which may be one that died on another host (its lease then lapses
#: within ``lease_seconds``: its holder renews it while alive), so it claims no live process.
LEASED_ELSEWHERE: Final = ("another toolvet process holds this server's discovery lease (it lapses within "
                           "lease_seconds if that process has stopped)")
DISCOVERED_MEANWHILE: Final = "discovered by another toolvet process meanwhile"


def begin_passes(db: Database, passes: Sequence[tuple[str, int]], lease_seconds: float, since: datetime | None, *,
                 holder: str = leases.HOLDER) -> list[str | None]:
    """Take the leases of several passes (``(lease key, server id)`` each) in one transaction and, for
    the scheduler, check nobody discovered their servers since ``since``.

    Returns, per pass in order, why it is skipped (its lease then not held), or None when it goes on
    holding its lease.
    """
    with db.engine.begin() as conn:
        held = leases.acquire_many(conn, [key for key, _ in passes], lease_seconds, holder)
        meanwhile: set[int] = set()
        ids = [server_id for key, server_id in passes if key in held]
        if since is not None and ids:
            meanwhile = {row.id for row in conn.execute(_SELECT_LAST_DISCOVERY, {"p_ids": ids})
                         if row.last_discovery_at is not None and row.last_discovery_at >= since}
            for key, server_id in passes:
                if server_id in meanwhile and key in held:
                    leases.release_in(conn, key, holder)
    return [LEASED_ELSEWHERE if key not in held else DISCOVERED_MEANWHILE if server_id in meanwhile else None
            for key, server_id in passes]


class ToolsWithheld(Exception):
    """``apply_listing`` was given a listing without its tools, and needs them (nothing was written)."""


def apply_listing(
    ctx: Context, server_id: int, name: str, listing: Listing, started: datetime, trigger: str, *,
    lease_key: str | None = None, holder: str = leases.HOLDER, tools_withheld: bool = False,
) -> DiscoveryRunOut:
    """Reconcile a listing and record the run, in one transaction. Only an ``ok`` listing changes
    tools (and prompts, resources, templates: ``services.entry_writes``): an incomplete or failed one
    is recorded and changes nothing. With ``lease_key``
    the lease ``holder`` has on it is released in the same transaction (the holder also names the
    run's runner).

    ``tools_withheld`` says ``listing.tools`` was left out (a writer process is sent a listing that
    is likely unchanged without them): the no-change fast path needs none; if it does not hold,
    ToolsWithheld is raised and the transaction rolled back.

    Core statements throughout (no ORM identity map or flush): the server row is updated first and
    RETURNING hands back the flags the tool writes need, and the run row is inserted RETURNING its id.
    """
    return _apply_group(ctx, [(server_id, name, listing, started, trigger, lease_key, tools_withheld)], holder)[0]


#: One pass's apply for :func:`apply_listings`: server id, name, listing, started, trigger, lease key, and
#: whether the listing's tools were withheld.
ListingApply = tuple[int, str, Listing, datetime, str, str | None, bool]
#: At most this many tools' listings share one transaction in :func:`apply_listings`: SQLite's write lock
#: is held for the whole of it, and others (an operator's edit, the sweep taking its next leases) wait.
GROUP_TOOLS: Final = 2000


def apply_listings(ctx: Context, items: Sequence[ListingApply], holder: str = leases.HOLDER,
                   ) -> list[DiscoveryRunOut | Exception]:
    """Apply several passes' listings (:func:`apply_listing` each), up to :data:`GROUP_TOOLS` tools in one
    transaction: a commit and the index pages it writes are paid once per group, not once per pass.

    Per item, in order: its run, or the exception its apply raised (``ToolsWithheld`` included; nothing
    is written for that item). Should any apply of a group raise, the group's transaction is rolled
    back and each of its items applied in a transaction of its own, so one pass's failure is its own.
    Every item's outcome is final once this returns: each run reported has been committed.
    """
    outcomes: list[DiscoveryRunOut | Exception] = []
    start = 0
    while start < len(items):
        end, tools = start, 0
        while end < len(items) and (end == start or tools + len(items[end][2].tools) <= GROUP_TOOLS):
            tools += len(items[end][2].tools)
            end += 1
        group = items[start:end]
        try:
            outcomes += _apply_group(ctx, group, holder)
        except Exception:
            for item in group:
                try:
                    outcomes += _apply_group(ctx, [item], holder)
                except Exception as exc:
                    outcomes.append(exc)
        start = end
    return outcomes


def _apply_group(ctx: Context, group: Sequence[ListingApply], holder: str) -> list[DiscoveryRunOut]:
    """Apply ``group`` in one transaction, all or nothing."""
    # A Core transaction on the engine: a pass needs none of a Session's unit-of-work machinery.
    with ctx.db.engine.begin() as conn:
        cross = CrossServer(conn)
        runs = [_apply_on(conn, cross, ctx, *item[:5], lease_key=item[5], holder=holder, tools_withheld=item[6])
                for item in group]
        cross.flush()
    return runs


def _apply_on(
    conn: Connection, cross: CrossServer, ctx: Context, server_id: int, name: str, listing: Listing,
    started: datetime, trigger: str, *, lease_key: str | None, holder: str, tools_withheld: bool,
) -> DiscoveryRunOut:
    """:func:`apply_listing` in the caller's transaction, its cross-server findings kept by ``cross``."""
    now = utcnow()
    changes = ChangeSet()
    status, error = listing.status, listing.error
    params: dict[str, Any] = {"p_id": server_id, "p_last_discovery_at": now,
                              "p_last_discovery_status": status, "p_last_error": error}
    if status == "ok":
        params |= {"p_protocol_version": listing.protocol_version, "p_server_info": listing.server_info,
                   "p_capabilities": listing.capabilities, "p_instructions": listing.instructions}
    statement = _UPDATE_SERVER_OK if status == "ok" else _UPDATE_SERVER_NOT_OK
    server = conn.execute(statement, params).one_or_none()
    if server is None:
        raise NotFound(f"server {name!r} was removed during its discovery pass")
    counts = changes.counts()
    if status == "ok":
        key = (listing_key(listing.digest, ctx.settings.max_definition_bytes, server.updated_at)
               if listing.digest is not None else None)
        unchanged = _fast_path(conn, server, key, now)
        if unchanged is not None:
            counts["unchanged"] = unchanged
        elif tools_withheld:
            raise ToolsWithheld
        else:
            stored = _stored(conn, server.id)
            changes = reconcile(stored, listing.tools, complete=True,
                                max_definition_bytes=ctx.settings.max_definition_bytes,
                                load_input_schemas=partial(_input_schemas, conn))
            kept = set(changes.unchanged_ids)
            siblings = {u.claim.name for u in (*changes.added, *changes.changed)} | {
                t.name for t in stored if t.id in kept}
            cross.add_findings(server.id, server.name, changes, server.software, siblings)
            if changes.retire_ids:
                retiring = set(changes.retire_ids)
                cross.retired(server.id, server.name, [t.name for t in stored if t.id in retiring], server.software)
            mentions = write_changes(conn, server, changes, now)
            cross.written(changes, removed=server.remove_stale, mentions=mentions)
            counts = changes.counts()
            _record_listing(conn, server, key, changes)
    rejections = [r.as_dict() for r in changes.rejected]
    if status == "ok":
        # Prompts, resources and templates: reconciled on every ok pass (the tools' fast path covers tools).
        rejections += write_entries(conn, server.id, listing.entries, now, new_enabled=server.new_tools_enabled,
                                    remove_stale=server.remove_stale,
                                    max_definition_bytes=ctx.settings.max_definition_bytes)
        if listing.entry_errors:
            error = "; ".join(listing.entry_errors)
    run: dict[str, Any] = {
        "server_id": server.id, "server_name": server.name, "started_at": started, "finished_at": now,
        "status": status, "trigger": trigger, "runner": holder,
        "protocol_version": listing.protocol_version, "pages": listing.pages,
        "rejections": rejections, "error": error, **counts,
    }
    run_id = conn.execute(_INSERT_RUN, run).scalar_one()
    if lease_key is not None:
        leases.release_in(conn, lease_key, holder)
    return DiscoveryRunOut(
        id=run_id, server=run["server_name"], trigger=trigger, runner=run["runner"], started_at=started,
        finished_at=now, status=status, protocol_version=listing.protocol_version, pages=listing.pages,
        rejections=list(run["rejections"]), error=error, **counts,
    )


def _fast_path(conn: Connection, server: Any, key: str | None, now: datetime) -> int | None:
    """The no-change fast path: when this ok listing's key equals the one recorded by the last full
    reconcile, advance ``last_seen_at`` of every live tool in one statement and return how many.

    Equal keys mean the server advertises byte-for-byte what was last reconciled with nothing
    rejected, under the same settings and server row; the last pass was ok (any other clears the key).
    The stored tools must also be as that reconcile left them: the statement matches nothing unless
    the live-tool count still equals the recorded one (an operator's delete moves it; discovery is
    the only writer of the discovery-owned columns and of ``retired_at``, and held the lease since).
    None means the full reconcile must run; nothing has been written then.
    """
    expected = server.listing_tools
    if key is None or server.listing_key != key or not expected:
        return None  # (a server with no tools has nothing to skip, and rowcount 0 would be ambiguous)
    touched = conn.execute(_TOUCH_LIVE_IF_COUNT,
                           {"p_server_id": server.id, "p_count": expected, "p_last_seen_at": now}).rowcount
    return expected if touched == expected else None


def _record_listing(conn: Connection, server: Any, key: str | None, changes: ChangeSet) -> None:
    """After a full reconcile: remember the listing's key and the live tools it left, so an identical
    next listing takes the fast path. A listing with rejections is not remembered: its run must list
    them again, which only a full reconcile does. Written only when it differs from what is stored."""
    if changes.rejected:
        key = None
    live = len(changes.added) + len(changes.changed) + len(changes.unchanged_ids)
    recorded = (key, live if key is not None else None)
    if recorded != (server.listing_key, server.listing_tools):
        conn.execute(_UPDATE_SERVER_LISTING, {"p_id": server.id, "p_listing_key": recorded[0],
                                              "p_listing_tools": recorded[1]})


def run_out(run: DiscoveryRun) -> DiscoveryRunOut:
    return DiscoveryRunOut(
        id=run.id, server=run.server_name, trigger=run.trigger, runner=run.runner, started_at=run.started_at,
        finished_at=run.finished_at, status=run.status, protocol_version=run.protocol_version, pages=run.pages,
        added=run.added, changed=run.changed, unchanged=run.unchanged, retired=run.retired, rejected=run.rejected,
        rejections=list(run.rejections or []), error=run.error,
    )
