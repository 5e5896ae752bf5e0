"""Hypothesis strategies for the requests an OpenAPI document describes, for fuzzing toolvet's API.

Values follow the document's JSON Schemas closely enough to get past the first validation most of
the time (so the handlers behind it are reached), and are mixed with arbitrary JSON of the wrong
shape (so the validation itself is attacked). Only the schema forms FastAPI and pydantic write are
read: ``$ref`` into ``components``, ``anyOf``/``oneOf``/``allOf``, ``enum``, ``const``, ``type``
(one or a list), numeric bounds, ``maxLength``, ``items``, ``properties``/``required`` and
``additionalProperties``. Anything else is generated as arbitrary JSON.

Schemathesis would do this, but its release pins ``jsonschema_rs`` below the version toolvet pins,
and hypothesis-jsonschema relies on Hypothesis internals that the pinned Hypothesis no longer has.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from hypothesis import strategies as st

JSON_SCALARS = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                | st.text(max_size=30))
ANY_JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
#: Past this depth of $ref, a schema is generated as arbitrary JSON (recursive components end).
MAX_REF_DEPTH = 4


@dataclass(frozen=True)
class Operation:
    method: str
    path: str  # the OpenAPI template, e.g. /api/v1/servers/{name}
    parameters: list[dict[str, Any]]
    body: dict[str, Any] | None  # the JSON body's schema

    @property
    def id(self) -> str:
        return f"{self.method} {self.path}"


def operations(spec: dict[str, Any]) -> list[Operation]:
    """Every operation of the document."""
    found = []
    for path, item in spec["paths"].items():
        for method, op in item.items():
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            found.append(Operation(method.upper(), path, op.get("parameters", []), body))
    return found


class Schemas:
    """Strategies for the schemas of one OpenAPI document."""

    def __init__(self, spec: dict[str, Any], known: dict[str, list[Any]] | None = None) -> None:
        self.components = spec.get("components", {}).get("schemas", {})
        #: Values that name something that exists, by field or parameter name: drawn often, so that
        #: requests get past "not found" to the code behind it.
        self.known = known or {}

    def named(self, name: str, strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        """``strategy`` for a field or parameter called ``name``, or one of its known values."""
        if name in self.known:
            return st.one_of(st.sampled_from(self.known[name]), st.sampled_from(self.known[name]), strategy)
        return strategy

    def value(self, schema: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
        """A value for ``schema``, now and then one of the wrong shape."""
        return st.one_of(self.conforming(schema, depth), self.conforming(schema, depth), ANY_JSON)

    def conforming(self, schema: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
        if "$ref" in schema:
            if depth >= MAX_REF_DEPTH:
                return ANY_JSON
            return self.conforming(self.components[schema["$ref"].rsplit("/", 1)[-1]], depth + 1)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return st.one_of([self.conforming(s, depth) for s in schema[key]])
        if "allOf" in schema:
            return self.conforming(schema["allOf"][0], depth)
        if "const" in schema:
            return st.just(schema["const"])
        if "enum" in schema:
            return st.sampled_from(schema["enum"])
        kind = schema.get("type")
        if isinstance(kind, list):
            return st.one_of([self.conforming({**schema, "type": k}, depth) for k in kind])
        if kind == "string":
            return st.text(max_size=min(schema.get("maxLength", 40), 200))
        if kind == "integer":
            return st.integers(schema.get("minimum"), schema.get("maximum")) | st.integers()
        if kind == "number":
            low, high = schema.get("minimum"), schema.get("maximum")
            return st.floats(low, high, allow_nan=False, allow_infinity=False) | st.integers()
        if kind == "boolean":
            return st.booleans()
        if kind == "null":
            return st.none()
        if kind == "array":
            return st.lists(self.conforming(schema.get("items", {}), depth + 1), max_size=4)
        if kind == "object" or "properties" in schema:
            return self._object(schema, depth)
        return ANY_JSON

    def _object(self, schema: dict[str, Any], depth: int) -> st.SearchStrategy[dict[str, Any]]:
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        fixed = st.fixed_dictionaries(
            {k: self.named(k, self.conforming(v, depth + 1)) for k, v in props.items() if k in required},
            optional={k: self.named(k, self.conforming(v, depth + 1)) for k, v in props.items()
                      if k not in required},
        )
        extra = schema.get("additionalProperties")
        if not isinstance(extra, dict):
            return fixed
        more = st.dictionaries(st.text(max_size=12), self.conforming(extra, depth + 1), max_size=3)
        return st.builds(lambda a, b: {**b, **a}, fixed, more)


def query_text(value: Any) -> str | None:
    """A query parameter's text as a client would send it; None leaves it out."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


@st.composite
def requests(draw: st.DrawFn, schemas: Schemas, op: Operation) -> tuple[str, dict[str, str], Any]:
    """(URL path with its query, query parameters, JSON body or a marker that there is none)."""
    path = op.path
    query: dict[str, str] = {}
    for param in op.parameters:
        schema = param.get("schema", {})
        if param["in"] == "path":
            value = draw(schemas.named(param["name"], st.one_of(schemas.conforming(schema), st.text(max_size=20))))
            text = query_text(value) or "x"
            path = path.replace("{" + param["name"] + "}", quote(text, safe="") or "x")
        elif param["in"] == "query" and draw(st.booleans()):
            text = query_text(draw(schemas.named(param["name"], schemas.value(schema))))
            if text is not None:
                query[param["name"]] = text
    body = draw(schemas.value(op.body)) if op.body is not None else None
    return path, query, body
