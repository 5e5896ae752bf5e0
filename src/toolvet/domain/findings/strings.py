"""Every string of a tool definition, with the JSON path it sits at."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

#: JSON Schema keywords: a key that is one of these is grammar, not text the model reads. Every other key
#: of a schema (a property name above all) is read like any string.
_KEYWORDS: Final = frozenset({
    "$schema", "$id", "$ref", "$defs", "$anchor", "$dynamicRef", "$dynamicAnchor", "$comment", "$vocabulary",
    "definitions", "type", "properties", "patternProperties", "additionalProperties", "required", "items",
    "prefixItems", "additionalItems", "contains", "minContains", "maxContains", "enum", "const", "default",
    "examples", "title", "description", "format", "pattern", "minLength", "maxLength", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "uniqueItems",
    "minProperties", "maxProperties", "dependentRequired", "dependentSchemas", "propertyNames", "allOf",
    "anyOf", "oneOf", "not", "if", "then", "else", "unevaluatedItems", "unevaluatedProperties", "readOnly",
    "writeOnly", "deprecated", "contentEncoding", "contentMediaType", "contentSchema", "nullable",
})


@dataclass(frozen=True, slots=True)
class Text:
    """One string of a definition: where it is, what it says, and whether it is a key (a property name)."""

    path: str
    value: str
    key: bool = False
    #: The innermost schema property the string describes (its name), when it is inside one.
    parameter: str | None = None


def _walk(node: Any, path: str, parameter: str | None, out: list[Text], *, schema: bool, keys: bool = True) -> None:
    if isinstance(node, str):
        out.append(Text(path, node, parameter=parameter))
    elif isinstance(node, dict):
        under_properties = path.endswith(".properties") or path.endswith(".patternProperties")
        for k, v in node.items():
            child = f"{path}.{k}"
            if keys and isinstance(k, str) and (not schema or k not in _KEYWORDS or under_properties):
                out.append(Text(child, k, key=True, parameter=k if under_properties else parameter))
            if isinstance(v, str | dict | list):
                _walk(v, child, k if under_properties else parameter, out, schema=schema, keys=keys)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            if isinstance(v, str | dict | list):
                _walk(v, f"{path}[{i}]", parameter, out, schema=schema, keys=keys)


def texts(definition: dict[str, Any]) -> list[Text]:
    """Name, title, description, every string of ``annotations``, ``inputSchema``, ``outputSchema`` and
    ``_meta`` (values and non-keyword keys, property names included) and every icon string (URLs)."""
    out: list[Text] = []
    for key in ("name", "title", "description"):
        value = definition.get(key)
        if isinstance(value, str):
            out.append(Text(key, value))
    for key in ("annotations", "_meta", "icons"):
        value = definition.get(key)
        if isinstance(value, dict | list):
            _walk(value, key, None, out, schema=False, keys=key == "_meta")
    for key in ("inputSchema", "outputSchema"):
        value = definition.get(key)
        if isinstance(value, dict | list):
            _walk(value, key, None, out, schema=True)
    return out

