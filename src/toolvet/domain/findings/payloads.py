"""Encoded payloads and shell commands that fetch and run code.

Base64 (24 characters or more), hex (32 or more) and URL-encoded spans are decoded; a decoding that is
text is checked again by every text rule, and any ``warning`` or ``high`` it earns makes the span an
``encoded-payload`` finding that shows what it decodes to. Binary decodings (images, hashes, keys) and
``data:`` URLs of images are not text and earn nothing. Shell commands that download and execute, open a
reverse shell or decode into a shell are ``shell-command`` findings, wherever they appear (quoting a
command in backticks is how commands are written, so quotes do not excuse it).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import unquote

from toolvet.domain.findings.finding import finding, severity_rank
from toolvet.domain.findings.paraphrases_calls import SHELL_IN_WORDS
from toolvet.domain.findings.strings import Text
from toolvet.domain.findings.text import Normalised

_BASE64: Final = re.compile(r"(?<![A-Za-z0-9+/=_-])(?:[A-Za-z0-9+/]{4}){6,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?"
                            r"(?![A-Za-z0-9+/=_-])")
_HEX: Final = re.compile(r"(?<![0-9A-Za-z])(?:[0-9a-fA-F]{2}){16,}(?![0-9A-Za-z])")
_URL_ESCAPES: Final = re.compile(r"(?:%[0-9a-fA-F]{2}[^%\s]{0,2}){4,}")
_DATA_URL: Final = re.compile(r"data:[\w.+-]+/[\w.+-]+(?:;[\w=.+-]+)*;base64,$")

#: The same in words, with the address it fetches (:mod:`.paraphrases_calls`), read on the folded text.
_SHELL_IN_WORDS: Final = re.compile(SHELL_IN_WORDS)
_SHELL: Final = re.compile(
    r"\b(?:curl|wget|iwr|invoke-webrequest|invoke-restmethod|irm|fetch)\b[^|\n]{0,200}\|\s*(?:sudo\s+)?"
    r"(?:ba|z|da|k|fi)?sh\b|\b(?:curl|wget)\b[^;&|\n]{0,200}(?:-o|-O|>)\s*\S+\s*(?:&&|;)\s*(?:chmod|sh|bash|\./|/tmp/)"
    r"|/dev/tcp/|\bnc\b[^|\n]{0,40}\s-e\s|\bmkfifo\b|\bpowershell(?:\.exe)?\b[^|\n]{0,40}\s-(?:enc|encodedcommand|e|ec)\b"
    r"|\biex\s*\(|\bexec\s*\([^)\n]{0,80}(?:urlopen|requests\.get|urllib)|\beval\s*\([^)\n]{0,80}(?:atob|base64|urlopen"
    r"|fetch)|\bbase64\s+(?:-d|--decode|-D)\b[^|\n]{0,40}\|\s*(?:ba|z)?sh\b|\brm\s+-(?:rf|fr|r)\s+(?:~|/|\$home|\*)"
    r"|\bchmod\s+\+x\s+/tmp/\S+\s*(?:&&|;)\s*/tmp/"
    r"|\b(?:chmod|chown)\s+(?:-\w+\s+)*-\w*R\w*\s+(?:-\w+\s+)*\S+\s+(?:~|/|\$home)(?=[\s;&|`'\"/]|$)"
    # the same in words: "fetch https://… and pipe it to bash" ("pipe the output to jq" runs nothing)
    r"|\bpipe[sd]?\b(?:\s+[\w'-]+){0,3}?\s+(?:in)?to\s+(?:sudo\s+)?(?:(?:ba|z|da|k|fi)?sh|powershell|pwsh|iex)\b",
    re.IGNORECASE,
)

Recheck = Callable[[str, str], list[dict[str, Any]]]


def _text_of(raw: bytes) -> str | None:
    """``raw`` as text when it reads as text (UTF-8, or UTF-16LE as PowerShell encodes), else None."""
    for codec in ("utf-8", "utf-16-le"):
        try:
            decoded = raw.decode(codec)
        except UnicodeDecodeError:
            continue
        printable = sum(c.isprintable() or c in "\n\r\t" for c in decoded)
        if decoded and printable / len(decoded) > 0.9 and sum(c.isalpha() for c in decoded) >= len(decoded) / 5:
            return decoded
    return None


def _decodings(cased: str) -> list[tuple[int, int, str, str]]:
    out: list[tuple[int, int, str, str]] = []
    for m in _BASE64.finditer(cased):
        if _DATA_URL.search(cased, max(0, m.start() - 80), m.start()):
            continue
        try:
            raw = base64.b64decode(m.group(), validate=True)
        except (binascii.Error, ValueError):
            continue
        decoded = _text_of(raw)
        if decoded is not None:
            out.append((m.start(), m.end(), "base64", decoded))
    for m in _HEX.finditer(cased):
        decoded = _text_of(bytes.fromhex(m.group()))
        if decoded is not None:
            out.append((m.start(), m.end(), "hex", decoded))
    for m in _URL_ESCAPES.finditer(cased):
        decoded = unquote(m.group())
        if decoded != m.group():
            out.append((m.start(), m.end(), "URL-encoded", decoded))
    return out


def check(text: Text, norm: Normalised, recheck: Recheck, depth: int = 0) -> list[dict[str, Any]]:
    """Shell commands in the string, and encoded spans whose decoding earns a flagging finding."""
    out: list[dict[str, Any]] = []
    m = _SHELL.search(norm.cased)
    if m is not None:
        out.append(finding("shell-command", "high", "a shell command that fetches and runs code or opens a shell",
                           text.path, span=norm.span(m.start(), m.end()), evidence=norm.evidence(m.start(), m.end())))
    elif (words := _SHELL_IN_WORDS.search(norm.folded)) is not None:
        out.append(finding("shell-command", "high", "tells the model to fetch code from an address and run it",
                           text.path, span=norm.span(words.start(), words.end()),
                           evidence=norm.evidence(words.start(), words.end())))
    if depth == 0:
        for start, end, encoding, decoded in _decodings(norm.cased):
            inner = [f for f in recheck(decoded, text.path) if severity_rank(f.get("severity")) >= 1]
            if inner:
                codes = ", ".join(sorted({f["code"] for f in inner}))
                out.append(finding("encoded-payload", "high", f"a {encoding} span decodes to text that earns: {codes}",
                                   text.path, span=norm.span(start, end), evidence=norm.evidence(start, end),
                                   decoded=decoded[:160]))
                break
    return out
