"""Normalising a string once for every check, keeping the way back to the original characters.

NFKC (fullwidth and mathematical letters become plain ones), marks dropped, format, bidirectional, tag,
private-use and control characters removed (and described, see :mod:`.hidden`), confusable letters folded
to the Latin letter they imitate (``confusable-homoglyphs``, the Unicode confusables data), letters lower-
cased, ``_`` read as a space and whitespace collapsed (a newline is kept as one, for line-anchored rules).
Every character of the result knows the index of the original character it came from, so a match is
reported as the original span.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from toolvet.domain.findings.hidden import Hidden, is_hidden, note_hidden

_SPACE_LIKE: Final = frozenset(" \t\r\f\v")
#: The ordinal indicators ("nº 3", "1ª"): Latin-script letters, though their names do not say so.
_ORDINALS: Final = frozenset("\u00aa\u00ba")
#: What reads as a space in a word (``_``) and in a key (also ``-`` and ``.``). Replaced with
#: ``str.replace``: ``str.translate`` with a table looks every character up (about 1.3 µs for a
#: 150-character description, against 0.1 µs).
_WORD_BREAKS: Final = ("_",)
_KEY_BREAKS: Final = ("_", "-", ".")


def _spaced(text: str, breaks: tuple[str, ...]) -> str:
    for mark in breaks:
        text = text.replace(mark, " ")
    return text


@lru_cache(maxsize=1)
def _confusables() -> Any:
    # Imported on the first non-ASCII letter: loading the confusables data costs about 30 ms, which a
    # process that only ever sees ASCII definitions (most discovery writers) need not pay.
    from confusable_homoglyphs import confusables

    return confusables


@lru_cache(maxsize=8192)
def _fold(ch: str) -> str:
    """What a non-ASCII character reads as: NFKD, without combining marks, confusables folded to ASCII."""
    out = []
    for c in unicodedata.normalize("NFKC", ch):
        if c.isascii():
            out.append(c)
            continue
        base = "".join(b for b in unicodedata.normalize("NFKD", c) if not unicodedata.combining(b))
        if base and base.isascii():
            out.append(base)
            continue
        # Lower-case first: a capital may imitate another letter than its small form does (Greek capital
        # iota reads as "l", iota as "i"), and the checks read lower-case text.
        c = c.lower() if len(c.lower()) == 1 else c
        found = _confusables().is_confusable(c, greedy=True, preferred_aliases=["latin"])
        glyphs = [h["c"] for h in found[0]["homoglyphs"]] if found else []
        ascii_glyphs = [g for g in glyphs if g.isascii() and g.isalpha()] or [g for g in glyphs if g.isascii()]
        out.append(ascii_glyphs[0] if ascii_glyphs else (base or c))
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Normalised:
    """A string as the checks read it.

    ``folded`` is lower-case; ``cased`` is the same characters before lower-casing (for case-sensitive
    formats: base64, key prefixes). ``origin[i]`` is the index in ``original`` that ``folded[i]`` came from
    (``origin`` is None when they are the same, the common plain-ASCII case).
    """

    original: str
    folded: str
    cased: str
    origin: tuple[int, ...] | None
    hidden: Hidden | None
    #: Indexes (in ``original``) of non-ASCII letters folded to an ASCII letter inside a word that also has
    #: ASCII letters: a mixed-script word, the shape of a homoglyph attack.
    mixed: tuple[int, ...] = ()

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of ``folded[start:end]``."""
        if self.origin is None:
            return start, end
        if start >= len(self.origin):
            return len(self.original), len(self.original)
        last = self.origin[end - 1] + 1 if end > start else self.origin[start]
        return self.origin[start], last

    def evidence(self, start: int, end: int) -> str:
        a, b = self.span(start, end)
        return self.original[a:b]


def with_underscores(norm: Normalised) -> str:
    """``norm.folded`` with ``_`` kept: the same characters at the same places (``folded`` only reads ``_`` as a
    space), unless lower-casing changed a length, then ``folded`` itself. For rules that need tool names
    whole (``send_email``)."""
    if "_" not in norm.cased:
        return norm.folded
    kept = "".join(c.lower() if len(c.lower()) == 1 else c for c in norm.cased)
    return kept if len(kept) == len(norm.folded) else norm.folded


def collapse_space(chars: list[str], origin: list[int], ch: str, at: int) -> bool:
    """Whether ``ch`` (the original character at ``at``) is whitespace, which goes to ``chars`` (and its
    index to ``origin``) as one space per run, a line break kept as one."""
    if not (ch in _SPACE_LIKE or ch == "\n" or ch.isspace()):
        return False
    sep = "\n" if ch in "\n\u2028\u2029\x85" else " "
    if chars and chars[-1] in " \n":
        if sep == "\n":
            chars[-1] = "\n"
        return True
    chars.append(sep)
    origin.append(at)
    return True


def _plain(text: str) -> bool:
    # ASCII without a character the loop would change: then folded is text.lower() and origin the identity.
    return text.isascii() and text.isprintable() and "  " not in text


def normalise(text: str, *, key: bool = False) -> Normalised:
    """Normalise ``text``. ``_`` reads as a space in ``folded`` (``do_not_tell``); in a key (a property
    name) ``-`` and ``.`` do too. ``cased`` keeps them (key formats and base64 need them)."""
    breaks = _KEY_BREAKS if key else _WORD_BREAKS
    if _plain(text):
        return Normalised(text, _spaced(text.lower(), breaks), text, None, None)
    chars: list[str] = []
    origin: list[int] = []
    hidden: Hidden | None = None
    mixed: list[int] = []
    folded_at: list[int] = []  # output positions of non-ASCII letters folded to ASCII
    for i, ch in enumerate(text):
        if is_hidden(ch, text, i):
            hidden = note_hidden(hidden, ch, text, i)
            continue
        if collapse_space(chars, origin, ch, i):
            continue
        out = ch if ch.isascii() else _fold(ch)
        # Only a letter of another script imitates a Latin one: a sign that folds to a letter (U+00D7, the
        # multiplication sign, folds to "x") is no letter, and a word it joins to a number is no mixed word.
        if (not ch.isascii() and ch.isalpha() and out.isascii() and out.isalpha()
                and "LATIN" not in unicodedata.name(ch, "LATIN") and ch not in _ORDINALS):
            folded_at.append(len(chars))
        for c in out:
            chars.append(c)
            origin.append(i)
    cased = "".join(chars)
    if folded_at:
        for at in folded_at:
            a = b = at
            while a > 0 and cased[a - 1].isalpha():
                a -= 1
            while b + 1 < len(cased) and cased[b + 1].isalpha():
                b += 1
            word = cased[a:b + 1]
            if any(text[origin[j]].isascii() and text[origin[j]].isalpha()
                   for j in range(a, b + 1)) and word.isascii():
                mixed.append(origin[at])
    lowered = _spaced("".join(c.lower() if len(c.lower()) == 1 else c for c in cased), breaks)
    return Normalised(text, lowered, cased, tuple(origin), hidden, tuple(mixed))


def folded(text: str, *, key: bool = False) -> str:
    """``normalise(text, key=key).folded``; for plain ASCII text without building the rest."""
    if _plain(text):
        return _spaced(text.lower(), _KEY_BREAKS if key else _WORD_BREAKS)
    return normalise(text, key=key).folded
