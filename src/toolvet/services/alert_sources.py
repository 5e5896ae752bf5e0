"""What toolvet alerts on, found in the database: the discovery runs recorded since a cursor (by any
process: the scheduler, the CLI, another replica) and what they changed. Pending calls come from the
call service's event bus instead (``services.alerts``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session

from toolvet.db.models import DiscoveryRun, Server, Tool, ToolDefinition, ToolReview
from toolvet.schemas.webhooks import AlertKind
from toolvet.services.context import Context
from toolvet.services.tools import sql_has_high_finding

#: Most tool names one alert lists (the count says how many there were).
MAX_NAMES: Final = 20
#: Most runs read in one look.
MAX_RUNS: Final = 500
FAILING: Final = ("failed", "incomplete")


@dataclass(frozen=True)
class Alert:
    """One thing to tell people about: its kind, a key that is the same in every process that notices
    it (so it is delivered once), Slack-compatible ``text`` and the details."""

    kind: AlertKind
    key: str
    text: str
    data: dict[str, Any] = field(default_factory=dict)


def last_run_id(ctx: Context) -> int:
    with ctx.db.transaction() as session:
        return session.scalar(select(func.max(DiscoveryRun.id))) or 0


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_NAMES])
    return shown + (f" and {len(names) - MAX_NAMES} more" if len(names) > MAX_NAMES else "")


def _tool_alerts(session: Session, run: DiscoveryRun) -> list[Alert]:
    """New tools, changed contracts held for review, and high findings on either, of one run."""
    since = run.started_at
    new = session.execute(
        select(Tool.name, sql_has_high_finding()).where(Tool.server_id == run.server_id, Tool.first_seen_at >= since)
        .order_by(Tool.name)).all()
    # A changed contract: its current definition first seen in this run, on a tool reviewed before.
    changed = session.execute(
        select(Tool.name, Server.hold_changed_tools, sql_has_high_finding())
        .join(Server, Tool.server_id == Server.id)
        .join(ToolReview, ToolReview.tool_id == Tool.id)
        .join(ToolDefinition, and_(ToolDefinition.tool_id == Tool.id, ToolDefinition.digest == Tool.definition_digest))
        .where(Tool.server_id == run.server_id, Tool.first_seen_at < since, ToolDefinition.first_seen_at >= since,
               ToolReview.fingerprint != Tool.definition_fingerprint)
        .order_by(Tool.name)).all()
    server, base = run.server_name, {"server": run.server_name, "run": run.id}
    alerts: list[Alert] = []
    if names := [name for name, _ in new]:
        alerts.append(Alert(AlertKind.TOOL_NEW, f"tool.new:run:{run.id}",
                            f"toolvet: {len(names)} new tool(s) on {server}: {_names(names)}",
                            {**base, "tools": names[:MAX_NAMES], "count": len(names)}))
    if held := [name for name, hold, _ in changed if hold]:
        alerts.append(Alert(AlertKind.TOOL_HELD, f"tool.held:run:{run.id}",
                            f"toolvet: {len(held)} tool(s) on {server} changed their contract and are held "
                            f"for review: {_names(held)}", {**base, "tools": held[:MAX_NAMES], "count": len(held)}))
    if flagged := [name for name, high in new if high] + [name for name, _, high in changed if high]:
        alerts.append(Alert(AlertKind.FINDING_HIGH, f"finding.high:run:{run.id}",
                            f"toolvet: {len(flagged)} new or changed tool(s) on {server} have a high finding: "
                            f"{_names(flagged)}", {**base, "tools": flagged[:MAX_NAMES], "count": len(flagged)}))
    return alerts


def _failing_alert(session: Session, run: DiscoveryRun, failures: int) -> Alert | None:
    """An alert when ``run`` is exactly the ``failures``-th failing pass in a row of its server."""
    recent = session.scalars(
        select(DiscoveryRun.status).where(DiscoveryRun.server_name == run.server_name, DiscoveryRun.id <= run.id,
                                          DiscoveryRun.status != "skipped")
        .order_by(DiscoveryRun.id.desc()).limit(failures + 1)).all()
    streak = recent[:failures]
    if len(streak) < failures or any(s not in FAILING for s in streak):
        return None
    if len(recent) > failures and recent[failures] in FAILING:
        return None  # alerted already, when the streak reached its length
    return Alert(AlertKind.DISCOVERY_FAILING, f"discovery.failing:run:{run.id}",
                 f"toolvet: discovery of {run.server_name} failed {failures} times in a row: {run.error or run.status}",
                 {"server": run.server_name, "run": run.id, "failures": failures, "error": run.error})


def discovery_alerts(ctx: Context, after: int, failures: int) -> tuple[list[Alert], int]:
    """The alerts of the runs recorded after run id ``after``, and the cursor to look after next."""
    alerts: list[Alert] = []
    with ctx.db.transaction() as session:
        runs = session.scalars(select(DiscoveryRun).where(DiscoveryRun.id > after).order_by(DiscoveryRun.id)
                               .limit(MAX_RUNS)).all()
        for run in runs:
            after = run.id
            if run.status in ("ok", "incomplete") and run.server_id is not None and (run.added or run.changed):
                alerts += _tool_alerts(session, run)
            if run.status in FAILING and (alert := _failing_alert(session, run, failures)) is not None:
                alerts.append(alert)
    return alerts, after


def pending_alert(event: dict[str, Any]) -> Alert:
    """The alert of a ``tool-call-pending`` event (argument names only: values may be private)."""
    label = f"{event.get('serverType')}/{event.get('toolName')}"
    arguments = event.get("arguments")
    return Alert(AlertKind.CALL_PENDING, f"call.pending:{event.get('callId')}",
                 f"toolvet: a call of {label} for {event.get('user')} waits for approval",
                 {"call": event.get("callId"), "server": event.get("serverType"), "tool": event.get("toolName"),
                  "user": event.get("user"), "scope": event.get("scope"),
                  "argument_names": sorted(arguments) if isinstance(arguments, dict) else []})
