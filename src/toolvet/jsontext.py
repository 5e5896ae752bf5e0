"""JSON text, fast: orjson where its output is provably exactly what toolvet needs, the standard library else.

Encoding a tool definition is most of what a discovery pass spends per new tool (each is encoded for
its digest, its fingerprint, its stored columns and its history row). ``json.dumps`` takes about
7 µs for a 1 KB definition and ``rfc8785`` about 30 µs, orjson about 2 µs; orjson is used where its
text is provably the right one, the standard library (or ``rfc8785``) everywhere else.

- :func:`compact` is the text toolvet stores in its JSON columns (the engines' ``json_serializer``):
  any valid JSON text of the value is right, so orjson's own compact text is used. What orjson does
  not encode (integers beyond 64 bits, non-string keys, lone surrogates, subclasses, dates,
  dataclasses) takes ``json.dumps``, so it is stored or refused as before.
- :func:`plain_sorted` is the one fast path for canonical text: orjson's sorted text of a value
  when that text is provably both the standard encoder's sorted text and the RFC 8785 (JCS) text.
- :func:`sorted_compact` must be exactly ``json.dumps(value, sort_keys=True, separators=(",", ":"),
  ensure_ascii=False, allow_nan=False)``: definition digests are made from it, and a digest that
  changed with the encoder would make every stored tool look changed. It is :func:`plain_sorted`'s
  text where there is one, the standard encoder's else.
- :func:`loads` is ``json.loads``, exactly: orjson decodes (about twice as fast) unless the text may
  hold what orjson reads differently, and whatever orjson refuses goes to ``json.loads``.
"""

from __future__ import annotations

import json
import marshal
import re
from array import array
from itertools import accumulate
from typing import Any, Final

import orjson

__all__ = ["compact", "json_depth_exceeds", "loads", "plain_sorted", "sorted_compact"]

#: Everything but the bytes that shape JSON: brackets and the quotes around strings.
_NOT_STRUCTURE: Final = bytes(sorted(set(range(256)) - set(b'[]{}"')))
_NOT_BRACKETS: Final = bytes(sorted(set(range(256)) - set(b"[]{}")))
#: A string left with brackets in it, once everything but brackets and quotes is gone.
_BRACKETED_STRING: Final = re.compile(rb'"[^"]*"')
#: Opening brackets to 1, closing ones to 255 (-1 as a signed byte).
_STEPS: Final = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")


def json_depth_exceeds(body: bytes, limit: int) -> bool:
    """Whether ``body``, read as JSON text, nests arrays and objects deeper than ``limit``.

    Invalid JSON is not judged (the parser after this reports it); a body with no more brackets than
    the limit is answered without scanning it. The scan runs in C: the two escapes that could hide a
    string's end (``\\\\`` and ``\\"``) go first, then every byte but brackets and quotes; strings
    are what lies between quotes (most are empty by then), the brackets left become +1/-1 steps, and
    the deepest running sum is the depth."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    if b"\\" in body:
        body = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = body.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    if b'"' in structure:
        structure = _BRACKETED_STRING.sub(b"", structure)
    steps = array("b", structure.translate(_STEPS, _NOT_BRACKETS))
    return max(accumulate(steps), default=0) > limit


#: Digits to "0", all else kept: a run of 19 zeros is a number orjson may read as a float.
_DIGITS_TO_ZERO: Final = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER: Final = b"0" * 19


def loads(data: bytes | str) -> Any:
    """``json.loads(data)``, decoded by orjson where the result is the same.

    orjson differs from the standard decoder in what it accepts, never in what it makes of the rest
    but for one thing: an integer beyond 64 bits becomes a float. So a text holding 19 or more digits
    in a row (in a number or, harmlessly, a string) is read by ``json.loads``, as is any text orjson
    refuses (``NaN``, the infinities, lone surrogates, other encodings than UTF-8), which then
    decodes or fails exactly as before."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if _LONG_NUMBER not in raw.translate(_DIGITS_TO_ZERO):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    return json.loads(data)


# Anything but exact JSON types is refused by orjson with these, so it goes to json.dumps.
_STRICT: Final = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
# STRICT_INTEGER refuses exactly the integers RFC 8785 refuses (beyond +-(2**53 - 1)).
_PLAIN_OPTION: Final = _STRICT | orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER

