"""Writing a pass's prompts, resources and resource templates (``domain.entries``): each complete list
reconciled with the server's stored entries of its kind, in the pass's transaction.

Like the tools' write side it names the claim tables only (``entries``, ``entry_definitions``); the
one thing it does to settings (a new entry's first ``enabled``, a retired one's cleared) is
``services.discovery_settings.settle_entry_settings``. Entries are few per server, so these are plain
Core statements, not the tools' precompiled bulk path; a pass's tool fast path does not skip them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Connection, delete, insert, select, update

from toolvet.db.models import Entry, EntryDefinition
from toolvet.domain.entries import KINDS, EntryChanges, EntryUpsert, Kind, StoredEntry, reconcile_entries
from toolvet.services.discovery_settings import settle_entry_settings

__all__ = ["write_entries"]


def _claim_values(upsert: EntryUpsert, now: datetime) -> dict[str, Any]:
    c = upsert.claim
    return {"name": c.name, "title": c.title, "description": c.description, "definition": c.definition,
            "fingerprint": c.fingerprint, "digest": c.digest, "last_seen_at": now, "retired_at": None,
            "findings": upsert.findings}


def _stored(conn: Connection, server_id: int, kind: Kind) -> list[StoredEntry]:
    rows = conn.execute(select(Entry.id, Entry.key, Entry.digest, Entry.retired_at)
                        .where(Entry.server_id == server_id, Entry.kind == kind)).all()
    return [StoredEntry(r.id, r.key, r.digest, r.retired_at is not None) for r in rows]


def _apply(conn: Connection, server_id: int, changes: EntryChanges, now: datetime, *, new_enabled: bool,
           remove_stale: bool) -> None:
    new_ids: list[int] = []
    history: list[tuple[int, EntryUpsert]] = []
    for upsert in changes.added:
        entry_id = conn.execute(insert(Entry).values(server_id=server_id, kind=changes.kind, key=upsert.claim.key,
                                                     first_seen_at=now, **_claim_values(upsert, now))
                                .returning(Entry.id)).scalar_one()
        new_ids.append(entry_id)
        history.append((entry_id, upsert))
    if changes.changed:
        ids = [cast(int, u.entry_id) for u in changes.changed]
        known = {(r.entry_id, r.digest) for r in conn.execute(
            select(EntryDefinition.entry_id, EntryDefinition.digest).where(EntryDefinition.entry_id.in_(ids)))}
        # The definitions the claims leave are noted as left before the claims change.
        current = select(Entry.digest).where(Entry.id == EntryDefinition.entry_id).scalar_subquery()
        conn.execute(update(EntryDefinition).where(EntryDefinition.entry_id.in_(ids), EntryDefinition.digest == current)
                     .values(left_at=now))
        for upsert in changes.changed:
            entry_id = cast(int, upsert.entry_id)
            conn.execute(update(Entry).where(Entry.id == entry_id).values(**_claim_values(upsert, now)))
            if (entry_id, upsert.claim.digest) not in known:
                history.append((entry_id, upsert))
    if history:
        conn.execute(insert(EntryDefinition), [
            {"entry_id": entry_id, "digest": u.claim.digest, "fingerprint": u.claim.fingerprint,
             "definition": u.claim.definition, "first_seen_at": now} for entry_id, u in history])
    if changes.unchanged_ids:
        conn.execute(update(Entry).where(Entry.id.in_(changes.unchanged_ids)).values(last_seen_at=now))
    retired: list[int] = []
    if changes.retire_ids:
        if remove_stale:
            conn.execute(delete(Entry).where(Entry.id.in_(changes.retire_ids)))
        else:
            conn.execute(update(Entry).where(Entry.id.in_(changes.retire_ids)).values(retired_at=now))
            retired = changes.retire_ids
    if new_ids or retired:
        settle_entry_settings(conn, new_ids, new_enabled, retired)


def write_entries(conn: Connection, server_id: int, lists: Mapping[str, Sequence[Any]], now: datetime, *,
                  new_enabled: bool, remove_stale: bool, max_definition_bytes: int) -> list[dict[str, Any]]:
    """Reconcile and write every complete entry list of an ok pass; the rejections, for the run's record
    (each with its ``kind``). A kind the pass did not read whole is left as it is."""
    rejections: list[dict[str, Any]] = []
    for kind in KINDS:
        listing = lists.get(kind)
        if listing is None:
            continue
        changes = reconcile_entries(kind, _stored(conn, server_id, kind), listing,
                                    max_definition_bytes=max_definition_bytes)
        _apply(conn, server_id, changes, now, new_enabled=new_enabled, remove_stale=remove_stale)
        rejections += [{**r.as_dict(), "kind": kind} for r in changes.rejected]
    return rejections
