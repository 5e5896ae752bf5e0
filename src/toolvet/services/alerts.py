"""Alerts to webhooks, sent in the background of ``toolvet serve``.

Where alerts come from: pending calls from the call service's event bus, the instant they are
stored; everything discovery finds (new tools, changed contracts held for review, high findings, a
server failing N passes in a row) from the discovery runs recorded in the database, looked at every
``alert_poll_seconds``, whichever process ran them.

Neither the call path nor discovery waits for any of it: the bus drops what a slow subscriber has
not read, the queue of alerts is bounded (an alert that does not fit is logged and dropped), and each
delivery runs in a task of its own, at most ``SENDERS`` at once. A delivery is recorded before it is
sent (``webhook_deliveries``; one row per hook and alert, so replicas that notice the same run send
it once) and after every attempt (then published on :attr:`Alerts.events`, this sender's own bus,
as a ``webhook-delivery`` event); a failed attempt (no answer, or not 2xx) is retried after
``webhook_backoff`` seconds, doubling, up to ``webhook_attempts`` attempts. While it is retried the
sender holds the delivery's lease (renewed while it lives); a delivery left ``sending`` by a sender
that stopped is taken over by the next sender that looks (``webhooks.take_orphans``) and finished.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from functools import partial
from typing import Any, Final

import anyio
import anyio.abc
import anyio.to_thread
import httpx2

from toolvet.jsontext import compact
from toolvet.services import leases, metrics, webhooks
from toolvet.services.alert_sources import Alert, discovery_alerts, last_run_id, pending_alert
from toolvet.services.context import Context
from toolvet.services.discovery import upstream_guard
from toolvet.services.events import EventBus
from toolvet.upstream.http import http_client

log = logging.getLogger("toolvet.alerts")

QUEUE: Final = 1000
SENDERS: Final = 8
MAX_BACKOFF: Final = 600.0
MAX_ERROR: Final = 500
#: Most bytes of a failed delivery's answer kept with its record.
MAX_ANSWER: Final = 200


def payload(alert: Alert) -> dict[str, Any]:
    """What a webhook receives: Slack's ``text`` first, then toolvet's own fields."""
    return {"text": alert.text, "kind": alert.kind.value, "alert": alert.key,
            "at": datetime.now(UTC).isoformat(timespec="seconds"), "data": alert.data}


class Alerts:
    """The alert sender of one process: ``async with Alerts(ctx, bus):`` for the app's lifetime."""

    def __init__(self, ctx: Context, bus: EventBus | None) -> None:
        self.ctx = ctx
        self.bus = bus
        #: ``webhook-delivery`` events, each after an attempt's record is committed.
        self.events = EventBus()
        self._send, self._receive = anyio.create_memory_object_stream[Alert](QUEUE)
        self._limiter = anyio.CapacityLimiter(SENDERS)
        self._tg: anyio.abc.TaskGroup | None = None
        self._http: httpx2.AsyncClient | None = None

    async def __aenter__(self) -> Alerts:
        s = self.ctx.settings
        self._http = http_client(timeout=httpx2.Timeout(s.webhook_timeout), guard=upstream_guard(self.ctx),
                                 max_connections=SENDERS, max_keepalive=SENDERS)
        cursor = await anyio.to_thread.run_sync(last_run_id, self.ctx)
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._deliver_loop)
        self._tg.start_soon(self._watch_runs, cursor)
        # The deliveries this process sends hold a lease while they are retried; one whose sender stopped
        # (its lease lapsed) is finished by whichever process looks next, this one included when it starts.
        self._tg.start_soon(leases.keep_renewed, self.ctx.db, s.lease_seconds)
        self._tg.start_soon(self._watch_orphans)
        if self.bus is not None:
            self._tg.start_soon(self._watch_calls, self.bus)
        self.ctx.alerts = self
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.ctx.alerts = None
        try:
            if self._tg is not None:
                self._tg.cancel_scope.cancel()
                await self._tg.__aexit__(None, None, None)
        finally:
            self._send.close()
            self._receive.close()
            if self._http is not None:
                await self._http.aclose()

    def emit(self, alert: Alert) -> None:
        """Queue ``alert`` without waiting; a full queue drops it (logged)."""
        try:
            self._send.send_nowait(alert)
        except anyio.WouldBlock:
            log.warning("alert queue full: %s dropped", alert.key)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            log.warning("alert sender stopping: %s dropped", alert.key)

    async def _watch_calls(self, bus: EventBus) -> None:
        async with bus.subscribe() as events:
            async for event in events:
                if event.get("type") == "tool-call-pending":
                    self.emit(pending_alert(event))

    async def _watch_runs(self, cursor: int) -> None:
        s = self.ctx.settings
        while True:
            await anyio.sleep(s.alert_poll_seconds)
            try:
                found, cursor = await anyio.to_thread.run_sync(discovery_alerts, self.ctx, cursor,
                                                               s.alert_discovery_failures)
            except Exception as exc:  # the database is away: look again next time
                log.warning("discovery runs not read for alerts: %s", str(exc).splitlines()[0])
                continue
            for alert in found:
                self.emit(alert)

    async def _deliver_loop(self) -> None:
        assert self._tg is not None
        async for alert in self._receive:  # closed by __aexit__, after every task has stopped
            try:
                hooks = await anyio.to_thread.run_sync(webhooks.hooks, self.ctx)
            except Exception as exc:
                log.warning("webhooks not read; alert %s dropped: %s", alert.key, str(exc).splitlines()[0])
                continue
            body = payload(alert)
            for hook in hooks:
                if hook.wants(alert.kind.value):
                    self._tg.start_soon(self._deliver, hook, alert, body)

    async def _deliver(self, hook: webhooks.Hook, alert: Alert, body: dict[str, Any]) -> None:
        delivery = await anyio.to_thread.run_sync(webhooks.claim_delivery, self.ctx, hook.name, alert.key,
                                                  alert.kind.value, body)
        if delivery is None:
            return  # another process sends this one
        await self._retry(hook, delivery, alert.key, alert.kind.value, body, attempts=0)

    async def _watch_orphans(self) -> None:
        s = self.ctx.settings
        while True:
            try:
                orphans = await anyio.to_thread.run_sync(webhooks.take_orphans, self.ctx)
                hooks = {h.name: h for h in await anyio.to_thread.run_sync(webhooks.hooks, self.ctx)} if orphans else {}
            except Exception as exc:  # the database is away: look again next time
                log.warning("unfinished webhook deliveries not read: %s", str(exc).splitlines()[0])
                orphans, hooks = [], {}
            assert self._tg is not None
            for orphan in orphans:
                hook = hooks.get(orphan.webhook)
                if hook is None:
                    await anyio.to_thread.run_sync(partial(
                        webhooks.record_attempt, self.ctx, orphan.id, status="failed", code=None,
                        error="the webhook was removed before this delivery was finished"))
                    continue
                log.info("webhook %s: finishing delivery %d that a stopped sender left", hook.name, orphan.id)
                self._tg.start_soon(partial(self._retry, hook, orphan.id, str(orphan.payload.get("alert", "")),
                                            orphan.kind, orphan.payload, attempts=orphan.attempts))
            await anyio.sleep(s.alert_poll_seconds)

    async def _retry(self, hook: webhooks.Hook, delivery: int, key: str, kind: str, body: dict[str, Any], *,
                    attempts: int) -> None:
        """Try ``delivery`` until it is delivered or its attempts are spent, ``attempts`` made already."""
        content = compact(body).encode()
        headers = {"Content-Type": "application/json",
                   webhooks.SIGNATURE_HEADER: webhooks.signature(hook.secret, content),
                   "X-Toolvet-Alert": kind, "X-Toolvet-Delivery": str(delivery)}
        s = self.ctx.settings
        for attempt in range(attempts + 1, max(s.webhook_attempts, attempts + 1) + 1):
            code, error = await self._post(hook.url, content, headers)
            delivered = code is not None and 200 <= code < 300
            last = attempt >= s.webhook_attempts
            status = "delivered" if delivered else "failed" if last else "sending"
            metrics.WEBHOOK_DELIVERIES.labels("delivered" if delivered else "failed" if last else "retried").inc()
            await anyio.to_thread.run_sync(partial(webhooks.record_attempt, self.ctx, delivery, status=status,
                                                   code=code, error=error))
            self.events.publish({"type": "webhook-delivery", "webhook": hook.name, "delivery": delivery,
                                 "status": status, "attempts": attempt})
            if status != "sending":
                if not delivered:
                    log.warning("webhook %s: alert %s failed after %d attempts: %s", hook.name, key, attempt, error)
                return
            await anyio.sleep(min(s.webhook_backoff * 2 ** (attempt - 1), MAX_BACKOFF))

    async def _post(self, url: str, content: bytes, headers: dict[str, str]) -> tuple[int | None, str | None]:
        assert self._http is not None
        async with self._limiter:
            try:
                async with self._http.stream("POST", url, content=content, headers=headers) as response:
                    if 200 <= response.status_code < 300:
                        return response.status_code, None
                    head = b""
                    async for chunk in response.aiter_bytes():
                        head += chunk
                        if len(head) >= MAX_ANSWER:
                            break
                    text = head[:MAX_ANSWER].decode("utf-8", "replace")
                    return response.status_code, f"HTTP {response.status_code}: {text}"[:MAX_ERROR]
            except Exception as exc:  # any failure to deliver (network, guard, timeout) is a failed attempt
                return None, (str(exc) or type(exc).__name__)[:MAX_ERROR]
