"""db.bulk.BulkInsert stores exactly what Connection.execute(insert(table), rows) stores."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import String, cast, insert, select

from toolvet.db.bulk import BulkInsert
from toolvet.db.models import Server, Tool
from toolvet.db.types import Preserialized


def test_a_bulk_insert_stores_what_execute_stores(ctx):
    now = datetime(2026, 11, 30, 1, 2, 3, 456789, tzinfo=UTC)
    with ctx.db.engine.begin() as conn:
        ids = [conn.execute(insert(Server).values(name=n, transport="streamable-http", url="http://x")
                            .returning(Server.id)).scalar_one() for n in ("by-execute", "by-bulk")]
    rows = [
        {"name": "a", "title": "Wéather \u2028", "description": None, "definition": Preserialized('{"name":"a"}'),
         "advertised_read_only": True, "definition_fingerprint": "sha256:f", "definition_digest": "sha256:d",
         "findings": []},
        {"name": "b", "title": None, "description": "x",
         "definition": {"name": "b", "k": 10**30, "inputSchema": {"type": "object", "b": [1, 2.5, None]},
                        "outputSchema": None, "annotations": {"z": None}, "icons": [],
                        "_meta": {"ui": {"visibility": ["app"]}}},
         "advertised_read_only": None, "definition_fingerprint": "sha256:g", "definition_digest": "sha256:e",
         "findings": [{"kind": "k"}]},
    ]
    shared = {"first_seen_at": now, "last_seen_at": now, "retired_at": None}
    bulk = BulkInsert(Tool.__table__, ("server_id", *shared, *rows[0]))
    with ctx.db.engine.begin() as conn:
        conn.execute(insert(Tool), [{**row, **shared, "server_id": ids[0]} for row in rows])
        bulk.execute(conn, {**shared, "server_id": ids[1]}, rows)
    columns = [c for c in Tool.__table__.c if c.name not in ("id", "server_id")]
    shown = [cast(c, String) if c.name in ("definition", "findings", "first_seen_at") else c for c in columns]
    with ctx.db.engine.connect() as conn:
        stored = {sid: conn.execute(select(*shown).where(Tool.server_id == sid).order_by(Tool.name)).all()
                  for sid in ids}
        objects = conn.execute(select(Tool.definition, Tool.first_seen_at).where(Tool.server_id == ids[1])
                               .order_by(Tool.name)).all()
    assert stored[ids[1]] == stored[ids[0]]
    assert len(stored[ids[1]]) == 2
    assert [tuple(r) for r in objects] == [({"name": "a"}, now), (rows[1]["definition"], now)]
