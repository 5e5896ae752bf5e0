"""Migration 0011 with calls in the table: they keep every field, get no intent and count as
undelivered; one pending call per intent holds from then on; and back down, the rows are intact."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import sqlalchemy as sa

from tests.test_migrations import _downgrade
from toolvet.db.engine import make_engine
from toolvet.db.migrate import current_revision, head_revision, upgrade
from toolvet.db.types import UTCDateTime

_AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
_CALLS = sa.table("calls", *(sa.column(c) for c in ("id", "user", "scope", "server_type", "tool_name",
                                                    "fingerprint", "status", "auto_allow", "allow_always",
                                                    "approval")),
                  sa.column("arguments", sa.JSON), sa.column("reasons", sa.JSON),
                  sa.column("created_at", UTCDateTime()))


def _call(call_id: str, status: str) -> dict[str, object]:
    return {"id": call_id, "user": "alice", "scope": "default", "server_type": "up", "tool_name": "t",
            "fingerprint": "sha256:f", "status": status, "auto_allow": False, "allow_always": False,
            "approval": "user", "arguments": {"a": 1}, "reasons": [], "created_at": _AT}


def test_0011_keeps_calls_and_adds_intents_sessions_and_rate_windows(database_url):
    engine = make_engine(database_url)
    try:
        upgrade(engine, "0008")
        with engine.begin() as conn:
            conn.execute(sa.insert(_CALLS), [_call("c1", "pending"), _call("c2", "done")])

        upgrade(engine)

        assert current_revision(engine) == head_revision()
        tables = set(sa.inspect(engine).get_table_names())
        assert {"mcp_sessions", "rate_windows"} <= tables
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT id, status, intent, waited_at, delivered FROM calls ORDER BY id")).all()
        assert [tuple(r) for r in rows] == [("c1", "pending", None, None, False), ("c2", "done", None, None, False)]
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE calls SET intent = 'i' WHERE id IN ('c1', 'c2')"))  # one pending: allowed
        with pytest.raises(sa.exc.IntegrityError), engine.begin() as conn:
            conn.execute(sa.insert(sa.table("calls", *(sa.column(c.name, c.type) for c in _CALLS.c),
                                            sa.column("intent"))), [{**_call("c3", "pending"), "intent": "i"}])

        _downgrade(engine, "0008")

        assert current_revision(engine) == "0008"
        assert not {"mcp_sessions", "rate_windows"} & set(sa.inspect(engine).get_table_names())
        with engine.connect() as conn:
            back = conn.execute(sa.select(_CALLS.c.id, _CALLS.c.status).order_by(_CALLS.c.id)).all()
        assert [tuple(r) for r in back] == [("c1", "pending"), ("c2", "done")]
    finally:
        engine.dispose()
