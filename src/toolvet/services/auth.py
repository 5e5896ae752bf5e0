"""Principals, roles, what each role may do (docs/api.md#authentication-and-roles), and bearer tokens stored hashed."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass, field
from enum import StrEnum

from toolvet.errors import Forbidden


class Role(StrEnum):
    ADMIN = "admin"
    OPERATOR = "operator"
    READER = "reader"
    CONSUMER = "consumer"


class Permission(StrEnum):
    READ = "read"                    # see servers, tools, runs, audit
    MANAGE_HTTP_SERVERS = "manage-http-servers"
    MANAGE_STDIO_SERVERS = "manage-stdio-servers"   # commands run on the host: admins only
    MANAGE_TOOLS = "manage-tools"    # enabled/writable flags, hand registration
    MANAGE_TOOL_SETS = "manage-tool-sets"   # named allow-lists served at /mcp/sets/{name}
    REVIEW = "review"
    DISCOVER = "discover"
    APPROVE_CALLS = "approve-calls"
    MANAGE_TOKENS = "manage-tokens"
    CONSUME = "consume"              # catalog, decide, calls, own preferences
    READ_METRICS = "read-metrics"    # GET /metrics (unless metrics_open)
    MANAGE_WEBHOOKS = "manage-webhooks"   # alert webhooks and their deliveries


_GRANTS: dict[Role, frozenset[Permission]] = {
    Role.ADMIN: frozenset(Permission),
    Role.OPERATOR: frozenset(Permission) - {Permission.MANAGE_STDIO_SERVERS, Permission.MANAGE_TOKENS},
    Role.READER: frozenset({Permission.READ}),
    Role.CONSUMER: frozenset({Permission.CONSUME}),
}


@dataclass(frozen=True)
class Principal:
    """Who is acting: the audit log's ``actor``, a role, and for consumers the user and scope."""

    actor: str
    role: Role
    user: str | None = None
    scope: str | None = None
    oauth_scopes: frozenset[str] = field(default_factory=frozenset)

    def can(self, permission: Permission) -> bool:
        return permission in _GRANTS[self.role]

    def require(self, permission: Permission) -> None:
        if not self.can(permission):
            raise Forbidden(f"role {self.role.value!r} may not {permission.value}")


TOKEN_PREFIX = "tv_"


def new_token() -> str:
    """A fresh bearer token: 256 random bits, prefixed so leaked tokens are recognisable."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """Tokens are high-entropy, so a plain SHA-256 is the right storage hash (no password stretching)."""
    return hashlib.sha256(token.encode()).hexdigest()
