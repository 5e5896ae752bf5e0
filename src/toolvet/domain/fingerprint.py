"""Definition fingerprints (SPEC §3.1) and whole-definition digests."""

from __future__ import annotations

import hashlib
from typing import Any

import rfc8785


def canonical_json(value: Any) -> bytes:
    """RFC 8785 (JCS) canonical JSON; raises ``rfc8785.CanonicalizationError`` for values JCS forbids."""
    return rfc8785.dumps(value)


def fingerprint(title: Any, description: Any, input_schema: Any, output_schema: Any) -> str:
    """``sha256:`` + hex SHA-256 of the JCS form of the four contract members, absent ones as null.

    The name is not part of it: a rename is a removal plus a new tool.
    """
    contract = {
        "title": title,
        "description": description,
        "inputSchema": input_schema,
        "outputSchema": output_schema,
    }
    return "sha256:" + hashlib.sha256(canonical_json(contract)).hexdigest()


def definition_fingerprint(definition: dict[str, Any]) -> str:
    """The fingerprint of an advertised tool object (absent members read as null)."""
    return fingerprint(
        definition.get("title"),
        definition.get("description"),
        definition.get("inputSchema"),
        definition.get("outputSchema"),
    )


def definition_digest(definition: Any) -> str:
    """Digest of the whole advertised object, so history keeps every distinct definition, even one
    that differs only outside the fingerprinted contract (annotations, icons, ``_meta``)."""
    return "sha256:" + hashlib.sha256(canonical_json(definition)).hexdigest()
