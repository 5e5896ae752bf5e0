"""Definition fingerprints (RFC 8785 + SHA-256) and whole-definition digests.

:func:`fingerprint` is the one way toolvet computes a tool's fingerprint: discovery, hand-added tools,
host tools, reviews and always-allow entries all compare what it returns.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

import rfc8785

from toolvet.jsontext import plain_sorted, sorted_compact

__all__ = ["CONTRACT_MEMBERS", "canonical_json", "declared_security_schemes", "definition_digest",
           "definition_digest_and_size", "fingerprint", "text_digest_and_size"]

#: The members of an advertised tool object its fingerprint covers. The name is not one of them: a
#: rename is a removal plus a new tool.
CONTRACT_MEMBERS: Final = ("title", "description", "inputSchema", "outputSchema")


def declared_security_schemes(definition: Mapping[str, Any]) -> Any:
    """A tool's ``securitySchemes`` as declared: the top-level member, else ``_meta.securitySchemes``;
    None when it declares neither. Who may call the tool follows them, so they are part of its contract."""
    schemes = definition.get("securitySchemes")
    meta = definition.get("_meta")
    if schemes is None and isinstance(meta, Mapping):
        schemes = meta.get("securitySchemes")
    return schemes


def canonical_json(value: Any) -> bytes:
    """The RFC 8785 (JCS) text of ``value``; raises ``rfc8785.CanonicalizationError`` for values JCS forbids.

    ``rfc8785`` serialises in pure Python (about 30 µs per tool definition, paid for every new or
    changed tool of every pass), so orjson's text is used where :func:`toolvet.jsontext.plain_sorted`
    proves it the same; any other value takes ``rfc8785`` and so its exact result or error.
    """
    text = plain_sorted(value)
    return text if text is not None else rfc8785.dumps(value)


def fingerprint(definition: Mapping[str, Any], members: Sequence[str] = CONTRACT_MEMBERS) -> str:
    """``sha256:`` + hex SHA-256 of the RFC 8785 text of an advertised object's contract: the object of
    its ``members`` (a tool's :data:`CONTRACT_MEMBERS` unless told; a prompt's or a resource's are in
    ``domain.entries``), absent ones as null, and its :func:`declared_security_schemes` as
    ``securitySchemes`` when it declares any (an object that declares none keeps the fingerprint it had
    before they were covered).

    Raises ``rfc8785.CanonicalizationError`` (a ValueError) when the contract has no RFC 8785 text
    (NaN, an integer beyond +-(2**53 - 1), a lone surrogate).
    """
    contract = {key: definition.get(key) for key in members}
    schemes = declared_security_schemes(definition)
    if schemes is not None:
        contract["securitySchemes"] = schemes
    return "sha256:" + hashlib.sha256(canonical_json(contract)).hexdigest()


def definition_digest(definition: Any) -> str:
    """Digest of the whole advertised object, so history keeps every distinct definition, even one
    that differs only outside the fingerprinted contract (annotations, icons, ``_meta``).

    It is the cheap test that lets an unchanged tool skip validation on every pass, so it hashes the
    sorted compact text of ``json.dumps`` rather than JCS: equal digests mean equal objects (``true``
    and ``1`` stay apart); a number spelled differently (``1.0`` for ``1``) only costs one extra
    history row. Raises ValueError for NaN or infinities, which JSON does not allow.
    """
    return definition_digest_and_size(definition)[0]


def definition_digest_and_size(definition: Any) -> tuple[str, int]:
    """:func:`definition_digest` and the definition's size in bytes as compact UTF-8 JSON, from one
    serialisation (see :func:`text_digest_and_size`)."""
    return text_digest_and_size(sorted_compact(definition))


def text_digest_and_size(sorted_text: str) -> tuple[str, int]:
    """The digest and size of a definition, given its :func:`toolvet.jsontext.sorted_compact` text.

    Sorting the keys only permutes an object's members, so the sorted text is exactly as long as the
    compact text in the server's own key order: the size limit needs no second serialisation. Raises
    UnicodeEncodeError (a ValueError) for a lone surrogate, which UTF-8 cannot hold.
    """
    data = sorted_text.encode()
    return "sha256:" + hashlib.sha256(data).hexdigest(), len(data)
