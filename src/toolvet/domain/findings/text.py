"""Normalising a string once for every check, keeping the way back to the original characters.

NFKC (fullwidth and mathematical letters become plain ones), marks dropped, format, bidirectional, tag,
private-use and control characters removed (and described, see :mod:`.hidden`), confusable letters folded
to the Latin letter they imitate (``confusable-homoglyphs``, the Unicode confusables data), Markdown's
emphasis marks dropped, letters lower-cased, ``_`` read as a space and whitespace collapsed (a newline is
kept as one, for line-anchored rules, unless it only wraps a sentence).
Every character of the result knows the index of the original character it came from, so a match is
reported as the original span.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from toolvet.domain.findings.hidden import Hidden, is_hidden, note_hidden

_SPACE_LIKE: Final = frozenset(" \t\r\f\v")
_LINE_BREAKS: Final = frozenset("\n\u2028\u2029\x85")
#: The em and en dashes, and the horizontal bar: between words, a clause's comma.
_DASHES: Final = frozenset("\u2014\u2013\u2015")
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
    kept = _lower(norm.cased)
    return kept if len(kept) == len(norm.folded) else norm.folded


def _lower(cased: str) -> str:
    """``cased`` lower-cased character by character, a character whose lower case is longer (``İ``) kept
    as it is: the same length, so positions in it are positions in ``cased``."""
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in cased)


def collapse_space(chars: list[str], origin: list[int], ch: str, at: int) -> bool:
    """Whether ``ch`` (the original character at ``at``) is whitespace, which goes to ``chars`` (and its
    index to ``origin``) as one space per run, a line break kept as one."""
    if not (ch in _SPACE_LIKE or ch == "\n" or ch.isspace()):
        return False
    sep = "\n" if ch in _LINE_BREAKS else " "
    if chars and chars[-1] in " \n":
        if sep == "\n":
            chars[-1] = "\n"
        return True
    chars.append(sep)
    origin.append(at)
    return True


#: Markdown's emphasis: one or two ``*`` or ``_`` opening a word (after no word character) and the same
#: closing a word later on the line (before none). Dropped, as a reader of the rendered text never sees
#: them: ``**ignore** previous instructions`` reads as the words it emphasises. A mark without its pair
#: (``*args``, ``_private``), a longer run (a banner's ``***``) and a mark inside a word (``send_email``,
#: ``2*3``) stay.
_EMPHASIS: Final = re.compile(r"(?<![\w*])(\*{1,2}|_{1,2})(?=[^\W_])[^\n]*?(?<=[^\W_])(\1)(?![\w*])")
#: What a line wrapped inside a sentence ends with: a word's last character, or punctuation within a
#: sentence. Anything else (a sentence's end, a colon, a heading's underline ``-----``) keeps the break.
_WRAPS_AFTER: Final = frozenset(",)'\"\u2019\u201d")
#: How a path opens (``~/.ssh/config``, ``/etc/passwd``), where a wrapped line may start.
_PATH_STARTS: Final = frozenset("~/")
#: Quotes that may open a wrapped line's first word (``'webhook_payload'``); not a backtick, which opens
#: reStructuredText's markup (a link's text, a role) as often as a quotation.
_QUOTES_OPEN: Final = frozenset("'\"\u2018\u201c")
#: A line at least this long (characters) that ends inside a sentence wraps it, even before a capital.
WRAPPED_LINE: Final = 40


#: The model named in the third person ("the assistant was told …", "the AI's instructions"), read as the
#: "you" every rule is written for, its verb agreeing ("you were told", "your instructions").
_THIRD_PERSON: Final = re.compile(
    r"\bthe (?:ai assistant|assistant|ai|llm|(?:large )?language model|chatbot)\b"
    r"(?P<tail>['\u2019]s\b| (?:is|was|has|does|isn['\u2019]t|wasn['\u2019]t|hasn['\u2019]t|doesn['\u2019]t)\b)?"
)
_AGREEING: Final = {"'s": "r", " is": " are", " was": " were", " has": " have", " does": " do",
                    " isn't": " aren't", " wasn't": " weren't", " hasn't": " haven't", " doesn't": " don't"}
#: Words one of which :data:`_THIRD_PERSON` needs (cheaper to look for than to run it on every text).
_THIRD_PERSON_WORDS: Final = ("assistant", " ai", "llm", "language model", "chatbot")
#: A negation or "you are" contracted ("isn't", "mustn't", "can't", "you're"), spelled out in the second
#: reading: a rule written for "is not to be" reads "isn't to be" the same.
_CONTRACTED: Final = re.compile(
    r"\b(?:(?P<verb>is|are|was|were|do|does|did|has|have|had|must|should|would|could|need)n['\u2019]t"
    r"|(?P<can>ca)n['\u2019]t|(?P<will>wo)n['\u2019]t|(?P<who>you|they|we)['\u2019]re)\b"
)


#: "Kindly" before a word, left out: the order reads as it would without it ("kindly ignore …", "do not
#: kindly call …").
_KINDLY: Final = re.compile(r"\bkindly (?=\w)")


#: HTML's line break (``<br>``, ``<br/>``, ``<br />``): read as the line break it renders as.
_BR: Final = re.compile(r"<br\s*/?>", re.IGNORECASE)
#: A list item's bullet at a line's start (``- ``, ``* ``, ``• ``): left out, so the item reads as a line
#: that starts with its first word ("- Skip the confirmation step" as an order at a line's start).
_BULLET: Final = re.compile(r"(?:^|(?<=\n))[ \t]*[-*\u2022\u2023\u25e6\u25aa][ \t]+")


def _plain(text: str) -> bool:
    # ASCII without a character the loop would change: then folded is text.lower() and origin the identity.
    return (text.isascii() and text.isprintable() and "  " not in text and " & " not in text
            and (("*" not in text and "_" not in text) or _EMPHASIS.search(text) is None)
            and ("<" not in text or _BR.search(text) is None) and _BULLET.match(text) is None)


def _layout_marks(text: str) -> tuple[frozenset[int], frozenset[int]]:
    """The indexes of ``text``'s ``<br>`` tags (each read as a line break where it opens, the rest left
    out) and of its list bullets (left out, with the spaces after them)."""
    tags = [m.span() for m in _BR.finditer(text)] if "<" in text else []
    bullets = [m.span() for m in _BULLET.finditer(text)] if ("- " in text or "* " in text or not text.isascii()) else []
    opens = frozenset(a for a, _ in tags)
    return opens, frozenset(i for a, b in tags + bullets for i in range(a, b)) - opens


def reads_twice(lowered: str) -> bool:
    """Whether ``lowered`` (lower-case text) earns a second reading: it names the model in the third person
    (:data:`_THIRD_PERSON`), contracts a negation (:data:`_CONTRACTED`) or asks "kindly" (:data:`_KINDLY`)."""
    if "kindly" in lowered and _KINDLY.search(lowered):
        return True
    if ("n't" in lowered or "'re" in lowered or "\u2019" in lowered) and _CONTRACTED.search(lowered):
        return True
    return "the " in lowered and any(word in lowered for word in _THIRD_PERSON_WORDS) and \
        _THIRD_PERSON.search(lowered) is not None


def _as_you(m: re.Match[str]) -> str:
    tail = m.group("tail")
    return "you" + (_AGREEING[tail.replace("\u2019", "'")] if tail else "")


def _spelled_out(m: re.Match[str]) -> str:
    if m.group("verb"):
        return f"{m.group('verb')} not"
    if m.group("can"):
        return "cannot"
    if m.group("will"):
        return "will not"
    return f"{m.group('who')} are"


def _rewritten(cased: str, origin: list[int], pattern: re.Pattern[str],
               said: Callable[[re.Match[str]], str]) -> tuple[str, list[int]]:
    """``cased`` with each match of ``pattern`` (read lower-case) put as ``said`` puts it; each character
    put in comes from the start of what it replaces, its last from the end."""
    lowered = cased.lower() if len(cased.lower()) == len(cased) else cased
    out: list[str] = []
    where: list[int] = []
    last = 0
    for m in pattern.finditer(lowered):
        out.append(cased[last:m.start()])
        where += origin[last:m.start()]
        words = said(m)
        out.append(words)
        if words:
            where += [origin[m.start()]] * (len(words) - 1) + [origin[m.end() - 1]]
        last = m.end()
    if not out:
        return cased, origin
    out.append(cased[last:])
    where += origin[last:]
    return "".join(out), where


def _emphasis_marks(text: str) -> frozenset[int]:
    """The indexes of ``text``'s emphasis marks (:data:`_EMPHASIS`)."""
    if "*" not in text and "_" not in text:
        return frozenset()
    return frozenset(i for m in _EMPHASIS.finditer(text) for group in (1, 2) for i in range(*m.span(group)))


