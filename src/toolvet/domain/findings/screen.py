"""The cheap screen: a definition that provably earns no text finding skips the per-string checks.

Discovery reads thousands of definitions per pass and nearly all are clean, so this runs on the whole
definition at once, on its JSON text when the caller has it. It answers *clean* only when the text is
ASCII, holds no escape (so every string appears in it literally, ``json.dumps`` escaping every control
character), none of the punctuation some rule needs, no token of 24 characters or more (base64, hex), and
for every rule at least one of its required word groups has no word among the text's words. A rule
matches only text holding a word of each of its groups (every rule is written so), and on ASCII text the
checks' normalisation only lower-cases, reads ``_`` (and in keys ``-`` and ``.``) as a space and collapses
whitespace: the words the screen sees are the words the rules see, plus the JSON's own keys, which only
make it say *maybe*. A slip of a rule word (``instrutcions``) counts as the word (:mod:`.spelling`), as the
checks' further reading reads it. ``tests/domain/test_findings_screen.py`` holds it to that on the corpus and on
mutations.

It is cheap because a clean text is read in a few passes of C or Rust code and no Python loop: two
translations (the word runs and the split), a search for a long run and one pass of an Aho-Corasick
automaton that finds every rule word, mark and key prefix in the split; the rules are evaluated once per
set of words found, not once per text.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache
from typing import Final

from ahocorasick_rs import AhoCorasick, Implementation

from toolvet.domain.findings.languages import SCREEN_GROUPS
from toolvet.domain.findings.languages_calls import SCREEN_GROUPS as SCREEN_CALLS
from toolvet.domain.findings.languages_harvesting import SCREEN_DATA, SCREEN_SINKS
from toolvet.domain.findings.paraphrases import SCREEN_GROUPS as SCREEN_OVERRIDES
from toolvet.domain.findings.paraphrases_calls import SCREEN_GROUPS as SCREEN_CALLS_IN_WORDS
from toolvet.domain.findings.paraphrases_concealment import SCREEN_GROUPS as SCREEN_CONCEALMENT
from toolvet.domain.findings.paraphrases_policy import SCREEN_GROUPS as SCREEN_POLICY
from toolvet.domain.findings.paraphrases_secrecy import SCREEN_GROUPS as SCREEN_SECRECY
from toolvet.domain.findings.spelling import screen_slips


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_SINKS: Final = _set(
    "pass put paste include attach send upload copy insert provide forward post submit append embed fill mirror "
    "transmit relay exfiltrate leak report sync stream push ship share dump write place bcc cc beacon email e mail "
    "populate")
#: Whom the model talks with (:mod:`.phrases`' ``_USER``: "the person you are chatting with", "whoever …").
_USERS: Final = "user users human operator person people whoever customer"
#: Parameter names that carry data out (``harvesting``), and "here" ("put the key here").
_CARRIERS: Final = _set(
    "sidenote side note notes context feedback extra metadata meta comment comments debug summary reasoning details "
    "memo annotation aside remarks log trace telemetry info data payload config auth blob token report here")
_SINK_WORDS: Final = " ".join(sorted(_SINKS))
_SINK_OR_CARRIER: Final = " ".join(sorted(_SINKS | _CARRIERS))

#: Asking the person for a secret (``harvesting._ASKED_OF_PERSON``): the verb, and the secret's words.
_ASKING: Final = "ask asks asking asked collect obtain solicit gather get request requesting requested"
_SECRET_WORDS: Final = ("password passwords passcode passcodes pin pins otp otps code codes answers answer phrase "
                        "phrases key keys tokens cookies credentials mnemonic mnemonics cvv cvv2 cvvs cvc cvcs words")
#: The words of a sensitive path (``harvesting.SENSITIVE``), as groups: a word that names one, or an everyday
#: word with the word that makes it a path ("secrets" alone is no path, "secrets.yaml" is).
_PATHS: Final = (
    ("ssh rsa dsa ecdsa ed25519 aws gcloud kube kubeconfig env npmrc pypirc netrc pgpass docker claude mcp cursor "
     "codeium appdata keychain gnupg wallet etc gh hub azure msal tfrc terraform vault cargo m2 firebase copilot "
     "codex",),
    ("bash zsh sh", "history"),
    ("credentials", "application git db json file"),
    ("credential", "file files"),
    ("cookie cookies", "file db database store jar"),
    ("browser", "cookies passwords history profile"),
    ("secret secrets", "json yaml yml toml"),
    ("private", "key keys"),
    # a browser's or mail client's stores
    ("chrome chromium firefox edge brave safari opera", "cookies", "file db database store jar"),
    ("logins", "json"),
    ("key4",),
    ("cookies", "sqlite"),
    ("saved", "imap smtp email mail wi fi wifi", "password passwords"),
)
#: A word every sensitive path holds (each group's first), or a mark.
_PATH_WORDS: Final = " ".join(first for first, *_ in _PATHS)

#: The rule families (:mod:`.phrases`, :mod:`.languages`, :mod:`.harvesting`, :mod:`.payloads`, :mod:`.secrets`).
FAMILIES: Final = frozenset({"phrases", "languages", "harvesting", "payloads", "secrets"})

#: Per rule, its family and groups of words: a text can match the rule only when every group has a word in it.
_RULES: Final[tuple[tuple[str, tuple[frozenset[str], ...]], ...]] = tuple(
    (family, tuple(_set(group) for group in groups)) for family, groups in (
        # instruction overrides: the verb; the rule words; obey; prompt leaks; role changes; before-using
        ("phrases", ("ignore disregard forget overlook bypass discard abandon skip override cancel aside attention "
                     "heed follow following obey",)),
        ("phrases", ("instructions instruction directives directive rules guidance guidelines prompt prompts "
                     "policies",)),
        ("phrases", ("obey follow",)),
        ("phrases", ("prompt instructions configuration rules",)),
        ("phrases", ("now longer mode unrestricted bound",)),
        # role play, a role taken ("pretend you are in developer mode", "grant yourself", "act as the admin")
        ("phrases", ("pretend imagine act behave", "mode unrestricted jailbroken dan restrictions rules limits "
                                                  "filters guidelines")),
        ("phrases", ("yourself",)),
        ("phrases", ("act", "system root admin administrator sysadmin superuser unrestricted jailbroken")),
        # a claim of precedence ("this tool supersedes all other tools", "… takes priority over your instructions")
        ("phrases", ("supersedes replaces overrides outranks precedence", "other")),
        ("phrases", ("priority precedence", "instructions prompt guidelines directives message")),
        ("phrases", ("before",)),
        # a call to another tool as a standing side step ("whenever …, you must also call send_email")
        ("phrases", ("must should need have always immediately mandatory shall",
                     "call execute invoke run trigger calling invoking executing running")),
        # … or on every use of the tool ("every time you use it, call send_email")
        ("phrases", ("time whenever each every after", "call execute invoke run trigger")),
        # setting aside the other tools ("ignore all other addition tools", "do not use the other servers")
        # (its nouns, "tool" and "server", are in every definition: the verb and "other" are the screen)
        ("phrases", ("ignore disregard use using avoid bypass skip rely relying trust call", "other")),
        # secrecy
        ("phrases", ("not never without don dont shouldn mustn needn doesn", _USERS)),
        ("phrases", ("sure ensure", _USERS)),
        ("phrases", ("remain stay kept left", "unaware dark oblivious ignorant")),
        ("phrases", ("keep", "between yourself")),
        ("phrases", ("little", "secret")),
        ("phrases", ("mention", "never not don dont")),
        # acting on a claimed approval, or without confirming with the user
        ("phrases", ("already", "skip don dont not no never without")),
        ("phrases", ("confirm confirming check checking verify verifying", _USERS)),
        ("phrases", ("hide conceal keep withhold", _USERS)),
        ("phrases", ("mentioned shown disclosed revealed reported surfaced",)),
        ("phrases", ("need needn reason unnecessary necessary have", _USERS)),
        ("phrases", ("need needn", "mentioned told shown disclosed revealed reported surfaced")),
        # acting without the user's confirmation, or skipping it
        ("phrases", ("confirmation confirmations approval approvals consent permission permissions",
                     "never not don dont need without skip bypass suppress disable omit avoid")),
        # the overrides and secrecy said in other words (paraphrases: word classes, each rule needs both)
        *(("phrases", groups) for groups in (*SCREEN_OVERRIDES, *SCREEN_SECRECY, *SCREEN_CALLS_IN_WORDS,
                                             *SCREEN_CONCEALMENT, *SCREEN_POLICY)),
        # role lines, banners, bracketed notes (tags and template tokens need "<", a mark)
        ("phrases", ("system assistant developer admin",)),
        ("phrases", ("system admin developer assistant important internal",)),
        ("phrases", ("begin start", "policy policies instructions instruction directives directive rules prompt system "
                                    "guidance orders")),
        # a note to the model in a schema value ("assistant_note: …", "nota para o assistente")
        ("phrases", ("note notes memo message reminder hint instructions instruction directive guidance policy nota "
                     "hinweis", "ai assistant model llm agent bot assistente asistente ia modelo modello modele "
                                "assistenten ki modell")),
        ("phrases", ("assistant system ai model llm hidden internal agent inst",)),
        ("phrases", ("system sys assistant inst instruction instructions prompt",)),
        # sensitive paths (alone: an info finding)
        *(("harvesting", groups) for groups in _PATHS),
        # secrets the model knows ("any API keys", "tokens you have seen"), with a way out
        ("harvesting", ("api key keys passwords password tokens token secrets secret credentials cookies cookie "
                        "environment variables vars codes code phrases phrase passphrase passphrases",
                        _SINK_OR_CARRIER, "any all every user users your you seen conversation chat context")),
        ("harvesting", ("looks look", "like", "token tokens key keys secret secrets password passwords credential "
                                                "credentials", _SINK_OR_CARRIER)),
        # ... or taken from another tool ("the bearer token … used in any other tool call"); and, for data
        # collection, other tools' results asked for. (A dot-directory's session or token file is a path: "~"
        # is a mark.)
        ("harvesting", ("other another", _SINK_OR_CARRIER)),
        # ... or asked of the person the model serves and put into a field that carries data out
        ("harvesting", (_ASKING, _SECRET_WORDS, _SINK_WORDS,
                        "field parameter argument property box section notes note memo comment comments metadata "
                        "context details extra remarks feedback reason log debug sidenote annotation summary")),
        # ... and entered "here", in a parameter's description; or a secret no tool needs from a person
        ("harvesting", (_ASKING, _SECRET_WORDS, "here")),
        ("harvesting", (_ASKING, "seed recovery mnemonic private backup pin pins banking bank card")),
        # ... kept as a copy, or asked under the pretext of proving who the person is
        ("harvesting", (_ASKING, _SECRET_WORDS, "copy copies backup")),
        ("harvesting", (_ASKING, _SECRET_WORDS, "identity ownership owns own")),
        # ... the person made to supply a recovery phrase; a password reset's code; "ask the guest for it"
        ("harvesting", ("seed recovery mnemonic private backup",
                        "collect ask pass submit put paste include send enter")),
        ("harvesting", ("reset", "password", "ask have get")),
        ("harvesting", ("ask asks asking asked", "it", "seed recovery mnemonic private backup pin pins banking bank "
                                                      "card")),
        ("harvesting", ("starting beginning", "token tokens key keys secret secrets password passwords",
                        _SINK_OR_CARRIER)),
        ("harvesting", ("code codes", "sent", _SINK_OR_CARRIER)),
        # exfiltration: a sink verb and a destination word (an address's "@" is punctuation, below); pixels
        ("harvesting", (_SINK_WORDS, "http https webhook telemetry our")),
        # ... to an IP address, as a second copy ("report every open port to 192.0.2.44:8080 as well")
        ("harvesting", (_SINK_WORDS, "well copy copies addition additionally")),
        # ... said in the passive after an obligation ("must be posted to our collector")
        ("harvesting", ("posted sent uploaded forwarded mirrored copied submitted transmitted relayed pushed shipped "
                        "emailed mailed streamed synced dumped beaconed leaked", "telemetry our")),
        ("harvesting", ("http https",)),
        ("harvesting", ("notify inform alert cc loop let keep", "telemetry our")),
        # a standing order to send to a destination named without an address ("the archive email")
        ("harvesting", (_SINK_WORDS, "always automatically silently secretly quietly every each background whenever",
                        "email mail inbox mailbox mailing distribution archive webhook collector bucket")),
        # secrets held in an environment variable ("the GITHUB_TOKEN environment value")
        ("harvesting", ("token secret password key credentials credential", "environment env", _SINK_OR_CARRIER)),
        # data collection
        ("harvesting", ("conversation chat messages history user prompt instructions configuration exchange dialogue "
                        "dialog thread session contact contacts", _SINK_OR_CARRIER)),
        # ... the model's own context named as a parameter's content ("the setup text you were given")
        ("harvesting", ("given told instructed sent asked", "you")),
        ("harvesting", ("system developer", "turns turn")),
        # shell commands
        ("payloads", ("curl wget iwr invoke irm fetch dev nc mkfifo powershell iex exec eval base64 rm chmod pty dup2 "
                      "fsockopen tcpsocket socat",)),
        # an order to decode a value and follow it ("percent-decode it and follow it")
        ("payloads", ("decode unescape unquote deobfuscate",)),
        ("payloads", ("pipe pipes piped", "sh bash zsh dash ksh fish powershell pwsh iex")),
        # key formats with a word prefix
        ("secrets", ("ghp gho ghu ghs ghr github glpat xoxa xoxb xoxp xoxo xoxs xoxr sk rk begin",)),
        # the same phrase rules in other languages: those a plain-ASCII text can hold (Latin script)
        *(("languages", groups) for groups in SCREEN_GROUPS),
        # a standing order to call another tool in another language (languages_calls): its verb and trigger
        *(("languages", groups) for groups in SCREEN_CALLS),
        # a sensitive path passed on with another language's verb (languages_harvesting): a word of a path
        # (or a mark) and a Latin-script sink verb
        ("languages", (_PATH_WORDS, SCREEN_SINKS)),
        # the user's data put into an argument with another language's verb (an address is a mark)
        ("languages", (SCREEN_DATA, SCREEN_SINKS)),
    )
)
#: Every word some rule's groups name: the only words of a text the screen reads.
WORDS: Final = frozenset().union(*(group for _, groups in _RULES for group in groups))


def _rules_of() -> dict[str, tuple[int, ...]]:
    """Per word, the rules that have it in a group, in order: one pass over the rules' groups (asking every
    word of every rule took a fifth of a second of each process's first finding)."""
    found: dict[str, list[int]] = {}
    for i, (_, groups) in enumerate(_RULES):
        for word in frozenset().union(*groups):
            found.setdefault(word, []).append(i)
    return {word: tuple(rules) for word, rules in found.items()}


