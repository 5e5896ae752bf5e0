"""JSON text, fast: orjson where its output is exactly what toolvet needs, the standard library else.

Encoding a tool definition is most of what a discovery pass spends per new tool (each is encoded for
its digest, its fingerprint, its stored columns and its history row). ``json.dumps`` takes about
20 µs for a 1 KB definition, orjson about 2 µs; orjson is used where its text is provably the right
one, the standard library everywhere else.

- :func:`compact` is the text toolvet stores in its JSON columns (the engines' ``json_serializer``):
  any valid JSON text of the value is right, so orjson's own compact text is used. What orjson does
  not encode (integers beyond 64 bits, non-string keys, lone surrogates, subclasses, dates,
  dataclasses) takes ``json.dumps``, so it is stored or refused as before.
- :func:`sorted_compact` must be exactly ``json.dumps(value, sort_keys=True, separators=(",", ":"),
  ensure_ascii=False, allow_nan=False)``: definition digests are made from it, and a digest that
  changed with the encoder would make every stored tool look changed. For a value a JSON decoder
  made (exact ``dict``/``list``/``str``/``int``/``float``/``bool``/``None``), orjson's sorted text is
  that text except where a float is printed (orjson spells some differently: ``1e-7`` for ``1e-07``):
  a text that may hold a float is made again by ``json.dumps``. Keys
  sort alike (UTF-8 byte order is code-point order) and strings are escaped alike (checked over every
  escape in the tests).
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

import orjson

__all__ = ["compact", "json_depth_exceeds", "sorted_compact", "sorted_compact_plain", "sorted_part"]

_STRING_OR_BRACKET: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_OPEN: Final = frozenset(b"[{")
_CLOSE: Final = frozenset(b"]}")


def json_depth_exceeds(body: bytes, limit: int) -> bool:
    """Whether ``body``, read as JSON text, nests arrays and objects deeper than ``limit``.

    Invalid JSON is not judged (the parser after this reports it); a body with no more brackets than
    the limit is answered without scanning it."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(body):
        token = match.group()
        if len(token) != 1:
            continue  # a string
        if token[0] in _OPEN:
            depth += 1
            if depth > limit:
                return True
        elif token[0] in _CLOSE:
            depth -= 1
    return False


# Anything but exact JSON types is refused by orjson with these, so it goes to json.dumps.
_STRICT: Final = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
_SORTED_OPTION: Final = _STRICT | orjson.OPT_SORT_KEYS

# A number in compact JSON text starts the text or follows ":", "," or "["; a float's first run of digits
# is always followed by ".", "e" or "E". A digit followed by one of those is found by a fast search (a
# sentence ending "server 3." in a description is one); each such place is a float only if its run of
# digits (and sign) starts the text or follows one of those three characters. A string may still hold
# one ("x:1.5"): a false alarm only costs the standard encoder.
_DIGIT_THEN_FLOAT_CHAR: Final = re.compile("[0-9][.eE]")


def _may_hold_float(text: str) -> bool:
    for match in _DIGIT_THEN_FLOAT_CHAR.finditer(text):
        start = match.start()
        while start > 0 and "0" <= text[start - 1] <= "9":
            start -= 1
        if start > 0 and text[start - 1] == "-":
            start -= 1
        if start == 0 or text[start - 1] in ":,[":
            return True
    return False


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
    return _std_compact(value) if "null" in text else text


def sorted_compact(value: Any, *, json_decoded: bool = False, float_free: bool = False) -> str:
    """Exactly ``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
    allow_nan=False)``, raising what it raises. ``json_decoded`` says ``value`` holds exact JSON types
    only (as a JSON decoder makes them), which lets orjson make the text; ``float_free``: see
    :func:`sorted_compact_plain`."""
    if json_decoded:
        text, _ = sorted_compact_plain(value, float_free=float_free)
        return text
    return _std_sorted(value)


def sorted_compact_plain(value: Any, *, float_free: bool = False) -> tuple[str, bool]:
    """:func:`sorted_compact` of a JSON-decoded ``value``, and whether it is *plain*: no float, no
    integer beyond +-(2**53 - 1), no character beyond the BMP. A plain value's sorted text is also its
    RFC 8785 (JCS) text, and so is that of any part of it (see ``domain.fingerprint``).
    ``float_free`` says the decoder saw no float in it (nor NaN/Infinity): its text is not searched."""
    try:
        # STRICT_INTEGER refuses exactly the integers JCS refuses: those go to the standard encoder.
        text = orjson.dumps(value, option=_SORTED_OPTION | orjson.OPT_STRICT_INTEGER).decode()
    except TypeError:
        return _std_sorted(value), False
    if not float_free and _may_hold_float(text):
        return _std_sorted(value), False
    if not float_free and "null" in text:
        # orjson writes NaN and the infinities as null, which json.dumps refuses (allow_nan=False):
        # let it see the value (it raises for those, and writes exactly this text otherwise).
        _std_sorted(value)
    return text, text.isascii() or max(text) <= "\uffff"


def sorted_part(value: Any) -> str:
    """The sorted compact text of a part of a plain value (see :func:`sorted_compact_plain`)."""
    return orjson.dumps(value, option=_SORTED_OPTION).decode()
