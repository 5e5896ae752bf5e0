"""Reading text written in other scripts and languages, for the rules of :mod:`.languages` and
:mod:`.languages_harvesting`: where a match sits (its sentence, whether it is quoted or labelled as an
example) and the *native* form of a string.

The native form is for Russian, Chinese, Japanese and Korean: NFKC, lower-cased, hidden characters
removed, whitespace collapsed, and nothing folded to Latin. The fold of :mod:`.text` would turn Cyrillic
into Latin look-alikes and take the voicing marks off Japanese kana.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from toolvet.domain.findings.context import about_attacks, label_reaches, mentioned
from toolvet.domain.findings.hidden import is_hidden
from toolvet.domain.findings.text import collapse_space

#: A character of a script the native form is made for: Cyrillic, kana, CJK ideographs, Hangul.
NATIVE_SCRIPT: Final = re.compile(r"[\u0400-\u04ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
                                   r"\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")

_QUOTES: Final = re.compile("|".join(
    f"{re.escape(a)}[^{re.escape(b)}\\n]{{1,300}}{re.escape(b)}"
    for a, b in ('""', "\u201c\u201d", "\u201e\u201c", "\u00ab\u00bb", "\u2039\u203a", "\u300c\u300d",
                 "\u300e\u300f", "\u300a\u300b", "\u3008\u3009", "\uff02\uff02", "``")))
_LABELS: Final = re.compile(
    r"(?:例如|比如|诸如|諸如|譬如|例子|示例|例：|例:|例えば|たとえば|などの|のような|예를\s*들어|예시|예:|예컨대|например|к\s+примеру"
    r"|такие\s+как|por\s+ejemplo|tales\s+como|frases\s+como|par\s+exemple|telles?\s+que|tels\s+que|phrases\s+comme"
    r"|zum\s+beispiel|z\.\s?b\.|beispielsweise|wie\s+etwa|satze\s+wie|por\s+exemplo|tais\s+como|ad\s+esempio"
    r"|per\s+esempio|p\.\s?ej\.|p\.\s?ex\.|ad\s+es\.|frasi\s+come|detect\w*|rileva\w*|erkenn\w*|detecta\w*|检测|檢測|识别|識別|検出|検知|탐지|감지"
    r"|обнаружива\w*|выявля\w*|attaquant\w*|atacante\w*|angreifer\w*|attaccante\w*|攻击者|攻擊者|攻撃者|공격자"
    r"|злоумышленник\w*"
    # "may write" / "may say", as the English labels read them
    r"|peut\s+(?:dire|ecrire)|pourrait\s+(?:dire|ecrire)|puede\s+(?:decir|escribir)|podria\s+(?:decir|escribir)"
    r"|kann\s+(?:sagen|schreiben)|konnte\s+(?:sagen|schreiben)|pode\s+(?:dizer|escrever)|puo\s+(?:dire|scrivere)"
    r"|может\s+(?:написать|сказать)|可能会写|可能會寫|可能会说|可能會說|と書く|라고\s*쓸)")
def alternation(words: str) -> str:
    """A regular-expression alternation of ``words`` (``|``-separated phrases, a space meaning any
    whitespace), longest first so that a longer phrase wins over its prefix."""
    phrases = sorted((w.strip() for w in words.split("|") if w.strip()), key=len, reverse=True)
    return "(?:" + "|".join(r"\s+".join(re.escape(p) for p in phrase.split()) for phrase in phrases) + ")"


def screen_words(*lists: str, avoid: frozenset[str] = frozenset()) -> str:
    """The screen's words for ``|``-separated phrases: the longest word of each, which every match of the
    phrase holds; a word in ``avoid`` (an everyday word) only when the phrase has no other."""
    heads = set()
    for words in lists:
        for phrase in words.split("|"):
            tokens = re.findall(r"[a-z0-9]+", phrase)
            rare = [t for t in tokens if t not in avoid] or tokens
            if rare:
                heads.add(max(rare, key=len))
    return " ".join(sorted(heads))


_SENTENCE_STOPS: Final = re.compile(r"[。！？!?;；\n]|\.(?:\s|$)")


def sentence_start(text: str, at: int) -> int:
    start = 0
    for m in _SENTENCE_STOPS.finditer(text, 0, at):
        start = m.end()
    return start


def sentence_end(text: str, at: int) -> int:
    m = _SENTENCE_STOPS.search(text, at)
    return m.end() if m else len(text)


def talked_about(text: str, start: int, end: int, *, about: bool = True) -> bool:
    """Quoted, or right after a label (any of the languages here, or English); with ``about``, only in a string
    that speaks of attacks (``context.about_attacks``): a poisoned description that quotes its order is not
    talking about it. An example address needs no such words (``about=False``)."""
    if about and not about_attacks(text):
        return False
    if any(m.start() < start and end <= m.end() for m in _QUOTES.finditer(text, max(0, start - 300),
                                                                          min(len(text), end + 300))):
        return True
    return any(label_reaches(text, m.end(), start)
               for m in _LABELS.finditer(text, sentence_start(text, start), start)) or mentioned(text, start, end)


@dataclass(frozen=True, slots=True)
class Native:
    text: str
    origin: tuple[int, ...]

    def span(self, start: int, end: int) -> tuple[int, int]:
        return self.origin[start], self.origin[end - 1] + 1


@lru_cache(maxsize=256)  # the phrase rules and languages_harvesting read the same string
def native(original: str) -> Native:
    """``original`` as the native-script rules read it: NFKC, lower-cased (``ё`` read as ``е``), hidden
    characters removed, runs of whitespace as one space (a line break kept as one), and for every
    character the index of the original character it came from."""
    chars: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(original):
        if is_hidden(ch, original, i) or collapse_space(chars, origin, ch, i):
            continue
        for c in unicodedata.normalize("NFKC", ch).lower().replace("ё", "е"):
            chars.append(c)
            origin.append(i)
    return Native("".join(chars), tuple(origin))
