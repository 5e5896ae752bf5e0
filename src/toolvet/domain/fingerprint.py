"""Definition fingerprints (SPEC §3.1) and whole-definition digests."""

from __future__ import annotations

import hashlib
from typing import Any, Final

import rfc8785

from toolvet.jsontext import sorted_compact, sorted_part

# RFC 8785 refuses integers outside the range a double holds exactly; the fast path must not accept more.
_JCS_INT_MIN: Final = -(2**53) + 1
_JCS_INT_MAX: Final = 2**53 - 1


def _same_as_sorted_json(value: Any) -> bool:
    """True when ``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` is,
    provably, the JCS text of ``value``.

    Where the two agree: null, true/false, integers JCS accepts (both print them in decimal), strings
    (both escape exactly ``"``, ``\\`` and U+0000-U+001F, the latter as ``\\b \\t \\n \\f \\r`` or
    lower-case ``\\u00xx``, and leave everything else literal), arrays, and objects with string keys
    whose code-point order is their UTF-16 order (true unless a key holds a character beyond the BMP:
    its surrogates sort below U+E000-U+FFFF in UTF-16 but above them as a code point). Where they
    differ: floats (ECMAScript number formatting, e.g. ``1e+21`` and ``100`` for ``100.0``), integers
    beyond +-(2**53 - 1) (JCS refuses them), non-string keys (json.dumps coerces them) and any other
    type. Only exact built-in types qualify, so no subclass's overrides come into play.
    """
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(_JCS_INT_MIN <= value <= _JCS_INT_MAX)
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or (not key.isascii() and max(key) > "\uffff"):
                return False
            if type(item) is not str and not _same_as_sorted_json(item):
                return False
        return True
    if kind is list:
        return all(type(item) is str or _same_as_sorted_json(item) for item in value)
    return False


# The fingerprinted contract's members in code-point (= UTF-16, they are ASCII) order, as JCS sorts them.
_CONTRACT_KEYS: Final = ("description", "inputSchema", "outputSchema", "title")


def canonical_json(value: Any) -> bytes:
    """RFC 8785 (JCS) canonical JSON; raises ``rfc8785.CanonicalizationError`` for values JCS forbids.

    ``rfc8785`` serialises in pure Python (about 30 us per tool definition, paid for every new or
    changed tool of every pass); when :func:`_same_as_sorted_json` proves the C encoder's sorted
    output identical, that is used instead. Any value outside the proof, or one whose text is not
    valid UTF-8 (a lone surrogate), takes ``rfc8785`` and so its exact result or error.
    """
    if _same_as_sorted_json(value):
        text = sorted_compact(value)  # (the proof leaves no NaN or infinity for allow_nan to refuse)
        try:
            return text.encode()
        except UnicodeEncodeError:
            pass  # rfc8785 raises its own error for this; let it
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
    return definition_digest_and_size(definition)[0]


def plain_definition_fingerprint(definition: dict[str, Any]) -> str:
    """:func:`definition_fingerprint` of a definition that :func:`toolvet.jsontext.sorted_compact_plain`
    found plain: its contract's sorted text is its JCS text (no float, no integer JCS refuses, no key
    that sorts otherwise in UTF-16), made in one go without a walk of the schemas."""
    contract = {key: definition.get(key) for key in _CONTRACT_KEYS}
    return "sha256:" + hashlib.sha256(sorted_part(contract).encode()).hexdigest()


def definition_digest_and_size(definition: Any, *, json_decoded: bool = False,
                               float_free: bool = False) -> tuple[str, int]:
    """:func:`definition_digest` and the definition's size in bytes as compact UTF-8 JSON, from one
    serialisation.

    Sorting the keys only permutes an object's members, so the sorted text is exactly as long as the
    compact text in the server's own key order: the size limit (SPEC §4.1) needs no second
    ``json.dumps``. Raises ValueError for NaN or infinities and UnicodeEncodeError (a ValueError) for
    a lone surrogate, which UTF-8 cannot hold. ``json_decoded``, ``float_free``: see
    :func:`toolvet.jsontext.sorted_compact`.
    """
    data = sorted_compact(definition, json_decoded=json_decoded, float_free=float_free).encode()
    return "sha256:" + hashlib.sha256(data).hexdigest(), len(data)


def sorted_member_texts(definition: Any) -> dict[str, str] | None:
    """Each member of ``definition`` (an exact dict with exact-str keys, else None) as sorted compact
    JSON: the texts the sorted serialisation of the whole object is made of (:func:`assemble_sorted`),
    so the digest, the size and the fingerprint share one encoding of each member.

    Raises what ``json.dumps`` raises for the members (TypeError, ValueError for NaN/infinities).
    """
    if type(definition) is not dict:
        return None
    for key in definition:
        if type(key) is not str:
            return None  # json.dumps coerces (or refuses to sort) such keys: leave that to it
    return {key: sorted_compact(value) for key, value in definition.items()}


def assemble_sorted(members: dict[str, str]) -> str:
    """The text of ``json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` for
    the object whose members' texts are ``members``: the C encoder sorts the (unique, str) keys and
    writes ``"key":value`` pairs separated by ``,`` in braces, exactly this."""
    return "{" + ",".join([sorted_compact(key) + ":" + members[key] for key in sorted(members)]) + "}"


def fingerprint_from_members(definition: dict[str, Any], members: dict[str, str]) -> str:
    """:func:`definition_fingerprint` of ``definition``, given its :func:`sorted_member_texts`.

    A contract member's sorted text is also its JCS text when :func:`_same_as_sorted_json` proves it
    (a str always qualifies; absent and null members are ``null``), so the JCS text of the contract
    is assembled from the texts already made for the digest instead of serialising the schemas again.
    A member outside the proof, or a lone surrogate, takes :func:`definition_fingerprint` (and so its
    exact result or error).
    """
    parts = []
    for key in _CONTRACT_KEYS:
        value = definition.get(key)
        if value is None:
            parts.append(f'"{key}":null')
        elif type(value) is str or _same_as_sorted_json(value):
            parts.append(f'"{key}":' + members[key])
        else:
            return definition_fingerprint(definition)
    try:
        contract = ("{" + ",".join(parts) + "}").encode()
    except UnicodeEncodeError:
        return definition_fingerprint(definition)
    return "sha256:" + hashlib.sha256(contract).hexdigest()
