"""Alert webhooks: the operator's hooks (REST and CLI managed, secrets sealed) and those the settings
name, the record of every delivery, and how a delivery is signed. ``services.alerts`` sends them."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import String, cast, literal, or_, select
from sqlalchemy.exc import IntegrityError

from toolvet.db.models import Lease, Webhook, WebhookDelivery
from toolvet.db.types import utcnow
from toolvet.errors import Conflict, InvalidInput, NotFound
from toolvet.schemas.common import Page
from toolvet.schemas.webhooks import AlertKind, DeliveryOut, WebhookCreate, WebhookCreated, WebhookOut
from toolvet.services import audit, leases
from toolvet.services.auth import Permission, Principal
from toolvet.services.context import Context
from toolvet.services.search import page_of

#: The header that carries a delivery's signature: ``sha256=`` and the hex HMAC-SHA256 of the body.
SIGNATURE_HEADER: Final = "X-Toolvet-Signature"
SETTINGS_PREFIX: Final = "settings:"
_SECRET_NAME: Final = "secret"


@dataclass(frozen=True, slots=True)
class Hook:
    """A webhook as the sender needs it: its name (``settings:NAME`` for one from the settings), URL,
    opened secret and the kinds it asks for (empty: every kind)."""

    name: str
    url: str
    secret: str
    kinds: frozenset[str]

    def wants(self, kind: str) -> bool:
        return not self.kinds or kind in self.kinds


def signature(secret: str, body: bytes) -> str:
    """The ``X-Toolvet-Signature`` value of ``body``: a receiver recomputes it with its copy of the secret."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def hooks(ctx: Context) -> list[Hook]:
    """Every enabled webhook: the settings' and the database's."""
    found = [Hook(SETTINGS_PREFIX + h.name, h.url, h.secret, frozenset(h.kinds)) for h in ctx.settings.webhooks]
    with ctx.db.transaction() as session:
        for row in session.scalars(select(Webhook).where(Webhook.enabled.is_(True)).order_by(Webhook.name)):
            found.append(Hook(row.name, row.url, ctx.secrets.open(row.secret_sealed)[_SECRET_NAME],
                              frozenset(row.kinds)))
    return found


def _out(row: Webhook) -> WebhookOut:
    return WebhookOut(name=row.name, url=row.url, kinds=[AlertKind(k) for k in row.kinds], enabled=row.enabled,
                      source="api", created_at=row.created_at, created_by=row.created_by)


def create_webhook(ctx: Context, principal: Principal, data: WebhookCreate) -> WebhookCreated:
    """Add a webhook; its secret (given, or generated) is answered this once and kept sealed."""
    principal.require(Permission.MANAGE_WEBHOOKS)
    secret = data.secret or secrets.token_urlsafe(32)
    row = Webhook(name=data.name, url=data.url, secret_sealed=ctx.secrets.seal({_SECRET_NAME: secret}),
                  kinds=[k.value for k in data.kinds], enabled=True, created_at=utcnow(), created_by=principal.actor)
    try:
        with ctx.db.transaction() as session:
            session.add(row)
            session.flush()
            out = _out(row)
            audit.record(session, principal, "webhook.create", "webhook", f"webhook:{data.name}", after=out)
    except IntegrityError:
        raise Conflict(f"webhook {data.name!r} exists") from None
    return WebhookCreated(**out.model_dump(), secret=secret)


def list_webhooks(ctx: Context, principal: Principal) -> list[WebhookOut]:
    """The settings' webhooks, then the database's by name (secrets never shown)."""
    principal.require(Permission.MANAGE_WEBHOOKS)
    out = [WebhookOut(name=SETTINGS_PREFIX + h.name, url=h.url, kinds=[AlertKind(k) for k in h.kinds],
                      enabled=True, source="settings", created_at=None, created_by=None)
           for h in ctx.settings.webhooks]
    with ctx.db.transaction() as session:
        out += [_out(row) for row in session.scalars(select(Webhook).order_by(Webhook.name))]
    return out


