"""Readiness: whether this process can serve requests now, which needs its database."""

from __future__ import annotations

from typing import Final

import anyio
import anyio.to_thread
from sqlalchemy import text

from toolvet.errors import first_line
from toolvet.services.context import Context

#: Seconds the readiness check waits for the database before it says not ready.
READY_TIMEOUT: Final = 5.0


def _ping(ctx: Context) -> None:
    with ctx.db.engine.connect() as conn:
        conn.execute(text("SELECT 1"))


async def database_problem(ctx: Context) -> str | None:
    """None when the database answers a trivial query within READY_TIMEOUT, else why not (one line)."""
    try:
        with anyio.fail_after(READY_TIMEOUT):
            # Abandoned on timeout: a hung connect must not hold the probe (the thread ends on its own).
            await anyio.to_thread.run_sync(_ping, ctx, abandon_on_cancel=True)
    except TimeoutError:
        return f"the database did not answer within {READY_TIMEOUT:g} s"
    except Exception as exc:  # any driver error: the probe reports it, never raises
        return f"the database is not reachable: {first_line(exc)}"
    return None
