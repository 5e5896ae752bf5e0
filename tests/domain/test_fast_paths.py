"""The fast paths of the domain layer give exactly what the slow, obviously-correct paths give."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import rfc8785

from toolvet.domain.fingerprint import _same_as_sorted_json, canonical_json, definition_digest
from toolvet.domain.reconcile import UNLOADED, StoredTool, reconcile

VECTORS = json.loads((Path(__file__).parent / "fingerprint-vectors.json").read_text())["vectors"]


def jcs_or_error(value: Any) -> Any:
    """rfc8785's bytes, or the type of the error it raises."""
    try:
        return rfc8785.dumps(value)
    except Exception as exc:
        return type(exc)


def fast_or_error(value: Any) -> Any:
    try:
        return canonical_json(value)
    except Exception as exc:
        return type(exc)


# ------------------------------------------------------------------------------------------ JCS


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["fingerprint"][:19])
def test_canonical_json_matches_rfc8785_on_the_shared_vectors(vector):
    contract = {k: vector[k] for k in ("title", "description", "inputSchema", "outputSchema")}
    assert canonical_json(contract) == rfc8785.dumps(contract)
    for member in contract.values():
        assert canonical_json(member) == rfc8785.dumps(member)


# Characters where the two encoders could part: escapes, controls, DEL, the line separators, BMP
# characters on both sides of the surrogate block, non-BMP characters (UTF-16 order), lone surrogates.
_AWKWARD = ['"', "\\", "/", "\b", "\f", "\n", "\r", "\t", "\x00", "\x01", "\x1f", "\x7f", "\x80",
            "\u2028",
            "\u2029", "\u00e9", "\ud7ff", "\ue000", "\uffff", "\U00010000", "\U0001f600", "\U0010ffff", "\ud800",
            "\udfff", "a", "Z", "0", " "]


def random_string(rng: random.Random) -> str:
    return "".join(rng.choice(_AWKWARD) if rng.random() < 0.5 else chr(rng.randrange(0x20, 0x250))
                   for _ in range(rng.randrange(0, 6)))


def random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, 1, -1, 2**53 - 1, -(2**53) + 1, 2**53, -(2**53), 10**30,
                           rng.randrange(-10**6, 10**6)])
    if kind == 3:
        return rng.choice([0.0, -0.0, 1.5, 100.0, 1e21, 1e-7, 5e-324, float("nan"), float("inf")])
    if kind in (4, 5):
        return random_string(rng)
    if kind in (6, 7):
        return {random_string(rng): random_value(rng, depth + 1) for _ in range(rng.randrange(0, 5))}
    return [random_value(rng, depth + 1) for _ in range(rng.randrange(0, 5))]


def test_canonical_json_matches_rfc8785_on_random_values():
    rng = random.Random(8785)
    fast_taken = 0
    for _ in range(20_000):
        value = random_value(rng)
        assert fast_or_error(value) == jcs_or_error(value), value
        fast_taken += _same_as_sorted_json(value)
    assert fast_taken > 5_000  # the property is not vacuous: the fast path did run


def test_canonical_json_matches_rfc8785_on_random_tool_contracts():
    rng = random.Random(3)
    for _ in range(2_000):
        properties = {random_string(rng) or "p": {"type": "string", "description": random_string(rng)}
                      for _ in range(rng.randrange(1, 6))}
        contract = {"title": random_string(rng), "description": random_string(rng),
                    "inputSchema": {"type": "object", "properties": properties,
                                    "required": list(properties)[:1], "maxItems": rng.randrange(0, 2**60)},
                    "outputSchema": None}
        assert fast_or_error(contract) == jcs_or_error(contract)


@pytest.mark.parametrize("value", [
    {"\U0001f600": 1, "\uffff": 2},  # UTF-16 order puts the surrogate pair first; code points do not
    {"a": 1.0},
    {"a": 2**53},
    {1: "a"},
    ("a", "b"),
    {"a": {"b": [1, 2, 3.5]}},
])
def test_values_json_dumps_would_spell_differently_take_rfc8785(value):
    assert not _same_as_sorted_json(value)
    assert fast_or_error(value) == jcs_or_error(value)


