"""Reading one advertised tool object into a claim, or a rejection with its reason (docs/discovery.md#one-pass)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jsonschema_rs

from toolvet.domain.fingerprint import fingerprint, text_digest_and_size
from toolvet.jsontext import sorted_compact


class DefinitionError(ValueError):
    """A tool definition that cannot be stored; the message says which member is wrong and why."""

    def __init__(self, message: str, member: str | None = None) -> None:
        super().__init__(message)
        self.member = member


@dataclass(frozen=True)
class ToolClaim:
    """What a server claims about one tool: every discovery-owned field, derived from the raw object."""

    name: str
    title: str | None
    description: str | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    annotations: dict[str, Any] | None
    icons: list[Any] | None
    meta: dict[str, Any] | None
    definition: dict[str, Any]
    advertised_read_only: bool | None
    fingerprint: str
    digest: str
    size: int = field(compare=False)
    #: The definition as sorted compact JSON (what the digest hashes), when read_claim made it.
    text: str | None = field(default=None, compare=False, repr=False)


#: The meta-schemas a definition may name in ``$schema``. Any other URI is refused *before* validation:
#: the validator would try to fetch it, and a server's claim must never make toolvet open a connection.
KNOWN_METASCHEMAS = frozenset({
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2019-09/schema",
    "http://json-schema.org/draft-07/schema",
    "http://json-schema.org/draft-06/schema",
    "http://json-schema.org/draft-04/schema",
})


def check_schema(schema: Any, member: str, *, require_object_root: bool) -> None:
    """Raise DefinitionError unless ``schema`` is a valid JSON Schema (2020-12 unless its ``$schema``
    names another known draft), object-rooted if asked.

    Meta-validation uses jsonschema-rs: the same check with the pure-Python ``jsonschema`` costs about
    7 ms per schema (it resolves the 2020-12 meta-schema's dynamic references for every subschema),
    which made the first pass over 50,000 tools take minutes; jsonschema-rs takes about 15 µs.
    """
    if not isinstance(schema, dict):
        raise DefinitionError(f"{member} must be a JSON object schema, got {type(schema).__name__}", member)
    if require_object_root and schema.get("type") != "object":
        raise DefinitionError(f'{member} must have "type": "object" at its root', member)
    declared = schema.get("$schema")
    if declared is not None and (not isinstance(declared, str) or declared.rstrip("#") not in KNOWN_METASCHEMAS):
        raise DefinitionError(f"{member} names an unknown $schema {declared!r}; toolvet knows "
                              + ", ".join(sorted(KNOWN_METASCHEMAS)), member)
    try:
        jsonschema_rs.meta.validate(schema)
    except jsonschema_rs.ValidationError as exc:
        where = "/".join(str(p) for p in exc.instance_path)
        raise DefinitionError(f"{member} is not a valid JSON Schema: {exc.message}"
                              + (f" (at {where})" if where else ""), member) from None
    except jsonschema_rs.ReferencingError as exc:
        raise DefinitionError(f"{member} is not a valid JSON Schema: {exc}", member) from None


def _optional(raw: dict[str, Any], key: str, kind: type, kind_name: str) -> Any:
    value = raw.get(key)
    if value is not None and not isinstance(value, kind):
        raise DefinitionError(f"{key} must be {kind_name}, got {type(value).__name__}", key)
    return value


def read_claim(raw: Any, max_bytes: int) -> ToolClaim:
    """Turn one advertised tool object into a claim, or raise DefinitionError naming the problem."""
    if not isinstance(raw, dict):
        raise DefinitionError(f"tool is not a JSON object (got {type(raw).__name__})")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise DefinitionError("name is missing or not a non-empty string", "name")
    try:
        # One serialisation gives the size, the whole-object digest and the text findings screen.
        text = sorted_compact(raw)
        digest, size = text_digest_and_size(text)
    except TypeError as exc:
        raise DefinitionError(f"not serialisable as JSON: {exc}") from None
    except ValueError as exc:  # NaN/infinity or a lone surrogate: no JSON text JCS could accept
        raise DefinitionError(f"not canonical JSON (RFC 8785): {exc}") from None
    if size > max_bytes:
        raise DefinitionError(f"definition is {size} bytes, over the limit of {max_bytes}")
    if "inputSchema" not in raw:
        raise DefinitionError("inputSchema is missing", "inputSchema")
    check_schema(raw["inputSchema"], "inputSchema", require_object_root=True)
    output_schema = raw.get("outputSchema")
    if output_schema is not None:
        # 2026-07-28 allows any root type for outputSchema; it must still be a schema object.
        check_schema(output_schema, "outputSchema", require_object_root=False)
    title = _optional(raw, "title", str, "a string")
    description = _optional(raw, "description", str, "a string")
    annotations = _optional(raw, "annotations", dict, "an object")
    icons = _optional(raw, "icons", list, "an array")
    meta = _optional(raw, "_meta", dict, "an object")
    read_only = annotations.get("readOnlyHint") if annotations else None
    try:
        fp = fingerprint(raw)
    except ValueError as exc:  # rfc8785.CanonicalizationError is one
        raise DefinitionError(f"not canonical JSON (RFC 8785): {exc}") from None
    return ToolClaim(
        name=name,
        title=title,
        description=description,
        input_schema=raw["inputSchema"],
        output_schema=output_schema,
        annotations=annotations,
        icons=icons,
        meta=meta,
        definition=raw,
        advertised_read_only=read_only if isinstance(read_only, bool) else None,
        fingerprint=fp,
        digest=digest,
        size=size,
        text=text,
    )
