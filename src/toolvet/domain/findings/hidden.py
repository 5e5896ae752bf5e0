"""Characters a reader does not see: format, bidirectional, tag, private-use and control characters.

They are removed from the text every check reads and described by one ``hidden-characters`` finding per
string. Two uses are ordinary and not reported: a zero-width (non-)joiner between letters of a script that
shapes with it (Persian, Indic scripts) or inside an emoji sequence, and a left-to-right or right-to-left
mark next to a right-to-left letter.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Final

_JOINERS: Final = frozenset("\u200c\u200d")
_MARKS: Final = frozenset("\u200e\u200f\u061c")
#: Embeddings, overrides and isolates: they reorder what is displayed.
_BIDI: Final = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_TAGS: Final = range(0xE0000, 0xE0080)


def is_hidden(ch: str, text: str, i: int) -> bool:
    """True when ``ch`` (at ``text[i]``) is removed before the checks read the text."""
    if ch.isprintable() or ch in "\n\r\t":
        return False
    cat = unicodedata.category(ch)
    return cat in ("Cf", "Cc", "Co") or ord(ch) in _TAGS


def _shaping_neighbour(ch: str | None) -> bool:
    # A letter outside ASCII (a script that may join) or a symbol (emoji sequences).
    return ch is not None and not ch.isascii() and (ch.isalpha() or unicodedata.category(ch) in ("So", "Sk", "Mn"))


def _rtl(ch: str | None) -> bool:
    return ch is not None and unicodedata.bidirectional(ch) in ("R", "AL")


@dataclass(slots=True)
class Hidden:
    """What was removed from one string."""

    codepoints: set[int] = field(default_factory=set)
    tags: list[str] = field(default_factory=list)
    first: int = -1
    last: int = -1
    bidi: bool = False

    @property
    def tag_text(self) -> str:
        return "".join(self.tags)


def note_hidden(hidden: Hidden | None, ch: str, text: str, i: int) -> Hidden | None:
    """``hidden`` with ``text[i]`` recorded, unless it is one of the ordinary uses (see the module)."""
    before = text[i - 1] if i > 0 else None
    after = text[i + 1] if i + 1 < len(text) else None
    if ch in _JOINERS and (_shaping_neighbour(before) or _shaping_neighbour(after)):
        return hidden
    if ch in _MARKS and (_rtl(before) or _rtl(after)):
        return hidden
    if hidden is None:
        hidden = Hidden(first=i)
    hidden.codepoints.add(ord(ch))
    hidden.last = i
    if ord(ch) in _TAGS:
        inner = ord(ch) - 0xE0000
        if 0x20 <= inner < 0x7F:
            hidden.tags.append(chr(inner))
    if ch in _BIDI:
        hidden.bidi = True
    return hidden
