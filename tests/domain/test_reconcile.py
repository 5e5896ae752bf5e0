from toolvet.domain.fingerprint import definition_digest
from toolvet.domain.reconcile import StoredTool, reconcile

SCHEMA = {"type": "object"}


def raw(name, description="d", **extra):
    return {"name": name, "description": description, "inputSchema": SCHEMA, **extra}


def stored(id_, definition, retired=False):
    return StoredTool(id=id_, name=definition["name"], digest=definition_digest(definition),
                      input_schema=definition["inputSchema"], advertised_read_only=None, retired=retired)


def test_new_known_changed_and_missing_tools_are_told_apart():
    a, b, c = raw("a"), raw("b"), raw("c")
    changes = reconcile([stored(1, a), stored(2, b), stored(3, c)], [a, raw("b", "new"), raw("d")],
                        complete=True, max_definition_bytes=10_000)
    assert [u.claim.name for u in changes.added] == ["d"]
    assert [u.tool_id for u in changes.changed] == [2]
    assert changes.unchanged_ids == [1]
    assert changes.retire_ids == [3]


def test_an_incomplete_listing_retires_nothing():
    changes = reconcile([stored(1, raw("a"))], [], complete=False, max_definition_bytes=10_000)
    assert changes.retire_ids == []


def test_two_tools_with_one_name_are_both_rejected():
    changes = reconcile([], [raw("x"), raw("x", "other")], complete=True, max_definition_bytes=10_000)
    assert [r.index for r in changes.rejected] == [0, 1]
    assert changes.added == []


def test_a_stored_tool_whose_new_definition_is_invalid_is_retired():
    changes = reconcile([stored(1, raw("a"))], [{"name": "a", "inputSchema": {"type": "array"}}],
                        complete=True, max_definition_bytes=10_000)
    assert len(changes.rejected) == 1 and changes.retire_ids == [1]


def test_a_retired_tool_that_returns_is_revived_not_added():
    a = raw("a")
    changes = reconcile([stored(1, a, retired=True)], [a], complete=True, max_definition_bytes=10_000)
    assert [(u.tool_id, u.revived) for u in changes.changed] == [(1, True)]


def test_names_are_case_sensitive():
    changes = reconcile([stored(1, raw("Foo"))], [raw("Foo"), raw("foo")], complete=True, max_definition_bytes=10_000)
    assert [u.claim.name for u in changes.added] == ["foo"] and changes.unchanged_ids == [1]


def test_over_the_size_limit_is_rejected():
    changes = reconcile([], [raw("big", "x" * 2000)], complete=True, max_definition_bytes=1000)
    assert "over the limit of 1000" in changes.rejected[0].reason


def test_a_non_finite_number_is_rejected():
    changes = reconcile([], [raw("nan", default=float("nan"))], complete=True, max_definition_bytes=10_000)
    assert changes.rejected and changes.added == []


def test_an_invalid_json_schema_is_rejected_naming_where():
    changes = reconcile([], [{"name": "t", "inputSchema": {"type": "object", "properties": {"a": {"type": "strin"}}}}],
                        complete=True, max_definition_bytes=10_000)
    assert "not a valid JSON Schema" in changes.rejected[0].reason
    assert "properties/a/type" in changes.rejected[0].reason


def test_an_unknown_metaschema_is_refused_without_fetching_it():
    # A hostile server must not make toolvet open a connection by naming a URL in $schema.
    raw = {"name": "t", "inputSchema": {"$schema": "http://127.0.0.1:9/evil", "type": "object"}}
    changes = reconcile([], [raw], complete=True, max_definition_bytes=10_000)
    assert "unknown $schema" in changes.rejected[0].reason


def test_a_known_older_draft_is_accepted():
    raw = {"name": "t", "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}}
    assert reconcile([], [raw], complete=True, max_definition_bytes=10_000).added


def test_the_size_from_the_digest_is_the_compact_size():
    import json

    from toolvet.domain.fingerprint import definition_digest, definition_digest_and_size

    value = {"z": "é ✓", "a": [1, {"y": None, "b": True}], "m": "\u0000\n"}
    digest, size = definition_digest_and_size(value)
    assert digest == definition_digest(value)
    assert size == len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def test_a_lowered_size_limit_rejects_and_retires_an_unchanged_stored_tool():
    big = raw("big", "x" * 2000)
    changes = reconcile([stored(1, big)], [big], complete=True, max_definition_bytes=1000)
    assert "over the limit of 1000" in changes.rejected[0].reason
    assert changes.unchanged_ids == [] and changes.retire_ids == [1]