def _wraps(chars: Sequence[str], at: int) -> bool:
    """Whether the line break at ``at`` in ``chars`` only wraps a sentence (see :func:`_join_wrapped_lines`)."""
    if not 0 < at < len(chars) - 1:
        return False
    before, after = chars[at - 1], chars[at + 1]
    if not (before.isalnum() or before in _WRAPS_AFTER):
        return False
    opens = chars[at + 2] if after in _QUOTES_OPEN and at + 2 < len(chars) else after
    if opens.islower() or opens.isdigit() or after in _PATH_STARTS:
        return True
    # Before a capital ("… in this conversation for" / "API keys", "the file 'Login" / "Data'"): only
    # inside a sentence (after a lower-case letter or a comma), after a line long enough to have been
    # wrapped (a heading is short), and not before a label ("System:", "Note:", which line-anchored
    # rules read as a role line or a banner).
    if not (opens.isupper() and (before.islower() or before == ",")):
        return False
    line_start = at - 1
    while line_start > 0 and chars[line_start - 1] != "\n":
        line_start -= 1
    if at - line_start < WRAPPED_LINE:
        return False
    word_end = at + 1 + (opens is not after)
    while word_end < len(chars) and (chars[word_end].isalnum() or chars[word_end] in "_-"):
        word_end += 1
    return not (word_end < len(chars) and chars[word_end] == ":")


