"""toolvet.jsontext: orjson's texts only where they are exactly the right ones."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
import rfc8785

from toolvet.jsontext import compact, json_depth_exceeds, loads, plain_sorted, sorted_compact

# Every character json.dumps escapes or might (controls, quote, backslash), DEL and C1 controls, the
# line separators, BMP characters on both sides of the surrogates, non-BMP ones, a lone surrogate.
_AWKWARD = ['"', "\\", "/", "\b", "\f", "\n", "\r", "\t", "\x00", "\x01", "\x1f", "\x7f", "\x80", "\x9f",
            "\u2028", "\u2029", "\u00e9", "\ud7ff", "\ue000", "\ufeff", "\uffff", "\U00010000", "\U0001f600",
            "\ud800", "a", "0", " ", ":1.5,", "server 3.", "1e5"]


def text(rng: random.Random) -> str:
    return "".join(rng.choice(_AWKWARD) if rng.random() < 0.5 else chr(rng.randrange(0x20, 0x3000))
                   for _ in range(rng.randrange(0, 6)))


def value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.choice([0, -1, 2**53 - 1, -(2**53) + 1, 2**53, -(2**53), 2**63, 2**64, 10**30,
                           rng.randrange(-10**9, 10**9)])
    if kind == 2:
        return rng.choice([0.0, -0.0, 1.5, -2.25, 100.0, 1e16, 1e21, 1e-7, 5e-324, 1.7976931348623157e308])
    if kind in (3, 4, 5):
        return text(rng)
    if kind in (6, 7):
        return {text(rng): value(rng, depth + 1) for _ in range(rng.randrange(0, 5))}
    return [value(rng, depth + 1) for _ in range(rng.randrange(0, 5))]


def reference_sorted(v: Any) -> Any:
    try:
        return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except Exception as exc:
        return type(exc)


def ours(v: Any) -> Any:
    try:
        return sorted_compact(v)
    except Exception as exc:
        return type(exc)


def test_sorted_compact_of_decoded_values_is_json_dumps_exactly():
    rng = random.Random(11)
    for _ in range(30_000):
        v = value(rng)
        assert ours(v) == reference_sorted(v), v


def test_a_plain_value_is_its_own_jcs_text():
    rng = random.Random(12)
    plain = 0
    for _ in range(20_000):
        v = value(rng)
        text = plain_sorted(v)
        if text is None:
            continue
        plain += 1
        assert text == rfc8785.dumps(v), v
        assert text.decode() == reference_sorted(v), v
    assert plain > 3_000  # the property is not vacuous


@pytest.mark.parametrize("v", [1.5, -0.0, 12.5, 1e21, [1e-7], {"a": 2**53}, {"\U0001f600": 1, "\uffff": 2}])
def test_floats_long_integers_and_keys_utf16_sorts_otherwise_are_not_plain(v):
    assert plain_sorted(v) is None
    assert sorted_compact(v) == reference_sorted(v)


@pytest.mark.parametrize("v", [{"d": "server 3."}, {"d": "x:1.5,"}, [1, 2, 900719925474099], {"\U0001f600": 1}])
def test_strings_that_look_like_floats_only_cost_the_standard_encoder(v):
    assert sorted_compact(v) == reference_sorted(v)


def test_compact_round_trips_and_keeps_key_order():
    rng = random.Random(13)
    for _ in range(10_000):
        v = value(rng)
        try:
            encoded = compact(v)
        except ValueError:
            continue
        assert json.loads(encoded) == v or v != v  # (NaN is never equal)
        encoded.encode()  # storable: a lone surrogate is escaped, not written raw
    assert compact({"b": 1, "a": [2, "é"]}) == '{"b":1,"a":[2,"é"]}'


def test_compact_writes_nan_and_the_infinities_as_the_standard_encoder_does_wherever_they_are():
    rng = random.Random(17)
    specials = [None, float("nan"), float("inf"), float("-inf"), "null", 1]
    for _ in range(5_000):
        v = value(rng)
        for _ in range(rng.randrange(0, 3)):  # None, NaN or infinity in a member, or deeper
            special = rng.choice(specials)
            v = {"x": special, "y": v} if rng.random() < 0.5 else [v, [special]]
        assert json.dumps(json.loads(compact(v)), separators=(",", ":")) == json.dumps(v, separators=(",", ":"))
    assert compact({"error": None, "took": float("nan")}) == '{"error":null,"took":NaN}'
    assert compact({"error": None, "args": [float("inf")]}) == '{"error":null,"args":[Infinity]}'
    assert compact({"error": None, "note": "null"}) == '{"error":null,"note":"null"}'


def test_compact_refuses_what_json_refuses():
    with pytest.raises(TypeError):
        compact({"when": object()})
    import datetime

    with pytest.raises(TypeError):  # orjson would write a date; the standard library refuses it
        compact({"when": datetime.datetime(2026, 1, 1)})


def _depth(v: Any) -> int:
    if isinstance(v, dict):
        return 1 + max((_depth(x) for x in v.values()), default=0)
    if isinstance(v, list):
        return 1 + max((_depth(x) for x in v), default=0)
    return 0


_BRACKETY = ['"', "\\", "\\\\", '\\"', "[", "]", "{", "}", "[[", "]]]", '"]', "a"]


def bracket_text(rng: random.Random) -> str:
    return "".join(rng.choice(_BRACKETY) for _ in range(rng.randrange(0, 6)))


def nested(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(6 if depth < 12 else 2)
    if kind == 0:
        return rng.choice([None, 1, 2.5, True])
    if kind == 1:
        return bracket_text(rng)
    if kind in (2, 3):
        return {bracket_text(rng): nested(rng, depth + 1) for _ in range(rng.randrange(0, 4))}
    return [nested(rng, depth + 1) for _ in range(rng.randrange(0, 4))]


def test_json_depth_exceeds_agrees_with_the_parsed_depth():
    """Strings full of brackets, quotes and backslashes never change the depth the check sees."""
    rng = random.Random(5)
    checked = 0
    for _ in range(20_000):
        v = nested(rng)
        body = json.dumps(v, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 1])).encode()
        depth = _depth(v)
        for limit in (0, 1, 3, depth - 1, depth, depth + 1):
            if limit >= 0:
                assert json_depth_exceeds(body, limit) == (depth > limit), (body, limit)
                checked += 1
    assert checked > 80_000


def test_loads_is_json_loads():
    """Every value, every odd token orjson reads otherwise or refuses: the same result or the same error."""
    rng = random.Random(9)
    odd = [b"NaN", b"[Infinity,-Infinity]", b'"\\ud800"', b"1e400", b"-9223372036854775809", b"18446744073709551616",
           b"12345678901234567890123", b"\xef\xbb\xbf{}", '{"a":1}'.encode("utf-16"), b'{"a":1,"a":2}', b"-0",
           b"[1.0,1e2,0.1,5e-324]", b'"\x01"', b"{", b"", b'{"id": "1234567890123456789012"}', b"[01]"]
    bodies = [json.dumps(value(rng), ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")
              for _ in range(20_000)] + odd
    for body in bodies:
        try:
            expected: Any = json.loads(body)
        except ValueError as exc:
            expected = type(exc)
        for data in (body, body.decode("utf-8", "surrogatepass")) if body.isascii() else (body,):
            try:
                got: Any = loads(data)
            except ValueError as exc:
                got = type(exc)
            assert repr(got) == repr(expected), data
