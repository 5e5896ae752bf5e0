"""The figures ``GET /metrics`` reads from the database at scrape time: the same on every replica,
whichever process answers (``services.metrics`` keeps the per-process ones)."""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import func, select

from toolvet.db.models import DiscoveryRun, Server, Tool
from toolvet.errors import Unauthenticated
from toolvet.services import metrics
from toolvet.services.attention import pending_calls
from toolvet.services.auth import Permission, Principal
from toolvet.services.context import Context
from toolvet.services.tool_search import held_sql, review_state_sql
from toolvet.services.tools import TOOL_RECORDS, sql_has_high_finding


class DatabaseCollector(Collector):
    """Tools by server, review state and held; tools with a ``high`` finding; pending calls;
    discovery runs by status. Four small grouped queries in one read transaction."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def collect(self) -> Iterable[Metric]:
        tools = GaugeMetricFamily("toolvet_tools", "Live tools by server, review state and whether they are "
                                  "held (not offered until reviewed).", labels=("server", "review_state", "held"))
        high = GaugeMetricFamily("toolvet_tools_high_findings", "Live tools with a high finding, by server.",
                                 labels=("server",))
        pending = GaugeMetricFamily("toolvet_pending_calls", "Calls waiting for an approver (not expired).")
        runs = GaugeMetricFamily("toolvet_discovery_runs", "Discovery runs recorded, by status.", labels=("status",))
        state, held = review_state_sql(), held_sql()
        live = Tool.retired_at.is_(None)
        with self.ctx.db.transaction() as session:
            for server, review, is_held, count in session.execute(
                select(Server.name, state, held, func.count())
                .select_from(TOOL_RECORDS).join(Server, Tool.server_id == Server.id).where(live)
                .group_by(Server.name, state, held)
            ):
                tools.add_metric((server, review, "true" if is_held else "false"), count)
            for server, count in session.execute(
                select(Server.name, func.count()).select_from(Tool).join(Server, Tool.server_id == Server.id)
                .where(live, sql_has_high_finding()).group_by(Server.name)
            ):
                high.add_metric((server,), count)
            pending.add_metric((), pending_calls(session))
            for status, count in session.execute(
                select(DiscoveryRun.status, func.count()).group_by(DiscoveryRun.status)
            ):
                runs.add_metric((status,), count)
        return [tools, high, pending, runs]


def scrape(ctx: Context, principal: Principal | None) -> bytes:
    """``GET /metrics``: open to anyone with ``metrics_open``, else to operators and admins."""
    if not ctx.settings.metrics_open:
        if principal is None:
            raise Unauthenticated("GET /metrics needs an operator's or an admin's token")
        principal.require(Permission.READ_METRICS)
    if ctx.calls is not None and ctx.calls.pool is not None:
        metrics.pool_sessions(ctx.calls.pool.session_counts())  # exact for the answering process
    return metrics.render(DatabaseCollector(ctx))
