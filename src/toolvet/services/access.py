"""Who may call a tool, by its ``securitySchemes``: the one rule every way in asks.

A tool's ``securitySchemes`` (top level, else ``_meta.securitySchemes``) decide:

- ``noauth`` anywhere in the list: anyone may call it, without a token as the anonymous consumer
  (where :attr:`~toolvet.settings.Settings.anonymous_listing` lets callers without a token in);
- ``oauth2`` with scopes: a valid token holding every listed scope among its ``oauth_scopes``;
- no schemes at all (or none toolvet knows): a valid token.

A token's role grants no OAuth scope: an operator's token calling a tool that lists scopes needs them
like a consumer's. The MCP gateway (its 401/403 challenge), ``POST /api/v1/calls`` and the call
service behind both, approvals and ``POST /api/v1/decide`` all ask :func:`check` or :func:`refusal`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from toolvet.domain.fingerprint import declared_security_schemes
from toolvet.errors import Forbidden, Unauthenticated
from toolvet.services.auth import Principal, Role

#: Who calls without a token (a ``noauth`` tool): a consumer of its own, user ``anonymous``.
ANONYMOUS: Final = Principal(actor="anonymous", role=Role.CONSUMER, user="anonymous", scope="default")


@dataclass(frozen=True, slots=True)
class Requirement:
    """What calling one tool needs: nothing (``noauth``), or a valid token with ``scopes``."""

    noauth: bool
    scopes: frozenset[str]

    def missing(self, principal: Principal | None) -> frozenset[str] | None:
        """None when ``principal`` may call; else the scopes it lacks (empty: it lacks a token).
        The anonymous principal holds no token."""
        if self.noauth:
            return None
        if principal is None or principal == ANONYMOUS:
            return frozenset()
        lacking = self.scopes - principal.oauth_scopes
        return lacking or None


NEEDS_TOKEN: Final = Requirement(noauth=False, scopes=frozenset())


def requirement(definition: Mapping[str, Any]) -> Requirement:
    """Read a tool's ``securitySchemes`` (top level, else ``_meta.securitySchemes``) into a Requirement.

    ``noauth`` anywhere in the list wins ("anyone may call it; the scopes are only advertised").
    Unknown scheme types are ignored; a list naming none toolvet knows needs a token.
    """
    schemes = declared_security_schemes(definition)
    if not isinstance(schemes, list):
        return NEEDS_TOKEN
    scopes: set[str] = set()
    for scheme in schemes:
        if not isinstance(scheme, Mapping):
            continue
        if scheme.get("type") == "noauth":
            return Requirement(noauth=True, scopes=frozenset())
        if scheme.get("type") == "oauth2" and isinstance(scheme.get("scopes"), list):
            scopes.update(s for s in scheme["scopes"] if isinstance(s, str))
    return Requirement(noauth=False, scopes=frozenset(scopes))


def refusal(principal: Principal | None, need: Requirement, tool: str) -> str | None:
    """Why ``principal`` (None: no token) may not call ``tool``, as a sentence; None when it may."""
    lacking = need.missing(principal)
    if lacking is None:
        return None
    if not lacking:
        return f"{tool} needs a bearer token"
    return f"{tool} needs the OAuth scopes {', '.join(sorted(lacking))}, which this token does not hold"


def granted(need: Requirement) -> str | None:
    """The reason a call admitted under ``need`` carries when ``need`` lists scopes (None otherwise).

    A pending call keeps it among its reasons: a tool's ``securitySchemes`` are not part of its
    fingerprint, so approval compares the tool's requirement then with this one (:func:`still_holds`).
    """
    if need.noauth or not need.scopes:
        return None
    return f"the token holds the OAuth scopes this tool needs: {', '.join(sorted(need.scopes))}"


def needs(need: Requirement) -> str | None:
    """The OAuth scopes calling a tool needs, as a sentence, when it lists any (``toolvet check``, which
    presents no token); None otherwise."""
    if need.noauth or not need.scopes:
        return None
    return f"calling it needs a bearer token holding the OAuth scopes {', '.join(sorted(need.scopes))}"


def check(principal: Principal | None, need: Requirement, tool: str) -> None:
    """Raise Unauthenticated (no token where one is needed) or Forbidden (a scope is missing)."""
    reason = refusal(principal, need, tool)
    if reason is None:
        return
    if not need.missing(principal):
        raise Unauthenticated(reason)
    raise Forbidden(reason)


def admit(principal: Principal | None, need: Requirement, tool: str, *, anonymous: bool) -> Principal:
    """The principal a call of ``tool`` runs as: ``principal``, or :data:`ANONYMOUS` for a caller without
    a token at a ``noauth`` tool when ``anonymous`` callers are let in; raises like :func:`check`."""
    if principal is None:
        if not anonymous:
            raise Unauthenticated(f"{tool} needs a bearer token")
        check(None, need, tool)
        return ANONYMOUS
    check(principal, need, tool)
    return principal


def still_holds(need: Requirement, user: str, reasons: list[str]) -> bool:
    """Whether a pending call made for ``user`` with ``reasons`` was admitted under a requirement that
    covers ``need`` (the tool's requirement now): the scopes that count are those of the token that
    made the call, checked when it was made.

    A ``noauth`` tool holds for anyone; a tool needing only a token holds unless the call was made
    without one (the anonymous user); a tool listing scopes holds when the call was admitted under
    exactly those scopes (its :func:`granted` reason).
    """
    if need.noauth:
        return True
    if not need.scopes:
        return user != ANONYMOUS.user
    return granted(need) in reasons
