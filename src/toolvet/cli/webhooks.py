"""``toolvet webhook add|list|remove|deliveries``: alert webhooks (docs/operate.md, "Alerts")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from toolvet.cli import render
from toolvet.cli.group import command_group
from toolvet.cli.render import JsonOption, LimitOption, OffsetOption
from toolvet.cli.runtime import local
from toolvet.schemas.webhooks import DeliveryOut, WebhookCreate, WebhookOut
from toolvet.services import webhooks
from toolvet.services.servers import invalid_from

webhook_app = command_group("Alert webhooks: add, list, remove, and what was delivered.")

WEBHOOK_HEADERS = ("NAME", "URL", "KINDS", "SOURCE", "CREATED")
DELIVERY_HEADERS = ("ID", "WEBHOOK", "KIND", "STATUS", "ATTEMPTS", "LAST ANSWER", "CREATED")


def webhook_row(hook: WebhookOut) -> Sequence[Any]:
    return (hook.name, hook.url, ", ".join(k.value for k in hook.kinds) or "every kind", hook.source,
            hook.created_at)


def delivery_row(delivery: DeliveryOut) -> Sequence[Any]:
    answer = delivery.last_error or (str(delivery.last_status_code) if delivery.last_status_code else None)
    return (delivery.id, delivery.webhook, delivery.kind, delivery.status, delivery.attempts, answer,
            delivery.created_at)


@webhook_app.command("add")
def add(
    name: Annotated[str, typer.Argument(help="The webhook's name (lower-case letters, digits, - and _).")],
    url: Annotated[str, typer.Argument(help="Where alerts are POSTed (http or https).")],
    secret: Annotated[
        str | None, typer.Option("--secret", help="The signing secret (at least 16 characters); default: generated.")
    ] = None,
    kind: Annotated[
        list[str] | None,
        typer.Option("--kind", help="An alert kind to send (tool.held, tool.new, finding.high, call.pending, "
                     "discovery.failing); repeatable; default: every kind."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Add a webhook and print its signing secret once."""
    try:
        data = WebhookCreate.model_validate({"name": name, "url": url, "secret": secret, "kinds": kind or []})
    except ValidationError as exc:
        raise invalid_from(exc) from None
    with local() as (ctx, me):
        out = webhooks.create_webhook(ctx, me, data)
    if as_json:
        render.emit_json(out)
        return
    render.say(f"added webhook {out.name}")
    typer.echo("signing secret (shown once; deliveries carry X-Toolvet-Signature: sha256=HMAC of the body):")
    typer.echo(out.secret)


@webhook_app.command("list")
def list_(as_json: JsonOption = False) -> None:
    """List webhooks: those from TOOLVET_WEBHOOKS, then the managed ones (never their secrets)."""
    with local() as (ctx, me):
        items = webhooks.list_webhooks(ctx, me)
    render.show_rows(items, as_json, webhook_row, WEBHOOK_HEADERS)


@webhook_app.command("remove")
def remove(
    name: Annotated[str, typer.Argument(help="The webhook's name.")],
    as_json: JsonOption = False,
) -> None:
    """Remove a webhook; its deliveries stay on record."""
    with local() as (ctx, me):
        out = webhooks.remove_webhook(ctx, me, name)
    render.show_change(out, as_json, f"removed webhook {out.name}")


@webhook_app.command("deliveries")
def deliveries(
    name: Annotated[str | None, typer.Argument(help="Only this webhook's deliveries.")] = None,
    status: Annotated[
        str | None, typer.Option("--status", help="sending, delivered or failed.")
    ] = None,
    limit: LimitOption = 100,
    offset: OffsetOption = 0,
    as_json: JsonOption = False,
) -> None:
    """What was sent to webhooks, newest first: attempts and the last answer."""
    with local() as (ctx, me):
        page = webhooks.list_deliveries(ctx, me, webhook=name, status=status, limit=limit, offset=offset)
    render.show_page(page, as_json, "deliveries", delivery_row, DELIVERY_HEADERS)
