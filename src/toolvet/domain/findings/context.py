"""Where in its text a match sits: inside quotes, or after words that label it as an example.

A scanner listing the phrases it detects, or documentation explaining an attack, quotes the attack; a
poisoned description says it. A match that is quoted, or that follows a label ("for example", "such as",
"phrases like", "detects") in the same sentence, is reported as ``info``, not flagged.
"""

from __future__ import annotations

import re
from typing import Final

_QUOTED: Final = re.compile(r"""(?<![a-z0-9])(?:"[^"\n]{1,300}"|'[^'\n]{1,300}'(?![a-z0-9])|`[^`\n]{1,300}`"""
                            r"""|\u201c[^\u201d\n]{1,300}\u201d|\u2018[^\u2019\n]{1,300}\u2019"
                            r"|\u00ab[^\u00bb\n]{1,300}\u00bb)""")
_LABEL: Final = re.compile(
    r"(?<![./\w-])(?:e\.? ?g\b|for example|for instance|such as|examples?|like|phrases?|patterns?|detects?"
    r"|detected|detecting"
    r"|detection|flags?|flagged|attackers?|might (?:say|write)|may (?:say|write)|would (?:say|write)|known as"
    # "a technique called …" labels; "whenever list_files is called" is a verb
    r"|(?<!\bis )(?<!\bare )(?<!\bwas )(?<!\bwere )(?<!\bbe )(?<!\bbeen )(?<!\bgets )(?<!\bget )called"
    r"|red flags?|quotes?|quoting|mentions?|warns? about|recogni[sz]e|looks? for|strings? like|samples?)\b"
)
#: A sentence ends at ``.``, ``!``, ``?`` or ``;`` before a space or before markup (``quote.<!-- …``: the
#: comment is not part of the sentence before it), and at a line break.
_SENTENCE_END: Final = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)[.!?;](?:\s|(?=<))|\n")


def sentence_start(text: str, at: int) -> int:
    """Where the sentence holding ``text[at]`` starts."""
    start = 0
    # One character past ``at`` is searched so that a stop right before the markup at ``at`` is seen.
    for m in _SENTENCE_END.finditer(text, 0, min(len(text), at + 1)):
        if m.end() <= at:
            start = m.end()
    return start


def sentence_end(text: str, at: int) -> int:
    m = _SENTENCE_END.search(text, at)
    return m.start() + 1 if m else len(text)


def quoted(text: str, start: int, end: int) -> bool:
    """True when ``text[start:end]`` lies inside a pair of quotes. Quotes right after ``=`` hold an argument's
    value (``path='/etc/passwd'``, ``mode="…"``): that is how a call is written, not a quotation."""
    lo = max(0, start - 300)
    return any(m.start() < start and end <= m.end() and not text[max(0, m.start() - 8):m.start()].rstrip().endswith("=")
               for m in _QUOTED.finditer(text, lo, min(len(text), end + 300)))


def labelled(text: str, start: int) -> bool:
    """True when a label word precedes ``start`` in its sentence."""
    return _LABEL.search(text, sentence_start(text, start), start) is not None


def mentioned(text: str, start: int, end: int) -> bool:
    """Quoted or labelled: the text talks about the match rather than saying it."""
    return quoted(text, start, end) or labelled(text, start)
