"""A server's prompts, resources and resource templates (its entries) as the REST API and the CLI
show and accept them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from toolvet.domain.policy import ReviewState
from toolvet.schemas.tools import ChangeOut

EntryKind = Literal["prompt", "resource", "template"]


class EntryOut(BaseModel):
    """One prompt, resource or resource template. ``key`` names it on its server (a prompt's name, a
    resource's URI, a template's URI template); ``definition`` is the object as the server listed it.
    ``held``: enabled, but not offered until reviewed (its contract changed after review, or a
    ``high`` finding on a server that holds flagged ones)."""

    server: str
    kind: EntryKind
    key: str
    name: str | None
    title: str | None
    description: str | None
    definition: dict[str, Any]
    fingerprint: str
    first_seen_at: datetime
    last_seen_at: datetime
    retired_at: datetime | None
    findings: list[dict[str, Any]]
    enabled: bool
    reviewed_fingerprint: str | None
    reviewed_at: datetime | None
    reviewed_by: str | None
    review_state: ReviewState
    is_available: bool
    offered: bool
    held: bool


class EntryPatch(BaseModel):
    """What an operator sets on an entry."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool


class EntryDiffOut(BaseModel):
    """What changed between an entry's reviewed definition (else its previous one) and its current one;
    the same shape as a tool's diff, ``key`` in place of ``tool``."""

    server: str
    kind: EntryKind
    key: str
    review_state: ReviewState
    compared_with: Literal["reviewed", "previous"] | None
    before_fingerprint: str | None
    after_fingerprint: str
    before: dict[str, Any] | None
    after: dict[str, Any]
    changes: list[ChangeOut]
    summary: list[str]
    note: str | None