def test_subclasses_take_rfc8785():
    class Text(str):
        pass

    assert not _same_as_sorted_json(Text("x"))
    assert not _same_as_sorted_json({"a": [Text("x")]})


def test_a_lone_surrogate_raises_what_rfc8785_raises():
    with pytest.raises(rfc8785.CanonicalizationError):
        canonical_json({"a": "\ud800"})


# ------------------------------------------------------------------------------------- reconcile


def tool(name: str, description: str = "d", required: list[str] | None = None) -> dict[str, Any]:
    return {"name": name, "description": description,
            "inputSchema": {"type": "object", "required": required or []}}


def unloaded(id_: int, definition: dict[str, Any]) -> StoredTool:
    return StoredTool(id=id_, name=definition["name"], digest=definition_digest(definition),
                      advertised_read_only=None, retired=False)


def test_stored_schemas_are_loaded_once_and_only_for_changed_tools():
    a, b, c = tool("a"), tool("b"), tool("c")
    calls: list[list[int]] = []

    def load(ids):
        calls.append(list(ids))
        return {2: b["inputSchema"], 3: c["inputSchema"]}

    changes = reconcile([unloaded(1, a), unloaded(2, b), unloaded(3, c)],
                        [a, tool("b", "new", ["x"]), tool("c", "new")],
                        complete=True, max_definition_bytes=10_000, load_input_schemas=load)
    assert calls == [[2, 3]]
    assert [u.tool_id for u in changes.changed] == [2, 3]
    assert "new-required-parameter" in {f["kind"] for f in changes.changed[0].findings}
    assert changes.unchanged_ids == [1]


def test_a_pass_without_changes_loads_no_schema():
    a = tool("a")

    def load(ids):
        raise AssertionError("nothing changed, nothing to load")

    changes = reconcile([unloaded(1, a)], [a, tool("new")], complete=True, max_definition_bytes=10_000,
                        load_input_schemas=load)
    assert changes.unchanged_ids == [1] and len(changes.added) == 1


def test_an_unloaded_schema_without_a_loader_is_a_programming_error():
    assert unloaded(1, tool("a")).input_schema is UNLOADED
    with pytest.raises(ValueError, match="no loader"):
        reconcile([unloaded(1, tool("a"))], [tool("a", "new")], complete=True, max_definition_bytes=10_000)


# ------------------------------------------------------ digest, size and fingerprint from member texts


def reference_digest_size_fingerprint(definition: Any) -> Any:
    """The one-serialisation-per-purpose reference: sorted json.dumps of the whole object, rfc8785 of
    the contract (or the type of the error each raises)."""
    import hashlib

    try:
        data = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False).encode()
        digest = ("sha256:" + hashlib.sha256(data).hexdigest(), len(data))
    except Exception as exc:
        return type(exc)
    contract = {k: definition.get(k) for k in ("title", "description", "inputSchema", "outputSchema")}
    try:
        return digest, "sha256:" + hashlib.sha256(rfc8785.dumps(contract)).hexdigest()
    except Exception as exc:
        return digest, type(exc)


def member_digest_size_fingerprint(definition: Any) -> Any:
    from toolvet.domain.fingerprint import (
        definition_digest_and_size,
        definition_fingerprint,
        fingerprint_from_members,
        sorted_member_texts,
    )

    try:
        digest = definition_digest_and_size(definition)
        members = sorted_member_texts(definition)
    except Exception as exc:
        return type(exc)
    try:
        fp = (definition_fingerprint(definition) if members is None
              else fingerprint_from_members(definition, members))
    except Exception as exc:
        return digest, type(exc)
    return digest, fp


