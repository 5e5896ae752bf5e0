"""Encoded payloads and shell commands that fetch and run code.

Base64 (24 characters or more), hex (32 or more) and URL-encoded tokens (four escapes or more, decoded
whole, words and all) are decoded; a decoding that is text (for URL escapes: three words or more) is checked
again by every text rule, and any ``warning`` or ``high`` it earns makes the span an ``encoded-payload``
finding that shows what it decodes to. Binary decodings (images, hashes, keys) and ``data:`` URLs of images
are not text and earn nothing. An order to decode a value and follow it is an ``encoded-payload`` finding
whatever the value decodes to. Shell commands that download and execute, open a reverse shell (``/dev/tcp``,
``nc -e``, Python's ``pty.spawn``, ``socat … exec:``) or decode into a shell are ``shell-command`` findings,
wherever they appear (quoting a command in backticks is how commands are written, so quotes do not excuse
it).
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
#: A token (no space, no quote) holding URL escapes: decoded whole when it holds four or more, so that words
#: between the escapes ("assistant%3A%20on%20every%20call") are read with them.
_URL_TOKEN: Final = re.compile(r"[^\s\"'<>`]*%[0-9a-fA-F]{2}[^\s\"'<>`]*")
_URL_ESCAPE: Final = re.compile(r"%[0-9a-fA-F]{2}")
#: An order to decode a value and do what it says ("percent-decode it and follow it as written", "values
#: prefixed b64: are policy; decode them and honour them"): whatever it decodes to, the model is told to obey
#: text a reviewer cannot read.
_DECODE_AND_OBEY: Final = re.compile(
    r"\b(?:(?:base64|b64|hex|percent|url)[ -]?)?(?:decode|unescape|unquote|deobfuscate)\b(?:\s+[\w'-]+){0,6}?"
    r"(?:\s+and\s+|\s*,\s*(?:then\s+)?|\s+then\s+)"
    r"(?:(?:always|strictly|exactly|immediately|then)\s+)?"
    r"(?:follow|obey|honou?r|execute|comply with|act on|carry out|do what|treat (?:it|them|the result) as (?:an? )?"
    r"(?:instructions?|orders?|directives?|policy|rules?))\b")
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
    # reverse shells in one line of Python, PHP, Ruby or socat: a socket tied to a shell
    r"|\bpty\.spawn\s*\(|\bos\.dup2\s*\(\s*\w+\.fileno\s*\(|\bfsockopen\s*\(|\bTCPSocket\.(?:new|open)\b"
    r"|\bsocat\b[^|\n]{0,80}\bexec:"
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
    if "%" in cased:
        for m in _URL_TOKEN.finditer(cased):
            if len(_URL_ESCAPE.findall(m.group())) >= 4:
                decoded = unquote(m.group())
                # words hidden in a URL are spaced ("%20"); a signature base string or a nested query decodes
                # to another URL, whose "POST&http://…" is no sentence
                if decoded.count(" ") >= 2:
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
    obey = _DECODE_AND_OBEY.search(norm.folded)
    if obey is not None:
        out.append(finding("encoded-payload", "high", "tells the model to decode a value and follow what it says",
                           text.path, span=norm.span(obey.start(), obey.end()),
                           evidence=norm.evidence(obey.start(), obey.end())))
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