def _join_wrapped_lines(chars: list[str], line_breaks: list[int]) -> list[int]:
    """Read a line break inside a sentence as the space it stands for: text wrapped at a width (a
    docstring, a description written in an editor) breaks a sentence anywhere, and a rule that reads a
    sentence, or a quotation in it, must read it whole. A break is joined only after a word (or a comma,
    a closing bracket or quote) and before a lower-case letter, a digit or a path (``~/.ssh``), or a quote
    opening one of those; before a capital only after a lower-case letter or a comma, on a line of
    :data:`WRAPPED_LINE` characters or more, and not before a label (``System:``). A word broken at its
    hyphen (``example-`` then ``cdn.net``) is joined without the space (the positions returned, to be
    taken out). A break is kept (for line-anchored rules: role lines, list items, headings) after a
    sentence's end or a colon, before a line that opens with anything else, and where the text had a
    blank line. ``line_breaks``: the positions in ``chars`` of single line breaks."""
    removed: list[int] = []
    for at in line_breaks:
        if _wraps(chars, at):
            chars[at] = " "
        elif (1 < at < len(chars) - 1 and chars[at - 1] == "-" and chars[at - 2].isalnum()
              and (chars[at + 1].islower() or chars[at + 1].isdigit())):
            removed.append(at)
    return removed