# A float in compact JSON text is a number token, which starts the text or follows ":", "," or "[",
# whose first run of digits (after an optional "-") is followed by ".", "e" or "E" (orjson writes every
# float so). Translating digits to "0", those three separators to ":" and ".eE" to "." makes that one
# short pattern a literal-led search finds quickly. A string may hold the same ("x:1.5"): a false alarm
# only costs the slower encoder.
_FLOAT_SHAPE: Final = bytes.maketrans(b"0123456789,[eE", b"0000000000::..")
_FLOAT_TOKEN: Final = re.compile(rb":-?0+\.")
# UTF-8 lead bytes of the characters beyond the BMP.
_BEYOND_BMP: Final = re.compile(rb"[\xf0-\xf4]")


def _may_hold_float(text: bytes) -> bool:
    return _FLOAT_TOKEN.search(b":" + text.translate(_FLOAT_SHAPE)) is not None


def _orders_may_differ(text: bytes) -> bool:
    """True when two keys of ``text`` might sort apart in code-point and in UTF-16 order.

    The orders differ only between a character beyond the BMP (a surrogate pair in UTF-16, which
    sorts below U+E000) and one in U+E000-U+FFFF (UTF-8 lead byte EE or EF); a text lacking either
    kind sorts alike in both."""
    return not text.isascii() and (b"\xee" in text or b"\xef" in text) and _BEYOND_BMP.search(text) is not None


def _outer_nones(value: Any) -> int:
    """How many of ``value``'s own members (or items) are None; 1 for None itself."""
    if type(value) is dict:
        return sum(member is None for member in value.values())
    if type(value) is list:
        return sum(item is None for item in value)
    return int(value is None)


def _exact_json_types(value: Any, text: bytes) -> bool:
    """True when ``value``, which orjson wrote as ``text``, holds only exact JSON types and no NaN or
    infinity.

    orjson writes NaN and the infinities as ``null``, as it writes None. Each of those writes one
    ``null`` token and a string may hold more ``null``: so when the text holds no more ``null`` than
    the value's outer members are None (an absent title or output schema of a contract), no NaN can
    be in the value. Else the text must decode back to an equal value (NaN equals nothing).
    orjson also writes a UUID, an enum member and a ``Fragment``: ``marshal`` refuses those (it takes
    exact built-in types only, and of those orjson writes JSON's and tuples, which every encoder here
    writes as arrays), in a fraction of the time a decode takes.
    """
    if text.count(b"null") != _outer_nones(value):
        return bool(orjson.loads(text) == value)
    try:
        marshal.dumps(value)
    except ValueError:
        return False
    return True


_std_sorted = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode
# ASCII-escaped: a lone surrogate (which orjson refuses) must still make text a database can store.
_std_compact = json.JSONEncoder(separators=(",", ":")).encode


def compact(value: Any) -> str:
    """Compact JSON text of ``value`` (its key order kept), as toolvet's JSON columns store it."""
    try:
        text = orjson.dumps(value, option=_STRICT).decode()
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return _std_compact(value)
    # orjson writes NaN and the infinities as null; the standard encoder keeps them (as it always did).
    # A text with no more nulls than the value's own None members holds no NaN (_exact_json_types):
    # an audit entry or a call record with an absent member keeps orjson's text.
    if "null" in text and text.count("null") != _outer_nones(value):
        return _std_compact(value)
    return text


def plain_sorted(value: Any) -> bytes | None:
    """orjson's sorted compact UTF-8 text of ``value`` when it is, provably, both
    ``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)``
    and the RFC 8785 (JCS) text of ``value``; None when it may not be.

    The three encoders agree on null, true and false, integers (decimal; orjson refuses those JCS
    refuses), strings (each escapes exactly ``"``, ``\\`` and U+0000-U+001F, as ``\\b \\t \\n \\f \\r``
    or lower-case ``\\u00xx``, and writes everything else as it is), arrays, and objects with string
    keys in code-point order. They part on: floats (each spells some differently, ``1e-07``, ``1e-7``,
    ``100.0`` and ``100``), so a text that may hold one is refused; key order when the text holds
    both characters beyond the BMP and U+E000-U+FFFF (UTF-16 sorts those apart from code points);
    and whatever is not an exact JSON type. orjson refuses subclasses, non-string keys, lone
    surrogates and long integers; the types it knows beyond JSON's and NaN are found last
    (:func:`_exact_json_types`).
    """
    try:
        text = orjson.dumps(value, option=_PLAIN_OPTION)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return None
    if _may_hold_float(text) or _orders_may_differ(text) or not _exact_json_types(value, text):
        return None
    return text


def sorted_compact(value: Any) -> str:
    """Exactly ``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
    allow_nan=False)``, raising what it raises."""
    text = plain_sorted(value)
    return text.decode() if text is not None else _std_sorted(value)