#: Per word, the rules that have it in a group: only those rules are evaluated for a text's words.
_RULES_OF: Final = _rules_of()

#: Characters that some rule needs and no word shows (markup, paths, addresses, URL escapes, base64 padding
#: and alphabet, pipelines, escapes): the split turns them into "#", which then sends the text to every rule.
MARK_CHARS: Final = "<~%@/+=|\\#"
_MARK: Final = "#"
#: The secrets rule's AWS key ids, read case-sensitively on the text as written. The split text holds them
#: lower-cased (with every "Asia"), so the text itself is searched only when the automaton finds those.
_KEY_PREFIX: Final = re.compile(rb"AKIA|ASIA")
_KEY_PREFIXES_SPLIT: Final = frozenset({"akia", "asia"})
_WORD_BYTES: Final = frozenset((string.ascii_lowercase + string.digits).encode())
# The split runs on bytes (the text is ASCII by then), where one translate is a table lookup per byte.
# Control characters (what ``str.isprintable`` refuses in ASCII) become "#" with the marks; upper-case
# letters become lower-case ones.
_SPLIT: Final = bytes(c if c in _WORD_BYTES else c + 32 if 65 <= c <= 90
                      else ord(_MARK) if chr(c) in MARK_CHARS or c < 32 or c >= 127 else 32 for c in range(256))
