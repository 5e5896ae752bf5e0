"""Alert webhooks and their deliveries, as the REST API and the CLI show and accept them."""

from __future__ import annotations

import re
from datetime import datetime
from enum import StrEnum
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class AlertKind(StrEnum):
    """What toolvet alerts on."""

    TOOL_HELD = "tool.held"              # a contract changed and the tool is held for review
    TOOL_NEW = "tool.new"                # a new tool appeared
    FINDING_HIGH = "finding.high"        # a new or changed tool has a high finding
    CALL_PENDING = "call.pending"        # a call waits for an approver
    DISCOVERY_FAILING = "discovery.failing"  # a server's discovery failed N passes in a row


WEBHOOK_NAME: Final = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
MIN_SECRET: Final = 16


class WebhookCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Lower-case letters, digits, `-` and `_`; at most 32.")
    url: str = Field(max_length=2048, description="Where alerts are POSTed (http or https).")
    secret: str | None = Field(
        default=None, min_length=MIN_SECRET, max_length=256,
        description="The HMAC-SHA256 key its deliveries are signed with; unset: one is generated and "
        "answered once.")
    kinds: list[AlertKind] = Field(default_factory=list, description="Alert kinds to send; empty: every kind.")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not WEBHOOK_NAME.fullmatch(value):
            raise ValueError("must be lower-case letters, digits, '-' and '_' (at most 32), starting with a "
                             "letter or digit")
        return value

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not re.fullmatch(r"https?://[^\s/?#]+[^\s]*", value):
            raise ValueError("must be an http:// or https:// URL")
        return value


class WebhookOut(BaseModel):
    name: str
    url: str
    kinds: list[AlertKind]
    enabled: bool
    source: Literal["api", "settings"] = Field(description="`settings`: from `TOOLVET_WEBHOOKS` (read-only here).")
    created_at: datetime | None
    created_by: str | None


class WebhookCreated(WebhookOut):
    secret: str = Field(description="The signing secret; shown once.")


class DeliveryOut(BaseModel):
    id: int
    webhook: str
    kind: str
    alert_key: str
    status: Literal["sending", "delivered", "failed"]
    attempts: int
    last_status_code: int | None
    last_error: str | None
    created_at: datetime
    finished_at: datetime | None
    payload: dict[str, Any]
