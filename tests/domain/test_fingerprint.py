import json
from pathlib import Path

import pytest

from toolvet.domain.fingerprint import definition_digest, definition_fingerprint, fingerprint

# A copy of the shared vectors every implementation must match (SPEC 3.1).
VECTORS = json.loads((Path(__file__).parent / "fingerprint-vectors.json").read_text())["vectors"]


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["fingerprint"][:19])
def test_fingerprint_reproduces_the_shared_vectors(vector):
    got = fingerprint(vector["title"], vector["description"], vector["inputSchema"], vector["outputSchema"])
    assert got == vector["fingerprint"]


def test_absent_members_fingerprint_as_null():
    schema = {"type": "object"}
    assert definition_fingerprint({"name": "a", "inputSchema": schema}) == fingerprint(None, None, schema, None)


def test_the_name_is_not_part_of_the_fingerprint():
    schema = {"type": "object"}
    assert definition_fingerprint({"name": "a", "inputSchema": schema}) == definition_fingerprint(
        {"name": "b", "inputSchema": schema})


def test_key_order_does_not_move_the_fingerprint_or_digest():
    a = {"name": "t", "inputSchema": {"type": "object", "properties": {"x": {}, "y": {}}}}
    b = {"inputSchema": {"properties": {"y": {}, "x": {}}, "type": "object"}, "name": "t"}
    assert definition_fingerprint(a) == definition_fingerprint(b)
    assert definition_digest(a) == definition_digest(b)


def test_annotations_move_the_digest_but_not_the_fingerprint():
    a = {"name": "t", "inputSchema": {"type": "object"}}
    b = {**a, "annotations": {"readOnlyHint": True}}
    assert definition_fingerprint(a) == definition_fingerprint(b)
    assert definition_digest(a) != definition_digest(b)


def test_true_and_one_are_different_definitions():
    assert definition_digest({"x": True}) != definition_digest({"x": 1})
