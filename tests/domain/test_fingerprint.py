"""The one fingerprint function: RFC 8785 + SHA-256 of a tool's contract, whichever path makes the text."""

from __future__ import annotations

import enum
import hashlib
import json
import math
import re
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from toolvet.domain.fingerprint import (
    CONTRACT_MEMBERS,
    canonical_json,
    definition_digest,
    definition_digest_and_size,
    fingerprint,
)
from toolvet.jsontext import plain_sorted, sorted_compact

# A copy of the shared vectors every implementation must match.
VECTORS = json.loads((Path(__file__).parent / "fingerprint-vectors.json").read_text())["vectors"]


def reference_fingerprint(definition: dict[str, Any]) -> str:
    """The definition, spelt out: rfc8785 of the four members, absent ones null, and the declared
    securitySchemes (top level, else in ``_meta``) when there are any, then SHA-256."""
    contract = {key: definition.get(key) for key in ("title", "description", "inputSchema", "outputSchema")}
    meta = definition.get("_meta")
    schemes = definition.get("securitySchemes")
    if schemes is None and isinstance(meta, dict):
        schemes = meta.get("securitySchemes")
    if schemes is not None:
        contract["securitySchemes"] = schemes
    return "sha256:" + hashlib.sha256(rfc8785.dumps(contract)).hexdigest()


def outcome(make: Any, value: Any) -> Any:
    """What ``make(value)`` returns, or the type of what it raises."""
    try:
        return make(value)
    except Exception as exc:
        return type(exc)


def standard_sorted(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


# ----------------------------------------------------------------------------------------- vectors


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["fingerprint"][:19])
def test_fingerprint_reproduces_the_shared_vectors(vector):
    assert fingerprint(vector) == vector["fingerprint"]
    assert fingerprint(vector) == reference_fingerprint(vector)


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["fingerprint"][:19])
def test_canonical_json_of_the_vectors_is_rfc8785(vector):
    contract = {key: vector[key] for key in CONTRACT_MEMBERS}
    assert canonical_json(contract) == rfc8785.dumps(contract)
    assert plain_sorted(contract) in (None, rfc8785.dumps(contract))
    for member in contract.values():
        assert canonical_json(member) == rfc8785.dumps(member)


# --------------------------------------------------------------------------- property: random JSON

# Characters where encoders could part: the escapes, controls, DEL and C1, the line separators, BMP
# characters on both sides of the surrogate block, characters beyond the BMP (UTF-16 sorts those
# below U+E000-U+FFFF), a lone surrogate, and a float's spelling inside a string.
_AWKWARD = ['"', "\\", "/", "\b", "\f", "\n", "\r", "\t", "\x00", "\x1f", "\x7f", "\x9f", "\u2028", "\u2029",
            "é", "\ud7ff", "\ue000", "\ufeff", "\uffff", "\U00010000", "\U0001f600", "\U0010ffff", "\ud800",
            ":1.5,", "server 3.", "[2e5", "null", "-0"]
texts = st.lists(st.sampled_from(_AWKWARD) | st.characters(), max_size=6).map("".join)
numbers = (st.integers() | st.sampled_from([2**53 - 1, -(2**53) + 1, 2**53, -(2**53), 2**64])
           | st.floats() | st.sampled_from([0.0, -0.0, 1.0, 100.0, 1e21, 1e-7, 5e-324, 1e16, math.nan]))
json_values = st.recursive(
    st.none() | st.booleans() | numbers | texts,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(texts, inner, max_size=5),
    max_leaves=25,
)
definitions = st.fixed_dictionaries(
    {"name": texts},
    optional={"title": json_values, "description": texts | json_values, "inputSchema": json_values,
              "outputSchema": json_values, "annotations": json_values,
              "_meta": json_values | st.fixed_dictionaries({"securitySchemes": json_values}),
              "securitySchemes": json_values},
)

PROPERTY = settings(max_examples=800, deadline=None, database=None, derandomize=True)


@PROPERTY
@given(json_values)
def test_canonical_json_is_rfc8785_on_random_json(value):
    assert outcome(canonical_json, value) == outcome(rfc8785.dumps, value)


@PROPERTY
@given(definitions)
def test_fingerprint_is_rfc8785_and_sha256_on_random_definitions(definition):
    assert outcome(fingerprint, definition) == outcome(reference_fingerprint, definition)


@PROPERTY
@given(json_values)
def test_the_fast_text_is_both_rfc8785_and_the_standard_sorted_text(value):
    text = plain_sorted(value)
    if text is not None:
        assert text == rfc8785.dumps(value)
        assert text.decode() == standard_sorted(value)


@PROPERTY
@given(json_values)
def test_sorted_compact_is_the_standard_encoders_text_on_random_json(value):
    assert outcome(sorted_compact, value) == outcome(standard_sorted, value)


def test_the_fast_path_is_taken_for_plain_json():
    # The property tests would pass with no fast path at all; this shows it runs for ordinary definitions.
    plain = {"title": "Tëst ☕ \U0001f600", "description": "Returns at most `limit` results (server 3.).",
             "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "maxLength": 2**53 - 1}},
                             "required": ["q"], "additionalProperties": False},
             "outputSchema": None}
    assert plain_sorted(plain) == rfc8785.dumps(plain)


# ------------------------------------------------------------------------ what the fast path refuses


class Colour(enum.Enum):
    RED = 1


class Text(str):
    pass