def test_member_texts_give_the_same_digest_size_and_fingerprint_on_random_definitions():
    rng = random.Random(1221)
    members_taken = 0
    for _ in range(5_000):
        definition = {random_string(rng): random_value(rng, 1) for _ in range(rng.randrange(0, 3))}
        for key in ("title", "description", "inputSchema", "outputSchema", "annotations"):
            if rng.random() < 0.6:
                definition[key] = random_value(rng, 1)
        got = member_digest_size_fingerprint(definition)
        assert got == reference_digest_size_fingerprint(definition), definition
        members_taken += not isinstance(got, type) and not isinstance(got[1], type)
    assert members_taken > 1_000


def test_json_decoded_definitions_give_the_same_digest_size_and_fingerprint():
    """What a JSON decoder makes takes orjson's texts (``toolvet.jsontext``) and, when plain, no walk
    of the schemas; the digest, size and fingerprint are the reference's exactly."""
    from toolvet.domain.definitions import DefinitionError, read_claim

    rng = random.Random(2026)
    checked = 0
    for _ in range(5_000):
        definition = {random_string(rng): random_value(rng, 1) for _ in range(rng.randrange(0, 3))}
        for key in ("title", "description"):
            if rng.random() < 0.6:
                definition[key] = random_string(rng)
        definition["name"] = "t"
        definition["inputSchema"] = {"type": "object", "properties": {
            random_string(rng): {"default": random_value(rng, 1), "description": random_string(rng)}}}
        definition["outputSchema"] = rng.choice([None, {"type": "object"}, {"enum": [random_value(rng, 2)]}])
        definition["annotations"] = {random_string(rng): random_value(rng, 2)}
        try:
            decoded = json.loads(json.dumps(definition))
        except (ValueError, UnicodeEncodeError):
            continue
        reference = reference_digest_size_fingerprint(decoded)
        try:
            claim = read_claim(decoded, 10**9, json_decoded=True)
        except DefinitionError:
            continue  # rejected (an invalid output schema, NaN, a lone surrogate): tested elsewhere
        assert ((claim.digest, claim.size), claim.fingerprint) == reference, decoded
        checked += 1
    assert checked > 1_500  # (the rest are rejected, e.g. a key with a lone surrogate)


@pytest.mark.parametrize("definition", [
    {},
    {"name": "t", "inputSchema": {"type": "object"}},
    {"name": "t", "title": None, "description": "é\u2028\"\\\x01", "inputSchema": {"b": 1, "a": [True, None]}},
    {"name": "t", "inputSchema": {"type": "object", "maximum": 1.5}},  # a float: rfc8785 for the contract
    {"name": "t", "inputSchema": {"type": "object", "maximum": 2**60}},  # JCS refuses it
    {"name": "t", "inputSchema": {"\U0001f600": 1, "\uffff": 2}},  # non-BMP key: UTF-16 order differs
    {"name": "t", "inputSchema": ("a",)},  # a tuple
    {"name": "t", "title": "\ud800", "inputSchema": {}},  # a lone surrogate
    {"name": "t", 1: "int key", "inputSchema": {}},  # a non-str key: json.dumps coerces it
    {"name": "t", "inputSchema": {1: "a", "b": 2}},  # mixed keys inside: json.dumps cannot sort them
    {"name": "t", "inputSchema": {}, "outputSchema": float("nan")},
    {"name": "t", "inputSchema": {}, "x": object()},
])
def test_member_texts_edge_cases(definition):
    assert member_digest_size_fingerprint(definition) == reference_digest_size_fingerprint(definition)


def test_member_texts_of_subclasses_fall_back():
    from toolvet.domain.fingerprint import sorted_member_texts

    class Text(str):
        pass

    class Obj(dict):
        pass

    assert sorted_member_texts(Obj(name="t")) is None
    assert sorted_member_texts({Text("name"): "t"}) is None
    definition = {"name": "t", "title": Text("x"), "inputSchema": Obj(type="object")}
    assert member_digest_size_fingerprint(definition) == reference_digest_size_fingerprint(definition)