#: The same split with every word character as "a": a long token is then a run of "a" (one substring search).
_RUNS: Final = bytes(97 if c in _WORD_BYTES or 65 <= c <= 90 else 32 for c in range(256))
LONG_TOKEN: Final = 24
_LONG_RUN: Final = b"a" * LONG_TOKEN
_NONE: Final[frozenset[str]] = frozenset()
#: Every rule word as a whole token of the split text (a space either side: the split puts one around
#: every token, and the text is padded with one), every slip of one (:mod:`.spelling`), every mark and every
#: lower-cased key prefix, all found in one pass. Matches may overlap, so two words side by side share the
#: space between them. Built on the first text (0.1 s): with the slips of the words, about 32,000 strings.
#: A contiguous NFA: about 11 MB a process, a pass about 1.5 µs longer on a discovery farm tool than the
#: DFA of the words alone (6.1 µs); as a DFA the same strings took 41 MB a process (82 MB more at the peak
#: of a 50,000-tool discovery benchmark, whose sweep and writer each build one) and no longer pass.
@lru_cache(maxsize=1)
def _finder() -> tuple[AhoCorasick, dict[str, tuple[str, ...]], frozenset[str]]:
    spaced = {word: f" {word} " for word in WORDS}  # one string per word, shared by its slips
    slips = {f" {slip} ": tuple(spaced[word] for word in sorted(words))
             for slip, words in screen_slips(WORDS).items()}
    finder = AhoCorasick([f" {word} " for word in sorted(WORDS)] + sorted(slips)
                         + [_MARK, *sorted(_KEY_PREFIXES_SPLIT)], implementation=Implementation.ContiguousNFA)
    return finder, slips, frozenset(slips)