def remove_webhook(ctx: Context, principal: Principal, name: str) -> WebhookOut:
    """Remove a webhook (its deliveries stay on record)."""
    principal.require(Permission.MANAGE_WEBHOOKS)
    if name.startswith(SETTINGS_PREFIX):
        raise InvalidInput("a webhook from the settings is removed from TOOLVET_WEBHOOKS", "name")
    with ctx.db.transaction() as session:
        row = session.scalar(select(Webhook).where(Webhook.name == name))
        if row is None:
            raise NotFound(f"webhook {name!r} not found")
        out = _out(row)
        session.delete(row)
        audit.record(session, principal, "webhook.remove", "webhook", f"webhook:{name}", before=out)
    return out


def list_deliveries(ctx: Context, principal: Principal, *, webhook: str | None = None, status: str | None = None,
                    limit: int = 100, offset: int = 0) -> Page[DeliveryOut]:
    """Deliveries newest first, of one webhook or all."""
    principal.require(Permission.MANAGE_WEBHOOKS)
    query = select(WebhookDelivery)
    if webhook:
        query = query.where(WebhookDelivery.webhook == webhook)
    if status:
        query = query.where(WebhookDelivery.status == status)
    with ctx.db.transaction() as session:
        return page_of(session, query, [WebhookDelivery.id.desc()], limit, offset,
                       lambda row: DeliveryOut.model_validate(row, from_attributes=True))


# --- the sender's records (services.alerts) -----------------------------------------------------------

_LEASE_PREFIX: Final = "webhook-delivery:"


def delivery_lease(delivery_id: int) -> str:
    """The lease its sender holds on a delivery while it is being sent (renewed while the sender lives)."""
    return f"{_LEASE_PREFIX}{delivery_id}"


def claim_delivery(ctx: Context, hook: str, key: str, kind: str, payload: dict[str, Any]) -> int | None:
    """Record that ``hook`` is sent alert ``key``, and take the delivery's lease in the same transaction;
    None when some process has claimed it already."""
    try:
        with ctx.db.transaction() as session:
            row = WebhookDelivery(webhook=hook, alert_key=key, kind=kind, payload=payload, status="sending",
                                  attempts=0, created_at=utcnow())
            session.add(row)
            session.flush()
            leases.acquire_many(session.connection(), [delivery_lease(row.id)], ctx.settings.lease_seconds)
            return row.id
    except IntegrityError:
        return None


def record_attempt(ctx: Context, delivery_id: int, *, status: str, code: int | None, error: str | None) -> None:
    """One attempt's outcome: ``sending`` (it will be tried again), ``delivered`` or ``failed`` (the
    delivery's lease is then given back, in the same transaction)."""
    with ctx.db.transaction() as session:
        row = session.get(WebhookDelivery, delivery_id)
        if row is None:
            return
        row.attempts += 1
        row.status, row.last_status_code, row.last_error = status, code, error
        if status != "sending":
            row.finished_at = utcnow()
            leases.release_in(session.connection(), delivery_lease(delivery_id))


@dataclass(frozen=True)
class Orphan:
    """A delivery left ``sending`` by a sender that stopped (its lease lapsed), now this process's to finish."""

    id: int
    webhook: str
    kind: str
    payload: dict[str, Any]
    attempts: int


def take_orphans(ctx: Context, limit: int = 100) -> list[Orphan]:
    """The deliveries still ``sending`` whose sender is gone (their lease lapsed, or none was taken),
    each with its lease now taken by this process: a stopped process's retries are finished by another,
    or by itself when it starts again, and never by two at once. A delivery whose lease is live (its
    sender's, this process's own included) is not looked at, however many there are."""
    lease = (literal(_LEASE_PREFIX) + cast(WebhookDelivery.id, String)).label("lease")
    orphaned = (select(WebhookDelivery.id, lease)
                .outerjoin(Lease, Lease.key == lease)
                .where(WebhookDelivery.status == "sending", or_(Lease.key.is_(None), Lease.expires_at < utcnow()))
                .order_by(WebhookDelivery.id).limit(limit))
    with ctx.db.transaction() as session:
        candidates = {row.lease: row.id for row in session.execute(orphaned)}
        if not candidates:
            return []
        taken = leases.acquire_many(session.connection(), list(candidates), ctx.settings.lease_seconds)
        rows = session.scalars(select(WebhookDelivery).where(
            WebhookDelivery.id.in_([candidates[key] for key in taken]),
            WebhookDelivery.status == "sending").order_by(WebhookDelivery.id)).all()
        return [Orphan(r.id, r.webhook, r.kind, dict(r.payload), r.attempts) for r in rows]
