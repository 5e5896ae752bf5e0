"""``/webhooks``: alert webhooks (docs/operate.md, "Alerts") and the record of their deliveries."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query

from toolvet.api.deps import ContextDep, Limit, Offset, PrincipalDep
from toolvet.schemas.common import Page
from toolvet.schemas.webhooks import DeliveryOut, WebhookCreate, WebhookCreated, WebhookOut
from toolvet.services import webhooks

router = APIRouter(tags=["webhooks"])


@router.get("/webhooks")
def list_webhooks(ctx: ContextDep, principal: PrincipalDep) -> list[WebhookOut]:
    """Every webhook: those from `TOOLVET_WEBHOOKS` (named `settings:NAME`), then the managed ones."""
    return webhooks.list_webhooks(ctx, principal)


@router.post("/webhooks", status_code=201)
def create_webhook(ctx: ContextDep, principal: PrincipalDep, data: WebhookCreate) -> WebhookCreated:
    """Add a webhook. Its signing secret (given, or generated) is answered this once."""
    return webhooks.create_webhook(ctx, principal, data)


@router.delete("/webhooks/{name}")
def remove_webhook(ctx: ContextDep, principal: PrincipalDep, name: str) -> WebhookOut:
    """Remove a webhook; its deliveries stay on record."""
    return webhooks.remove_webhook(ctx, principal, name)


@router.get("/webhooks/deliveries")
def list_deliveries(
    ctx: ContextDep,
    principal: PrincipalDep,
    webhook: Annotated[str | None, Query(description="One webhook's name.")] = None,
    status: Annotated[Literal["sending", "delivered", "failed"] | None, Query()] = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> Page[DeliveryOut]:
    """Deliveries newest first: what was sent, how many attempts, the last answer."""
    return webhooks.list_deliveries(ctx, principal, webhook=webhook, status=status, limit=limit, offset=offset)