@pytest.mark.parametrize("value", [
    {"a": 1.0},  # floats are spelt differently by each encoder
    {"a": [1, 2, 3.5]},
    -0.0,
    {"a": 2**53},  # beyond what RFC 8785 accepts
    {"\U0001f600": 1, "\uffff": 2},  # UTF-16 order puts the surrogate pair first; code points do not
    {"a": math.nan},  # orjson writes null
    {"a": None, "b": [math.inf]},
    {"a": uuid.UUID(int=1)},  # orjson writes a string
    {"a": Colour.RED},  # orjson writes its value
    {"a": orjson.Fragment(b'"x"')},
    {"a": Text("x")},  # a subclass
    {1: "a"},  # json.dumps coerces the key
    {"a": "\ud800"},  # a lone surrogate
])
def test_what_the_fast_path_cannot_prove_takes_rfc8785(value):
    assert plain_sorted(value) is None
    assert outcome(canonical_json, value) == outcome(rfc8785.dumps, value)
    assert outcome(sorted_compact, value) == outcome(standard_sorted, value)


@pytest.mark.parametrize("value", [{"d": "server 3."}, {"d": "null"}, {"u": "\U0001f600"},
                                   ("a", ["b"])])  # a tuple: every encoder here writes an array
def test_strings_that_only_look_awkward_take_the_fast_path(value):
    assert plain_sorted(value) == rfc8785.dumps(value)


def test_nan_beside_absent_members_is_found():
    definition = {"name": "t", "inputSchema": {"type": "object", "default": math.nan}}
    with pytest.raises(rfc8785.CanonicalizationError):
        fingerprint(definition)


# ------------------------------------------------------------------------------------- the contract


def test_absent_members_fingerprint_as_null():
    schema = {"type": "object"}
    assert fingerprint({"name": "a", "inputSchema": schema}) == fingerprint(
        {"name": "a", "title": None, "description": None, "inputSchema": schema, "outputSchema": None})


def test_the_name_is_not_part_of_the_fingerprint():
    schema = {"type": "object"}
    assert fingerprint({"name": "a", "inputSchema": schema}) == fingerprint({"name": "b", "inputSchema": schema})


def test_key_order_does_not_move_the_fingerprint_or_digest():
    a = {"name": "t", "inputSchema": {"type": "object", "properties": {"x": {}, "y": {}}}}
    b = {"inputSchema": {"properties": {"y": {}, "x": {}}, "type": "object"}, "name": "t"}
    assert fingerprint(a) == fingerprint(b)
    assert definition_digest(a) == definition_digest(b)


def test_annotations_move_the_digest_but_not_the_fingerprint():
    a = {"name": "t", "inputSchema": {"type": "object"}}
    b = {**a, "annotations": {"readOnlyHint": True}}
    assert fingerprint(a) == fingerprint(b)
    assert definition_digest(a) != definition_digest(b)


def test_true_and_one_are_different_definitions():
    assert definition_digest({"x": True}) != definition_digest({"x": 1})


@PROPERTY
@given(definitions)
def test_the_digest_and_size_are_the_standard_sorted_text_s(definition):
    def reference(d: Any) -> tuple[str, int]:
        data = standard_sorted(d).encode()
        return "sha256:" + hashlib.sha256(data).hexdigest(), len(data)

    assert outcome(definition_digest_and_size, definition) == outcome(reference, definition)


@PROPERTY
@given(definitions)
def test_a_claim_carries_the_reference_digest_size_and_fingerprint(definition):
    from toolvet.domain.definitions import DefinitionError, read_claim

    definition["inputSchema"] = {"type": "object", "properties": {"p": {"default": definition.get("inputSchema")}}}
    definition.pop("outputSchema", None)
    refused = (not definition["name"]
                or not isinstance(outcome(definition_digest_and_size, definition), tuple)
                or not isinstance(outcome(reference_fingerprint, definition), str)
                or not all(isinstance(definition.get(k), (str, type(None))) for k in ("title", "description"))
                or not all(isinstance(definition.get(k), (dict, type(None))) for k in ("annotations", "_meta")))
    try:
        claim = read_claim(definition, 10**9)
    except DefinitionError:
        assert refused  # only for what has no JSON or RFC 8785 text, or a member of the wrong type
        return
    assert not refused
    data = standard_sorted(definition).encode()
    assert (claim.digest, claim.size, claim.fingerprint, claim.text) == (
        "sha256:" + hashlib.sha256(data).hexdigest(), len(data), reference_fingerprint(definition), data.decode())


def test_fingerprints_are_made_in_one_module():
    # Every caller (discovery, hand-added tools, host tools, benchmarks) goes through fingerprint():
    # no other module of toolvet canonicalises JSON itself.
    src = Path(__file__).parents[2] / "src" / "toolvet"
    imports = re.compile(r"^\s*(import|from) rfc8785\b", re.MULTILINE)
    users = sorted(str(p.relative_to(src)) for p in src.rglob("*.py") if imports.search(p.read_text(encoding="utf-8")))
    assert users == ["domain/fingerprint.py"]


def test_declared_security_schemes_are_part_of_the_contract():
    """Who may call a tool follows its securitySchemes: a change of them is a changed contract. A tool that
    declares none keeps the fingerprint it had before they were covered."""
    base = {"name": "t", "inputSchema": {"type": "object"}}
    oauth = [{"type": "oauth2", "scopes": ["repo:write"]}]
    assert fingerprint(base) == reference_fingerprint(base)
    assert fingerprint({**base, "securitySchemes": oauth}) != fingerprint(base)
    noauth = [{"type": "noauth"}]
    assert fingerprint({**base, "securitySchemes": oauth}) != fingerprint({**base, "securitySchemes": noauth})
    assert fingerprint({**base, "_meta": {"securitySchemes": oauth}}) == fingerprint({**base, "securitySchemes": oauth})
    assert fingerprint({**base, "_meta": {"other": 1}}) == fingerprint(base)
