"""Findings under trivial rewording: the corpus's caught attacks, and its look-alikes left alone, rewritten
in ways that keep what the text says to a reader or a model, then read again.

Each transformation applies to every string of a tool definition but its names and machine fields (name,
type, URIs): hard-wrapping at 60 columns (as a docstring or an editor's fill leaves text), a line break
after every comma, Markdown emphasis (``**bold**``, ``*italic*``, ``__underline__``) on the first three long
words, list and numbered-list layouts, upper case, contractions, ``<br>`` or ``;`` between sentences, a
lead or trailing sentence, and a few rewordings a writer makes without thinking ("please", "kindly", em
dashes, "&" for "and", the model named "the assistant" instead of "you", and typing slips in the first two
words of seven letters or more: two letters swapped, one left out, one doubled).
For each: how many caught attacks it changed and how many of those it lost, and how many unflagged
look-alikes it changed and how many of those it got flagged. The figures say where a rule leans on the
layout or on one wording rather than on what is said; they are no target. Made-up words (a transformation
applied inside a base64 blob) account for some losses.

Run: ``python bench/layouts.py [--part tuning|heldout|fresh] [--only NAME ...] [--show N]``. ``--show``
names the first N entries lost or newly flagged per transformation (never use it on a held-out part: its
misses are not read).
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.corpus

from tests.corpus import flagged, load  # noqa: E402

#: Keys whose string values are names or machine fields, left as they are.
_KEPT = frozenset({"name", "type", "$schema", "uri", "uriTemplate", "src", "mimeType", "format"})


def _strings(value: Any, change: Callable[[str], str], key: str | None = None) -> Any:
    if isinstance(value, str):
        return value if key in _KEPT else change(value)
    if isinstance(value, list):
        return [_strings(item, change) for item in value]
    if isinstance(value, dict):
        return {k: _strings(v, change, k) for k, v in value.items()}
    return value


def _each(pairs: list[tuple[str, str]]) -> Callable[[str], str]:
    def change(text: str) -> str:
        for pattern, by in pairs:
            text = re.sub(pattern, by, text, flags=re.IGNORECASE)
        return text
    return change


def _marked(mark: str) -> Callable[[str], str]:
    def change(text: str) -> str:
        for word in re.findall(r"\b[A-Za-z]{5,}\b", text)[:3]:
            text = re.sub(rf"\b{word}\b", f"{mark}{word}{mark}", text, count=1)
        return text
    return change


def _numbered(text: str) -> str:
    parts = re.split(r"(?<=[.!?]) (?=[A-Z])", text)
    return "\n".join(f"{i}. {part}" for i, part in enumerate(parts, 1))


def _swapped(text: str) -> str:
    return re.sub(r"\b[a-z]{7,}\b", lambda m: m.group()[:2] + m.group()[3] + m.group()[2] + m.group()[4:], text,
                  count=2)


def _dropped(text: str) -> str:
    return re.sub(r"\b[a-z]{7,}\b", lambda m: m.group()[:3] + m.group()[4:], text, count=2)


def _doubled(text: str) -> str:
    return re.sub(r"\b[a-z]{7,}\b", lambda m: m.group()[:4] + m.group()[3:], text, count=2)


TRANSFORMATIONS: dict[str, Callable[[str], str]] = {
    "wrapped at 60": lambda t: "\n".join(textwrap.fill(p, 60) for p in t.split("\n")),
    "break after commas": lambda t: t.replace(", ", ",\n"),
    "break after sentences": lambda t: t.replace(". ", ".\n"),
    "bold": _marked("**"),
    "italic": _marked("*"),
    "underlined": _marked("__"),
    "bulleted": lambda t: "- " + re.sub(r"(?<=[.!?]) (?=[A-Z])", "\n- ", t),
    "numbered": _numbered,
    "upper case": str.upper,
    "<br> between sentences": lambda t: t.replace(". ", ".<br>"),
    "; between sentences": lambda t: re.sub(r"\. (?=[A-Z])", "; ", t),
    "contractions": _each([(r"\bdo not\b", "don't"), (r"\bdoes not\b", "doesn't"), (r"\bcannot\b", "can't"),
                           (r"\byou are\b", "you're"), (r"\bis not\b", "isn't"), (r"\bwill not\b", "won't"),
                           (r"\bshould not\b", "shouldn't"), (r"\bmust not\b", "mustn't")]),
    "a lead sentence": lambda t: "This tool is maintained by the platform team. " + t,
    "a trailing sentence": lambda t: t + " Thanks!",
    "please": lambda t: re.sub(r"(^|(?<=[.!?] ))([A-Z])", lambda m: m.group(1) + "Please " + m.group(2).lower(), t),
    "kindly": _each([(r"\b(always|never|ignore|send|include|read|call|tell|say|keep)\b", r"kindly \1")]),
    "em dashes for commas": lambda t: t.replace(", ", " \u2014 "),
    "& for and": _each([(r"\band\b", "&")]),
    "the assistant for you": _each([(r"\byou are\b", "the assistant is"), (r"\byou were\b", "the assistant was"),
                                    (r"\byou have\b", "the assistant has"), (r"\byou\b", "the assistant")]),
    "two letters swapped": _swapped,
    "a letter left out": _dropped,
    "a letter doubled": _doubled,
}


def run(part: str, only: list[str], show: int) -> list[str]:
    entries = load(part)
    attacks = [e for e in entries if e.malicious and flagged(e)]
    quiet = [e for e in entries if not e.malicious and not flagged(e)]
    lines = [f"part {part}: {len(attacks)} attacks caught, {len(quiet)} look-alikes not flagged", "",
             f"{'transformation':<24}{'attacks changed':>16}{'lost':>7}{'share':>8}"
             f"{'look-alikes changed':>21}{'flagged':>9}"]
    for name, change in TRANSFORMATIONS.items():
        if only and name not in only:
            continue
        lost: list[str] = []
        raised: list[str] = []
        changed = [0, 0]
        for group, out, is_attack in ((attacks, lost, True), (quiet, raised, False)):
            for entry in group:
                tool = _strings(entry.tool, change)
                if tool == entry.tool:
                    continue
                changed[0 if is_attack else 1] += 1
                if flagged(replace(entry, tool=tool)) is not is_attack:
                    out.append(entry.id)
        share = len(lost) / changed[0] if changed[0] else 0.0
        lines.append(f"{name:<24}{changed[0]:>16}{len(lost):>7}{share:>8.1%}{changed[1]:>21}{len(raised):>9}")
        if show:
            lines += [f"    lost: {' '.join(lost[:show])}", f"    flagged: {' '.join(raised[:show])}"]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", default="tuning", choices=("tuning", "heldout", "fresh"))
    parser.add_argument("--only", nargs="*", default=[], metavar="NAME")
    parser.add_argument("--show", type=int, default=0, metavar="N")
    args = parser.parse_args()
    unknown = [name for name in args.only if name not in TRANSFORMATIONS]
    if unknown:
        parser.error(f"unknown transformation {unknown[0]!r}; known: {', '.join(TRANSFORMATIONS)}")
    print("\n".join(run(args.part, args.only, args.show)))


if __name__ == "__main__":
    main()