def prepare() -> None:
    """Build the screen's automaton now, not on the first text: for a process that will screen many
    definitions and has a moment at start-up (the discovery writer process)."""
    _finder()


def needed(text: str) -> frozenset[str]:
    """The rule families that may match some string held in ``text`` (a JSON text, one string, or strings
    joined by spaces): all of them unless the text is plain ASCII, none when it provably earns nothing."""
    if not text.isascii():
        return FAMILIES
    raw = text.encode("ascii")
    if _LONG_RUN in raw.translate(_RUNS):
        return FAMILIES
    split = f" {raw.translate(_SPLIT).decode('ascii')} "
    finder, slips, slipped = _finder()
    found = frozenset(finder.find_matches_as_strings(split, overlapping=True))
    if not found.isdisjoint(slipped):  # (two sets: the smaller is walked)
        # A slip of a rule word (:mod:`.spelling`) is read as the word, as the checks' further reading reads it.
        found = frozenset(w for m in found for w in slips.get(m, (m,)))
    if not found:
        return _NONE
    if not found.isdisjoint(_KEY_PREFIXES_SPLIT) and _KEY_PREFIX.search(raw) is not None:
        return FAMILIES
    return families(found)


def rule_families(found: frozenset[str]) -> frozenset[str]:
    """The families of the rules each of whose groups has a word among ``found``, what the screen finds in
    a text: its rule words (a space either side), a mark when it has any (then every family) and the
    lower-cased key prefixes (which no rule reads as words)."""
    if _MARK in found:
        return FAMILIES
    words = {word.strip() for word in found if word.startswith(" ")}
    rules = {i for word in words for i in _RULES_OF[word]}
    return frozenset(_RULES[i][0] for i in rules if all(not group.isdisjoint(words) for group in _RULES[i][1]))


#: :func:`rule_families`, remembered: a registry's texts hit few distinct sets of rule words (every tool of
#: the discovery farm one of a handful), so most texts skip the rules altogether.
families = lru_cache(maxsize=4096)(rule_families)


def plainly_clean(text: str) -> bool:
    """True when no string held in ``text`` can earn a text finding."""
    return not needed(text)
