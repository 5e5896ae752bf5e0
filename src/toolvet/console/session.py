"""The console's sign-in session: a sealed cookie naming a token by its hash, plus the CSRF secret.

The cookie is sealed with the context's secret box (Fernet: encrypted and authenticated, so it can
be neither read nor forged without the server's key). It holds the token's SHA-256 hash, never the
token itself, and every request looks that hash up again, so a revoked token ends its sessions at
once. The CSRF secret is random per sign-in and must come back in every form (synchronizer token).
"""

from __future__ import annotations

import hmac
import secrets
import time
from dataclasses import dataclass

from toolvet.errors import ToolvetError, Unauthenticated
from toolvet.services import tokens
from toolvet.services.auth import Principal, Role, hash_token
from toolvet.services.context import Context

COOKIE = "toolvet_console"
MAX_AGE = 12 * 3600  # a working day; signing in again is cheap, a stolen cookie ages out
CONSOLE_ROLES = frozenset({Role.ADMIN, Role.OPERATOR, Role.READER})


@dataclass(frozen=True)
class Session:
    """What the cookie carries once opened."""

    token_hash: str
    csrf: str
    issued_at: int
    flash: str = ""
    flash_kind: str = ""

    def seal(self, ctx: Context) -> str:
        sealed = ctx.secrets.seal(
            {
                "h": self.token_hash,
                "c": self.csrf,
                "i": str(self.issued_at),
                "f": self.flash,
                "k": self.flash_kind,
            }
        )
        assert sealed is not None
        return sealed

    def with_flash(self, message: str, kind: str = "ok") -> Session:
        return Session(self.token_hash, self.csrf, self.issued_at, message, kind)

    def without_flash(self) -> Session:
        return Session(self.token_hash, self.csrf, self.issued_at)

    def csrf_ok(self, sent: str | None) -> bool:
        return bool(sent) and hmac.compare_digest(self.csrf.encode(), (sent or "").encode())


def open_cookie(ctx: Context, value: str | None) -> Session | None:
    """The session in a cookie value, or None when absent, tampered with or expired."""
    if not value:
        return None
    try:
        data = ctx.secrets.open(value)
        session = Session(data["h"], data["c"], int(data["i"]), data.get("f", ""), data.get("k", ""))
    except (ToolvetError, KeyError, ValueError, TypeError):
        return None
    if time.time() - session.issued_at > MAX_AGE:
        return None
    return session


def sign_in(ctx: Context, token: str) -> tuple[Principal, Session]:
    """Check a pasted token (a console role, not revoked) and start a session for it."""
    principal = tokens.authenticate(ctx, token.strip())
    if principal.role not in CONSOLE_ROLES:
        raise Unauthenticated(f"a {principal.role.value} token cannot sign in to the console")
    return principal, Session(hash_token(token.strip()), secrets.token_urlsafe(32), int(time.time()))


def principal_for(ctx: Context, session: Session) -> Principal | None:
    """The principal a session's token hash stands for now; None once the token is revoked or its
    role may not use the console."""
    try:
        principal = tokens.authenticate_hash(ctx, session.token_hash)
    except Unauthenticated:
        return None
    return principal if principal.role in CONSOLE_ROLES else None
