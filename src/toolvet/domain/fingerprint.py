"""Definition fingerprints (SPEC §3.1) and whole-definition digests."""

from __future__ import annotations

import hashlib
import json
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
    that differs only outside the fingerprinted contract (annotations, icons, ``_meta``).

    It is the cheap test that lets an unchanged tool skip validation on every pass, so it uses the C
    JSON encoder with sorted keys rather than JCS: equal digests mean equal objects (``true`` and ``1``
    stay apart); a number spelled differently (``1.0`` for ``1``) only costs one extra history row.
    Raises ValueError for NaN or infinities, which JSON does not allow.
    """
    text = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()
