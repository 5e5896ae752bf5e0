"""Bearer tokens: created with a role (and, for consumers, a user and scope), stored hashed."""

from __future__ import annotations

from sqlalchemy import func, select, update

from toolvet.db.models import ApiToken
from toolvet.db.types import utcnow
from toolvet.errors import InvalidInput, NotFound, Unauthenticated
from toolvet.schemas.common import Page
from toolvet.schemas.tools import TokenCreate, TokenCreated, TokenOut
from toolvet.services import audit
from toolvet.services.auth import Permission, Principal, Role, hash_token, new_token
from toolvet.services.context import Context


def _out(row: ApiToken) -> TokenOut:
    return TokenOut(id=row.id, name=row.name, prefix=row.prefix, role=row.role, user=row.user, scope=row.scope,
                    oauth_scopes=list(row.oauth_scopes or []), created_at=row.created_at,
                    created_by=row.created_by, revoked_at=row.revoked_at)


def create_token(ctx: Context, principal: Principal, data: TokenCreate) -> TokenCreated:
    """Mint a token. A consumer token must name its user; its scope defaults to ``default``."""
    principal.require(Permission.MANAGE_TOKENS)
    try:
        role = Role(data.role)
    except ValueError:
        raise InvalidInput(f"{data.role!r} is not one of {', '.join(r.value for r in Role)}", "role") from None
    if role is Role.CONSUMER and not data.user:
        raise InvalidInput("a consumer token needs the user it acts for", "user")
    token = new_token()
    row = ApiToken(name=data.name, prefix=token[:10], token_hash=hash_token(token), role=role.value,
                   user=data.user, scope=(data.scope or "default") if role is Role.CONSUMER else data.scope,
                   oauth_scopes=sorted(set(data.oauth_scopes)), created_by=principal.actor, created_at=utcnow())
    with ctx.db.transaction() as session:
        session.add(row)
        session.flush()
        out = _out(row)
        audit.record(session, principal, "token.create", "token", f"token:{row.id}", None, out)
    return TokenCreated(**out.model_dump(), token=token)


def list_tokens(ctx: Context, principal: Principal) -> list[TokenOut]:
    principal.require(Permission.MANAGE_TOKENS)
    with ctx.db.transaction() as session:
        return [_out(r) for r in session.scalars(select(ApiToken).order_by(ApiToken.id)).all()]


def token_page(ctx: Context, principal: Principal, *, limit: int = 100, offset: int = 0) -> Page[TokenOut]:
    """One page of the tokens, oldest first (revoked ones included, with ``revoked_at`` set)."""
    principal.require(Permission.MANAGE_TOKENS)
    with ctx.db.transaction() as session:
        total = session.scalar(select(func.count()).select_from(ApiToken)) or 0
        rows = session.scalars(select(ApiToken).order_by(ApiToken.id).limit(limit).offset(offset)).all()
        return Page(items=[_out(r) for r in rows], total=total, limit=limit, offset=offset)


def revoke_token(ctx: Context, principal: Principal, token_id: int) -> TokenOut:
    principal.require(Permission.MANAGE_TOKENS)
    with ctx.db.transaction() as session:
        row = session.get(ApiToken, token_id)
        if row is None:
            raise NotFound(f"token {token_id} not found")
        before = _out(row)
        session.execute(update(ApiToken).where(ApiToken.id == token_id).values(revoked_at=utcnow()))
        session.refresh(row)
        out = _out(row)
        audit.record(session, principal, "token.revoke", "token", f"token:{token_id}", before, out)
    # The process's cached principals are dropped once the revocation is committed: the token is
    # refused at once on /mcp too (REST and the console read the token's row on every request).
    ctx.principals.clear()
    return out


def authenticate(ctx: Context, token: str | None) -> Principal:
    """The principal a bearer token stands for; Unauthenticated when it is missing, unknown or revoked."""
    if not token:
        raise Unauthenticated("a bearer token is required")
    return authenticate_hash(ctx, hash_token(token))


def authenticate_hash(ctx: Context, token_hash: str) -> Principal:
    """The principal for a stored token hash (the console's session keeps the hash, never the token);
    checked on every request, so revoking a token ends its sessions at once."""
    with ctx.db.transaction() as session:
        row = session.scalar(select(ApiToken).where(ApiToken.token_hash == token_hash))
        if row is None or row.revoked_at is not None:
            raise Unauthenticated("the bearer token is unknown or revoked")
        return Principal(actor=f"token:{row.name or row.prefix}", role=Role(row.role), user=row.user,
                         scope=row.scope, oauth_scopes=frozenset(row.oauth_scopes or []))
