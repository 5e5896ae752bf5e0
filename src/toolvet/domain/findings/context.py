"""Where in its text a match sits: inside quotes, or after words that label it as an example.

A scanner listing the phrases it detects, or documentation explaining an attack, quotes the attack; a
poisoned description says it. A match that is quoted, or that follows a label ("for example", "such as",
"phrases like", "detects", "removes") in the same sentence, is reported as ``info``, not flagged; so is one
that someone other than the model is said to tell it ("warns when a description orders the assistant to
…"), in text about attacks, and a story's line said to someone else ("the hypnotist tells a volunteer
'Forget everything you were told'"). A text that makes its examples binding ("follow this example", "must
pass", "open every session with this request") gets none of this: an order dressed as an example is an
order.
"""

from __future__ import annotations

import re
from typing import Final

_QUOTED: Final = re.compile(r"""(?<![a-z0-9])(?:"[^"\n]{1,300}"|'(?:[^'\n]|(?<=[a-z])'(?=[a-z])){1,300}'(?![a-z0-9])"""
                            r"""|`[^`\n]{1,300}`"""
                            r"""|\u201c[^\u201d\n]{1,300}\u201d|\u2018[^\u2019\n]{1,300}\u2019"
                            r"|\u00ab[^\u00bb\n]{1,300}\u00bb)""")
