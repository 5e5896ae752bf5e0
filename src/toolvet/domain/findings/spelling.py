"""Typing slips in rule words: a word that is a rule word with two neighbouring letters swapped, a letter
left out or a letter doubled (``instrutcions``, ``previos``, ``credentialls``) is read as that word, in a
further reading of the text (``static.check_text``) and by the screen.

A model reads through a slip; a rule written for ``previous instructions`` does not, so one swapped pair of
letters in two words was enough to walk around most rules (``bench/layouts.py``: 21.8 % of the corpus's
caught attacks lost, 22.8 % to a letter left out or doubled). A word ``t`` is read as a rule word ``w`` when
all of this holds:

- ``w`` is a rule word (:func:`rule_words`) of :data:`MIN_LENGTH` letters or more, and ``t`` is ``w`` with two
  different neighbouring letters swapped, one letter left out or one letter doubled (:func:`slips_of`), but
  not at its end: ``webhooks`` and ``instruct`` are other forms of ``webhook`` and ``instruction``;
- ``t`` is no rule word itself and no English word: ``trial`` is no slip for ``trail``, ``stored`` none for
  ``stores``. The English words that are slips of a rule word (:func:`english_slips`) are kept in
  ``spelling_english.txt`` beside this module, taken from the word list of ``pyspellchecker`` (a well-kept
  spelling library; a test dependency only, so a process loads a few thousand words, not its 160,000);
- of several rule words ``t`` slips from, the one of its own length (a swap) is taken, then the first in
  sorted order.

A wrong letter typed in place of another (``instructiobs``) is not read: it is how a look-alike name is
made (``read_fi1e``), which the cross-server checks judge, and it would put many more words within reach.

The rule words are those of the screen's groups and the letters-only words of every rule's expression
(and of what tells a quoted example from an order, :mod:`.context`), kept in ``spelling_rule_words.txt``.
Both files are written by ``python tests/domain/test_findings_spelling.py``, whose test fails when a rule's
words change and the files were not written again.
"""

from __future__ import annotations

import dataclasses
import re
import string
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any, Final

#: Rule words shorter than this are never read from a slip (in a short word one slip makes another word).
MIN_LENGTH: Final = 6
RULE_WORDS_FILE: Final = Path(__file__).with_name("spelling_rule_words.txt")
ENGLISH_FILE: Final = Path(__file__).with_name("spelling_english.txt")

#: A run of letters, and the ``?`` that may make its last letter optional (``instructions?``).
_LETTERS: Final = re.compile(r"[a-z]+\??")
#: A regular expression's escapes (``\b``, ``\s``, ``\w``): taken out before its words are read.
_ESCAPE: Final = re.compile(r"\\[A-Za-z]")