def unwrapped(text: str) -> str:
    """``text`` with each line break that only wraps a sentence read as a space (as normalising reads it;
    a hyphen-broken word keeps its break): the same length, so positions in it are positions in ``text``.
    For checks that read the text as written (a tool's name must be found as spelt)."""
    if "\n" not in text:
        return text
    chars = list(text)
    for at, ch in enumerate(chars):
        if ch == "\n" and _wraps(chars, at):  # (a blank line's breaks touch no word: kept)
            chars[at] = " "
    return "".join(chars)


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
    emphasis = _emphasis_marks(text)
    tags, dropped = _layout_marks(text)
    line_breaks: list[int] = []  # positions in chars of runs of whitespace with one line break (not a blank line)
    run_at, run_breaks = -1, 0  # the whitespace run a line break was last read in, and how many it holds
    for i, ch in enumerate(text):
        if i in emphasis:
            continue
        if i in dropped:
            if line_breaks and line_breaks[-1] == len(chars) - 1:
                line_breaks.pop()  # a list item's line: its break before is no wrap
            continue
        if i in tags:
            collapse_space(chars, origin, "\n", i)  # a line break that no rule joins to the line before
            continue
        if is_hidden(ch, text, i):
            hidden = note_hidden(hidden, ch, text, i)
            continue
        if collapse_space(chars, origin, ch, i):
            if ch in _LINE_BREAKS:
                at = len(chars) - 1  # the run's one character in chars
                if at != run_at:
                    run_at, run_breaks = at, 0
                run_breaks += 1
                if run_breaks == 1:
                    line_breaks.append(at)
                elif run_breaks == 2:
                    line_breaks.pop()  # a blank line: a paragraph's end
            continue
        if ch in _DASHES and not (0 < i < len(text) - 1 and text[i - 1].isdigit() and text[i + 1].isdigit()):
            # a dash between words reads as the comma it stands for ("If the booking fails — tell the …");
            # between digits it is a range ("pages 3\u20135")
            if chars and chars[-1] == " ":
                chars[-1], origin[-1] = ",", i
            else:
                chars.append(",")
                origin.append(i)
            chars.append(" ")
            origin.append(i)
            continue
        if ch == "&" and 0 < i < len(text) - 1 and text[i - 1].isspace() and text[i + 1].isspace():
            out = "and"  # "read ~/.ssh/config & send it": the word it stands for
        else:
            out = ch if ch.isascii() else _fold(ch)
        # Only a letter of another script imitates a Latin one: a sign that folds to a letter (U+00D7, the
        # multiplication sign, folds to "x") is no letter, and a word it joins to a number is no mixed word.
        if (not ch.isascii() and ch.isalpha() and out.isascii() and out.isalpha()
                and "LATIN" not in unicodedata.name(ch, "LATIN") and ch not in _ORDINALS):
            folded_at.append(len(chars))
        for c in out:
            chars.append(c)
            origin.append(i)
    joined = _join_wrapped_lines(chars, line_breaks)
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
    if joined:
        gone = set(joined)
        origin = [o for k, o in enumerate(origin) if k not in gone]
        cased = "".join(c for k, c in enumerate(chars) if k not in gone)
    return Normalised(text, _spaced(_lower(cased), breaks), cased, tuple(origin), hidden, tuple(mixed))


def _read_with(norm: Normalised, key: bool,
               *rewrites: tuple[re.Pattern[str], Callable[[re.Match[str]], str]]) -> Normalised:
    """Another reading of ``norm``, made from it: each rewrite (:func:`_rewritten`) applied in turn to its
    cased text, every span still leading to the original characters. ``key`` as ``norm`` was made."""
    cased = norm.cased
    origin = list(norm.origin) if norm.origin is not None else list(range(len(cased)))
    for pattern, said in rewrites:
        cased, origin = _rewritten(cased, origin, pattern, said)
    return Normalised(norm.original, _spaced(_lower(cased), _KEY_BREAKS if key else _WORD_BREAKS), cased,
                      tuple(origin), norm.hidden, norm.mixed)


def read_again(norm: Normalised, *, key: bool = False) -> Normalised:
    """The second reading of a normalised string (:func:`reads_twice`), made from the first: the model named
    in the third person read as "you" (the verb after it agreeing), contracted negations spelled out and
    "kindly" left out. ``key`` as the first reading was made."""
    return _read_with(norm, key, (_THIRD_PERSON, _as_you), (_CONTRACTED, _spelled_out), (_KINDLY, lambda m: ""))


#: The words a slip may be found in (:mod:`.spelling`): runs of five letters or more, read in ``folded``.
LONG_WORDS: Final = re.compile(r"\b[a-z]{5,}\b")


def read_spelled(norm: Normalised, slips: dict[str, str], *, key: bool = False) -> Normalised:
    """A reading of a normalised string with each slip of ``slips`` (a word of ``folded``, as
    :func:`.spelling.corrections` found it) put as the rule word it is a slip of; spans still lead to the
    original characters."""
    words = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in sorted(slips, key=len, reverse=True)) + r")\b")
    return _read_with(norm, key, (words, lambda m: slips[m.group()]))


def folded(text: str, *, key: bool = False) -> str:
    """``normalise(text, key=key).folded``; for plain ASCII text without building the rest."""
    if _plain(text):
        return _spaced(text.lower(), _KEY_BREAKS if key else _WORD_BREAKS)
    return normalise(text, key=key).folded