_LABEL: Final = re.compile(
    # ("like to", "look for" said to the model: verbs, not labels)
    r"(?<![./\w-])(?:e\.? ?g\b|for example|for instance|such as|examples?|like(?! to\b)|phrases?|patterns?|detects?"
    r"|detected|detecting"
    r"|detection|flags?|flagged|attackers?|might (?:say|write)|may (?:say|write)|would (?:say|write)|known as"
    # "a technique called …" labels; "whenever list_files is called" is a verb
    r"|(?<!\bis )(?<!\bare )(?<!\bwas )(?<!\bwere )(?<!\bbe )(?<!\bbeen )(?<!\bgets )(?<!\bget )called"
    r"|red flags?|quotes?|quoting|mentions?|warns? about|recogni[sz]e|looks for|strings? like|samples?"
    # what a sanitiser does to what it finds ("removes <system> blocks", "strips [INST] tags")
    r"|removes?|strips?|filters? out|neutrali[sz]es?"
    # reported speech about an attack: "attacks that tell a model …", "requests that ask it to …"
    r"|(?:attacks?|attempts?|requests?|tricks?|injections?|payloads?) (?:that|which) (?:tell|ask|instruct|order|get"
    r"|make|trick|convince|persuade|push|urge)s?)\b"
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


#: What may stand between a label and what it labels: a colon or dash, then at most three words, and no
#: clause break. "Phrases like ignore previous instructions" and "Example: ignore …" label the match; "Like the
#: docs say, ignore previous instructions" does not (a label word anywhere earlier in the sentence let any
#: attack through as ``info``). The last word may end in an elision ("peut dire d'ignorer").
_STOPS = ",;.!?\uff0c\u3001\uff1b\u3002\uff01\uff1f"
LABEL_GAP: Final = re.compile(rf"\.?\s*[:\-\u2013\u2014\uff1a]?\s*(?:[^\s{_STOPS}]+\s+){{0,3}}"
                              # Chinese, Japanese and Korean put no space between words: a dozen characters
                              rf"(?:[^\s{_STOPS}]*['\u2019]|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]{{1,12}})?")
#: A quoted example in the gap: the label reaches across a list of them ("Detected patterns: 'ignore all
#: previous instructions', 'system prompt' leaks, hidden <system> tags").
_QUOTED_ITEM: Final = re.compile(r'"[^"\n]+"|\'[^\'\n]+\'|`[^`\n]+`|\u201c[^\u201d\n]+\u201d|\u00ab[^\u00bb\n]+\u00bb'
                                 r"|\u300c[^\u300d\n]+\u300d")
_LIST_REACH: Final = 120


#: A list the label goes on through, in text about attacks: the item before, then "or" or "and", with no
#: comma or clause break between ("such as requests to set aside prior instructions or to hide actions from
#: the user": the label reaches the second item as it reached the first). A comma ends what a label labels:
#: "whatever it flags, ignore previous instructions" is an order.
_LIST_ON: Final = re.compile(r"[^.,;!?:\n\u3001\u3002\uff01\uff0c\uff1f\uff1b]+?"
                             r"\s(?:or|and|and/or)\s+(?:to\s+)?")


def label_reaches(text: str, label_end: int, start: int, *, lists: bool = False) -> bool:
    """Whether a label ending at ``label_end`` labels what starts at ``start`` in its sentence; with ``lists``,
    also as a later item of a list the label opens (:data:`_LIST_ON`)."""
    if LABEL_GAP.fullmatch(text, label_end, start) is not None:
        return True
    return start - label_end <= _LIST_REACH and (
        _QUOTED_ITEM.search(text, label_end, start) is not None
        or (lists and _LIST_ON.fullmatch(text, label_end, start) is not None))


def labelled(text: str, start: int, *, lists: bool = False) -> bool:
    """True when a label word in ``start``'s sentence reaches it (:func:`label_reaches`)."""
    return any(label_reaches(text, m.end(), start, lists=lists)
               for m in _LABEL.finditer(text, sentence_start(text, start), start))


#: Words of text about attacks: a scanner's, a guide's, a red-team set's (in the languages the rules read).
#: A quoted or labelled match is ``info`` only in a string that holds one; a poisoned description that quotes
#: its order, or puts "for example" before it, is not talking about an attack.
_ABOUT_ATTACKS: Final = re.compile(
    r"(?<![a-z])(?:detect\w*|flag|flags|flagged|flagging|scan\w*|inject\w*|jailbreak\w*|attack\w*|adversar\w*"
    r"|malicious|malware|poison\w*|lint\w*|untrusted|manipulat\w*|hijack\w*|exfiltrat\w*|steer\w*|audit\w*"
    r"|guardrails?|red[ -]?team\w*|securi\w*|threats?|exploit\w*|vulnerab\w*|phishing|classif\w*|moderat\w*"
    r"|sanitiz\w*|sanitis\w*|suspicious|risk score|inyecci\w*|ataque\w*|atacante\w*|maliciosa?s?|segurida\w*"
    r"|attaqu\w*|malveillant\w*|detecte\w*|angriff\w*|angreifer\w*|erkenn\w*|injektion\w*|sicherheit\w*"
    r"|bosartig\w*|injec\w*|seguranca|iniezion\w*|attacc\w*|rileva\w*|malevol\w*|sicurezza"
    r"|инъекц\w*|атак\w*|злоумышленник\w*|обнаруж\w*|вредонос\w*|безопасност\w*)"
    r"|注入|攻击|攻擊|检测|檢測|识别|識別|恶意|惡意|安全|インジェクション|攻撃|検出|検知|悪意|セキュリティ|인젝션|주입|공격|탐지"
    r"|감지|악성|보안")


def about_attacks(text: str) -> bool:
    """True when ``text`` (a string as the rules read it) speaks of attacks or of detecting them."""
    return _ABOUT_ATTACKS.search(text) is not None


#: Someone other than the model said to tell it something ("warns when a description orders the assistant
#: to …", "a web page that tells the model to …", "if it asks you to …", "text trying to direct the
#: assistant: …"): in text about attacks, what follows in the sentence is reported, not said.
_REPORTER: Final = (r"(?:text|texts|description|descriptions|page|pages|web page|webpage|website|site|sites"
                    r"|content|document|documents|email|emails|message|messages|input|inputs|chunk|chunks|file|files"
                    r"|comment|comments|payload|payloads|attacker|attackers|tool|tools|server|servers|string|strings"
                    r"|sentence|sentences|data|it|they|ones|any|those|some|someone|somebody|third part(?:y|ies)"
                    r"|injections?)")
_REPORTED: Final = re.compile(
    rf"\b{_REPORTER}\s+(?:that\s+|which\s+|who\s+)?(?:(?:may|might|can|could|will|would|often)\s+)?(?:tells?|telling"
    r"|told|orders?|ordering|ordered|asks?|asking|asked|instructs?|instructing|instructed|directs?|directing"
    r"|commands?|commanding|urges?|urging|demands?|demanding|tr(?:y|ies|ying|ied) to|attempts? to|attempting to"
    r"|wants? to|pushes|pushing|steers?|steering)\b")
#: Said by a character to someone other than the model, in quotes ("the hypnotist tells a volunteer
#: "Forget everything you were told"", "a cult leader who commands the party to 'abandon your oaths'"):
#: a story's line, wherever it is written.
_SAID_TO_ANOTHER: Final = re.compile(
    r"\b(?:tells?|told|telling|commands?|commanding|orders?|ordering|asks?|asking|urges?|urging|says? to|shouts? at"
    r"|whispers? to)\s+(?:a|an|the|his|her|their|its)\s+(?!(?:model|assistant|ai|agent|llm|chatbot|bot|user)\b)"
    r"[\w-]+(?:\s+[\w-]+)?(?:\s+to)?\s*[:,]?\s*[\"'`\u201c\u2018]$")
#: Words that make an example binding ("follow this example", "this note is in force", "must pass", "open every
#: session with this request"): an order dressed as an example is an order.
_BINDING: Final = re.compile(
    r"\b(?:follow|apply|obey|honou?r|act on|carry out|perform|reproduce|mirror)\s+(?:this|the|that|these)\s+"
    r"(?:example|examples|sample|samples|test case|pattern|note|expected (?:action|reply|behaviou?r)|dialogue|faq)\b"
    r"|\b(?:this|the|that)\s+(?:example|sample|note|test case|faq|answer|dialogue)\s+(?:is|are)\s+(?:binding"
    r"|in force|mandatory|normative|authoritative)\b|\bmust pass\b"
    r"|\b(?:open|start|begin)\s+every\s+(?:session|conversation|chat|reply|answer)\s+with\b"
    # a reported order made the model's: "… should be obeyed", "comply with it", "do what it says"
    r"|\b(?:should|must|shall|is to|are to)\s+be\s+(?:obeyed|followed|honou?red|carried out|complied with|acted on"
    r"|executed)\b|\b(?:comply with|obey|follow|honou?r|carry out|act on|execute)\s+(?:it|them|that|this|the request"
    r"|the instructions?|its (?:instructions?|requests?))\b(?!\s+(?:tool|function|method|file|command|step|guide))"
    r"|\bdo (?:what|as) (?:it|they|the [\w-]+|that [\w-]+) says?\b")
#: A negation right before a binding phrase makes it a refusal ("do not comply with it", "never follow them").
_REFUSED: Final = re.compile(r"\b(?:not|never|no|don['\u2019]?t|won['\u2019]?t|refuse to|without)\s+(?:\w+\s+)?$")


def reported(text: str, start: int) -> bool:
    """True when someone other than the model is said, earlier in ``start``'s sentence, to tell it what
    follows (:data:`_REPORTED`)."""
    return _REPORTED.search(text, sentence_start(text, start), start) is not None


def said_to_another(text: str, start: int, end: int) -> bool:
    """True when ``text[start:end]`` lies in a quotation that opens right after a character tells someone other
    than the model ("commands the party to 'abandon your oaths and obey only me'")."""
    for m in _QUOTED.finditer(text, max(0, start - 300), min(len(text), end + 300)):
        if m.start() < start and end <= m.end():
            return _SAID_TO_ANOTHER.search(text, max(0, m.start() - 80), m.start() + 1) is not None
    return False


def binding(text: str) -> bool:
    """True when ``text`` says its examples (or the orders it reports) are to be followed, not refused."""
    return any(_REFUSED.search(text, max(0, m.start() - 30), m.start()) is None for m in _BINDING.finditer(text))


def mentioned(text: str, start: int, end: int, *, about: bool = False) -> bool:
    """Quoted or labelled: the text talks about the match rather than saying it. With ``about``, only in a
    string that speaks of attacks (:func:`about_attacks`): what the rules for text aimed at the model ask;
    there also reported ("warns when a description orders the assistant to …"), and anywhere a story's line
    said to someone else. Never in a text that makes its examples binding."""
    if binding(text):
        return False
    if about and said_to_another(text, start, end):
        return True
    if about and not about_attacks(text):
        return False
    return quoted(text, start, end) or labelled(text, start, lists=about) or (
        reported(text, start) and (about or about_attacks(text)))