def _words_file(path: Path) -> frozenset[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return frozenset(line for line in lines if line and not line.startswith("#"))


@lru_cache(maxsize=1)
def rule_words() -> frozenset[str]:
    """The rule words of :data:`MIN_LENGTH` letters or more (``spelling_rule_words.txt``)."""
    return _words_file(RULE_WORDS_FILE)


@lru_cache(maxsize=1)
def english_slips() -> frozenset[str]:
    """The English words that are a slip of a rule word (``spelling_english.txt``): never read as one."""
    return _words_file(ENGLISH_FILE)


def slips_of(word: str) -> set[str]:
    """``word`` with two different neighbours swapped, a letter left out or a letter doubled, the change not
    at its end (what leaves a prefix of ``word``, or makes one of it, is another form of the word)."""
    out: set[str] = set()
    for i in range(len(word)):
        out.add(word[:i] + word[i + 1:])
        out.add(word[:i] + word[i] + word[i:])
        if i + 1 < len(word) and word[i] != word[i + 1]:
            out.add(word[:i] + word[i + 1] + word[i] + word[i + 2:])
    return {s for s in out if not (s.startswith(word) or word.startswith(s))}


def _undone(slip: str) -> Iterator[str]:
    """Every word ``slip`` may be a slip of: its neighbours swapped back, a letter put in, a doubled one
    taken out."""
    for i in range(len(slip)):
        if i + 1 < len(slip):
            if slip[i] != slip[i + 1]:
                yield slip[:i] + slip[i + 1] + slip[i] + slip[i + 2:]
            else:
                yield slip[:i] + slip[i + 1:]
        for letter in string.ascii_lowercase:
            yield slip[:i] + letter + slip[i:]


@lru_cache(maxsize=65536)
def correction(word: str) -> str | None:
    """The rule word ``word`` (lower-case letters) is a slip of, or None."""
    words = rule_words()
    if len(word) < MIN_LENGTH - 1 or word in words or word in english_slips():
        return None
    found = {w for w in _undone(word) if w in words and word in slips_of(w)}
    if not found:
        return None
    return min(found, key=lambda w: (len(w) != len(word), w))


def corrections(words: Iterable[str]) -> dict[str, str]:
    """The slips among ``words`` (lower-case letters), each with the rule word it is read as."""
    out: dict[str, str] = {}
    for word in words:
        found = correction(word)
        if found is not None:
            out[word] = found
    return out


def screen_slips(screen_words: frozenset[str]) -> dict[str, frozenset[str]]:
    """Per slip of a word of ``screen_words`` (the screen's), every such word it is a slip of: the screen
    finds them among a text's words as it finds the words themselves (built once, by the screen)."""
    english, words = english_slips(), rule_words()
    out: dict[str, set[str]] = {}
    for word in screen_words:
        if len(word) >= MIN_LENGTH:
            for slip in slips_of(word):
                if slip not in words and slip not in english and slip not in screen_words:
                    out.setdefault(slip, set()).add(word)
    return {slip: frozenset(found) for slip, found in out.items()}


# ------------------------------------------------------------------ writing the word files (tests)

def _rule_modules() -> list[ModuleType]:
    from toolvet.domain.findings import (
        context,
        harvesting,
        languages,
        languages_calls,
        languages_harvesting,
        paraphrases,
        paraphrases_calls,
        paraphrases_concealment,
        paraphrases_policy,
        paraphrases_secrecy,
        payloads,
        phrases,
        screen,
    )

    return [context, phrases, paraphrases, paraphrases_calls, paraphrases_concealment, paraphrases_policy,
            paraphrases_secrecy, harvesting, languages, languages_calls, languages_harvesting, payloads, screen]


def _sources(value: Any, depth: int = 0) -> Iterator[str]:
    """The strings held in ``value``: itself, a compiled expression's source, the members of a collection
    and the fields of a rule (a dataclass), a few levels deep."""
    if depth > 4:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, re.Pattern):
        if isinstance(value.pattern, str):
            yield value.pattern
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _sources(key, depth + 1)
            yield from _sources(item, depth + 1)
    elif isinstance(value, tuple | list | set | frozenset):
        for item in value:
            yield from _sources(item, depth + 1)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from _sources(getattr(value, field.name), depth + 1)


def gather_rule_words() -> list[str]:
    """The rule words as the rule modules hold them now: the words of :data:`MIN_LENGTH` letters or more of
    their module-level strings, expressions and rules (docstrings and functions left out), sorted."""
    found: set[str] = set()
    for module in _rule_modules():
        for name, value in vars(module).items():
            if name.startswith("__") or isinstance(value, ModuleType) or (
                    callable(value) and not isinstance(value, re.Pattern) and not dataclasses.is_dataclass(value)):
                continue
            for source in _sources(value):
                for run in _LETTERS.findall(_ESCAPE.sub(" ", source).lower()):
                    found.add(run.rstrip("?"))
                    if run.endswith("?"):
                        found.add(run[:-2])
    return sorted(w for w in found if len(w) >= MIN_LENGTH)
