"""Near names: which stored name keys lie within one edit of another key, so a copy whose name is changed by
a letter (``create_isue``, ``read_fi1e``, ``create_issues``, ``craete_issue``) is compared with the tool it
imitates.

The copy check (``shadowing.cross_server_findings``) decides with ``rapidfuzz``'s ratio; this only proposes
whom to compare with: the keys at an optimal-string-alignment distance of 1 (one insertion, deletion,
substitution or swap of neighbours; ``rapidfuzz.distance.OSA``). To find them without comparing with every
key, each key of length ``n`` is filed under its first and its last ``h(n) = (n - 1) // 2`` characters: one
edit leaves one of the two untouched (its position is either past the first ``h`` characters or before
the last ``h``, as ``2h < n``), and the other key's length is ``n - 1``, ``n`` or ``n + 1``, so a lookup
reads at most six lists and checks each key in them.

Measured against a deletion neighbourhood (every key filed under each one-character deletion of it, the
idea behind SymSpell and symspellpy) on the 50,000 keys of ``bench/farm.py --distinct-names``: that filed
20 strings a key, took 14 µs a key to file and about 115 MB; this takes 1.1 µs to file a key, 8.6 µs a
lookup (the farm's names share long parts, so its lists are full) and about 10 MB. symspellpy itself
took 74 µs to file and 16 µs to look up a key on 20,000 tool-like names (docs/findings.md).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Final

#: Keys shorter than this have no near keys: among short names one letter makes another word
#: (``list``, ``lost``, ``last``), and a copy meant to pass for one keeps it whole.
MIN_LENGTH: Final = 5
#: At most this many near keys per lookup (the first in sorted order): a registry crowded with names a
#: letter apart (``tool_1`` .. ``tool_9``) does not turn one pass into a comparison with each of them.
MAX_NEAR: Final = 4
#: A lookup checks at most this many keys of each list it reads: the earliest filed, which a copy
#: imitates (as a pass compares a tool with its name's earliest tools). Names that share a long part
#: (``archive_alerts_s12x12`` .. ``archive_alerts_s99x99``) fill one list per part, and checking all of
#: it for every new name cost 26 µs a name on 50,000 such names.
PER_LIST: Final = 16


@lru_cache(maxsize=1)
def _osa() -> Any:
    # Imported on the first lookup, as the copy check imports rapidfuzz.
    from rapidfuzz.distance import OSA

    return OSA


def _ends(key: str, length: int) -> tuple[tuple[int, str], tuple[int, str]]:
    """The two places a key of ``length`` is filed under (its length with its first h characters, minus
    its length with its last h), for ``key`` of that length or one more or less."""
    h = (length - 1) // 2
    return (length, key[:h]), (-length, key[len(key) - h:])


class NearNames:
    """The keys seen so far, filed for :meth:`near`. Keys are only added: a key whose tools are all gone
    stays, and proposes candidates that the candidates' query then does not find."""

    __slots__ = ("_answers", "_filed", "_keys")

    def __init__(self) -> None:
        self._keys: set[str] = set()
        # A key's length and first h characters, or minus its length and last h -> the keys filed there.
        self._filed: dict[tuple[int, str], list[str]] = {}
        # The answers of :meth:`near` since a key was last added (a fleet's passes ask for the same keys).
        self._answers: dict[str, list[str]] = {}

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def add(self, key: str) -> None:
        """File ``key`` (once)."""
        if key in self._keys:
            return
        self._keys.add(key)
        self._answers.clear()
        if len(key) >= MIN_LENGTH:
            for place in _ends(key, len(key)):
                self._filed.setdefault(place, []).append(key)

    def near(self, key: str) -> list[str]:
        """The known keys other than ``key`` within one edit of it, sorted, at most MAX_NEAR (the list is
        shared by later calls with ``key`` until a key is added: not to be changed)."""
        if len(key) < MIN_LENGTH:
            return []
        answer = self._answers.get(key)
        if answer is not None:
            return answer
        distance = _osa().distance
        filed = self._filed
        found: set[str] = set()
        for length in (len(key) - 1, len(key), len(key) + 1):
            if length < MIN_LENGTH:
                continue
            for place in _ends(key, length):
                held = filed.get(place)
                if held is None:
                    continue
                for other in held[:PER_LIST]:
                    if other != key and other not in found and distance(key, other, score_cutoff=1) <= 1:
                        found.add(other)
        answer = self._answers[key] = sorted(found)[:MAX_NEAR]
        return answer
