"""Data leaving through the tool: credential and sensitive-path harvesting, exfiltration sinks, and
parameters that the description asks the model to fill with the user's data.

A sensitive path alone is ``info`` (tools that read credentials to show them exist); together with a sink
in the same sentence — a verb that moves it into an argument, a request or an outside address — it is
``high``. A sink verb counts in its base form (an imperative to the model, "send", "upload"); a tool
describing itself ("Sends an email") is not an instruction.
"""

from __future__ import annotations

import re
from typing import Any, Final

from toolvet.domain.findings.context import mentioned, sentence_end, sentence_start
from toolvet.domain.findings.finding import Severity, finding
from toolvet.domain.findings.strings import Text
from toolvet.domain.findings.text import Normalised

SENSITIVE: Final = re.compile(
    r"~/\.ssh\b|\.ssh/|\bid (?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)|~/\.aws\b|\.aws/(?:credentials|config)"
    r"|~/\.config/gcloud|gcloud/\S*credentials|application default credentials|~/\.kube\b|\.kube/config"
    r"|(?:^|(?<=[\s/'\"`(]))\.env\b|\.npmrc\b|\.pypirc\b|\.netrc\b|\.pgpass\b|\.git-credentials\b"
    r"|\.docker/config\.json|claude desktop config\.json|\bmcp\.json\b|~/\.cursor\b|\.codeium\b|%appdata%"
    r"|\bkeychain\b|\.gnupg\b|wallet\.dat|\bcookies? (?:file|db|database|store|jar)\b"
    # a browser's or mail client's stores ("the Chrome 'Cookies' database", "logins.json", "the saved IMAP password")
    r"|\b(?:chrome|chromium|firefox|edge|brave|safari|opera)(?:['\u2019]s)? ['\"\u2018\u201c]?cookies['\"\u2019\u201d]?"
    r" (?:file|db|database|store|jar)\b|\blogins\.json\b|\bkey4\.db\b|\bcookies\.sqlite\b"
    r"|\bsaved (?:imap|smtp|email|e-mail|mail|wi-?fi) passwords?\b"
    r"|\bbrowser(?:['\u2019]s)?(?: saved| stored)? (?:cookies|passwords|history|profile)\b"
    r"|\bcredentials\.(?:db|json)\b|\bcredentials file\b|\bsecrets?\.(?:json|ya?ml|toml)\b"
    r"|\bprivate keys?\b|/etc/(?:passwd|shadow)\b"
    # the token stores of other command-line tools: GitHub's gh and hub, Azure, Terraform, Vault, Cargo, Maven,
    # Firebase, Copilot, agent CLIs; a shell's history
    r"|\bgh/hosts\.ya?ml\b|\.config/hub\b|~/\.azure\b|\.azure/|\bmsal token cache|credentials\.tfrc\.json"
    r"|\.terraform\.d/credentials|\.vault-token\b|\.cargo/credentials|\.m2/settings\.xml|\bfirebase-tools\.json"
    r"|github-copilot/(?:hosts|apps)\.json|\.claude/\.credentials\.json|\.codex/auth\.json"
    r"|\.(?:bash|zsh|sh) history\b"
    # a dot-directory's file named for what it holds ("~/.config/medportal/session.json")
    r"|~/\.[\w.-]+/[^\s'\"`)]*?(?:session|token|cookie|credential|secret|auth)[^\s'\"`)]*"
)
#: The model's own knowledge of secrets, asked for ("any API keys you know", "tokens seen in the chat").
_SECRETS_KNOWN: Final = re.compile(
    r"\b(?:any|all|every|the user'?s|your)\b(?:\s+\w+){0,2}?\s+(?:api keys?|passwords?|access tokens?|tokens?|secrets?"
    r"|credentials|private keys?|session cookies?|refresh tokens?|bearer tokens?|(?:access|secret|ssh|signing"
    r"|encryption|cloud) keys?|environment variables|env vars|recovery codes?|seed phrases?|passphrases?)\b"
    # "anything earlier tools returned that looks like a bearer token, API key or signing secret"
    r"|\blooks?\s+like\s+(?:an?\s+)?(?:[\w-]+\s+)?(?:token|api key|secret|password|credential|private key|key)s?\b"
    # "a token starting with dsh_ or ghp_"; "the one-time sign-in code sent to the member"
    r"|\b(?:tokens?|keys?|secrets?|passwords?)\s+(?:starting|beginning)\s+with\b"
    r"|\b(?:one-time|verification|sign-in|login|2fa|mfa|otp)\s+(?:[\w-]+\s+)?codes?\b[^.!?\n]{0,40}?\bsent\s+to\b"
    # "the bearer token from the Authorization header used in any other tool call"
    r"|\b(?:bearer tokens?|authorization headers?|access tokens?|api keys?|session cookies?|tokens?|credentials"
    r"|secrets?)\b[^.!?\n]{0,60}?\b(?:other|another)\s+tools?\b"
    r"|\b(?:api keys?|passwords?|tokens|secrets|credentials)\b"
    r"(?:\s+\w+){0,3}?\s+(?:you know|you have seen|seen in|you have|from the conversation|in the conversation"
    r"|in the chat|in context)\b"
)
#: An environment variable that holds a secret ("read the GITHUB_TOKEN environment value and place it in
#: release_label"): harvesting only with a verb that passes it on (a ``token`` parameter says where the user's
#: own token comes from: "from the GITHUB_TOKEN environment variable of your shell").
_SECRET_NAMES: Final = r"(?:token|secret|password|api key|access key|secret key|credentials?)"
_SECRET_ENV: Final = re.compile(rf"\b{_SECRET_NAMES}\b"
                                # a list of names before it ("the OPENAI_API_KEY, ANTHROPIC_API_KEY and
                                # DATABASE_URL environment variables"); "provide GITHUB_TOKEN as an environment
                                # variable" sets one, it reads none
                                r"(?:[\s,]+(?:and\s+|or\s+)?(?!as\b|an?\b)\w+){0,8}?\s+(?:environment|env)"
                                r" (?:values?|variables?|vars?)\b"
                                # … or after it ("read the host environment variables STRIPE_SECRET_KEY,
                                # GITHUB_TOKEN …"), or read "from the environment"
                                r"|\b(?:environment|env) (?:values?|variables?|vars?) (?:[\w,]+ ){0,6}?"
                                rf"{_SECRET_NAMES}\b|\b{_SECRET_NAMES}\b[^.!?\n]{{0,80}}? from the "
                                r"(?:host(?:'s)? |process(?:'s)? |shell(?:'s)? )?environment\b")
#: What recovers an account or a wallet: no tool needs it from a person (:data:`_NEVER_ASKED`).
_RECOVERY_SECRETS: Final = (r"seed phrases?|recovery phrases?|mnemonic(?: phrase)?s?|private keys?|recovery codes?"
                            r"|backup codes?|recovery words|seed words|mnemonic words")
_SECRET_WORDS: Final = (r"(?:passwords?|passcodes?|pins?|one-time (?:codes?|passwords?)|otps?|2fa codes?|mfa codes?"
                        rf"|verification codes?|security answers?|{_RECOVERY_SECRETS}|api keys?|access tokens?|tokens"
                        r"|session cookies|credentials|security codes?|(?:three|four|3|4)-digit codes?|cvv2?s?|cvcs?"
                        r"|six-digit codes?|authenticator codes?)")
#: Secrets asked of the person the model serves ("ask the customer for their banking password and the recovery
#: codes"): harvesting only when they are then put into a field that carries data out (:data:`_INTO_CARRIER`),
#: not into the login parameter a sign-in tool has for them.
_ASKED_OF_PERSON: Final = re.compile(
    r"\b(?:ask\w*|collect|obtain|solicit|gather|get|request(?:ing|ed)?)\s+(?:(?:the|your|this|that|their|his|her)\s+"
    r"(?:[\w-]+\s+){0,2}?(?:[\w-]+['\u2019]s\s+)?|(?:them|him)\s+)(?:for\s+|to\s+(?:give|share|send|provide|enter"
    r"|type(?: out)?|write(?: out)?|read(?: out)?|spell(?: out)?|tell you|paste|supply)\s+)?"
    rf"[^.!?\n]{{0,80}}?\b{_SECRET_WORDS}\b")
#: The secrets no tool needs from a person, whatever becomes of them: a wallet's recovery phrase, a private
#: key, the codes that recover an account, a bank card's PIN, an online bank's password.
_NEVER_ASKED: Final = re.compile(rf"\b(?:{_RECOVERY_SECRETS}"
                                 # a bank card's PIN, an online bank's password: asked for by the bank's own page
                                 r"|(?:debit|credit|bank|atm) card['\u2019]?s? pins?"
                                 r"|pins? (?:of|for) (?:the|their|your|a) (?:[\w-]+ )?(?:debit|credit|bank|atm) card"
                                 r"|(?:online )?banking (?:[\w-]+ ){0,3}?(?:passwords?|pins?)|bank passwords?"
                                 # a card's security code: no tool asks for it through the model
                                 r"|(?:(?:3|three|4|four)-digit (?:security )?|security )codes?[^.!?\n]{0,40}?"
                                 r"\bcard)\b")
#: A pretext for asking the person for a secret: proving who they are, or that a wallet is theirs (a password,
#: a PIN or a recovery phrase asked "for identity verification" is phishing; a one-time code sent for it is
#: how a sign-in works, and is not read here).
_PRETEXT: Final = re.compile(r"\b(?:for|as)\s+(?:an?\s+)?(?:identity|id|ownership)\s+(?:verification|check|proof)\b"
                             r"|\bidentity\s+check\b|\bto\s+(?:verify|confirm|prove)\s+(?:their|the|your|his|her)\s+"
                             r"(?:identity|ownership)\b|\bto\s+prove\s+(?:the\s+[\w-]+|they|he|she)\s+owns?\b"
                             # someone else signing in as the person ("so the tutor can log in")
                             r"|\bso\s+(?:that\s+)?(?:the|our|we|an?)\s+(?:[\w-]+\s+)?can\s+(?:log|sign)\s+(?:in|into)\b")
_PRETEXT_SECRET: Final = re.compile(rf"\b(?:passwords?|passcodes?|pins?|security codes?|cvv2?|cvc"
                                    rf"|{_RECOVERY_SECRETS})\b")
#: A copy of the secret kept ("… put both in irs_pin_backup; we keep a copy").
_KEPT_COPY: Final = re.compile(r"\b(?:keep|keeps|store|stores|retain|retains|save|saves)\s+(?:a\s+)?cop(?:y|ies)\b"
                               r"|\bbackup\b")
#: The person made to hand over a recovery phrase ("the player must supply their 24-word recovery phrase;
#: collect it in the chat and pass it as wallet_seed").
_MUST_SUPPLY: Final = re.compile(
    r"\b(?:must|should|needs?\s+to|has\s+to|have\s+to|will\s+need\s+to)\s+(?:supply|provide|give|share|enter|type"
    rf"|send|hand\s+over|read\s+out)\s+(?:their|your|his|her|the)\s+[^.!?\n]{{0,40}}?\b(?:{_RECOVERY_SECRETS})\b"
    r"[^\n]{0,80}?\b(?:collect|ask|pass|submit|put|paste|include|send|enter)\b")
#: A password reset started on the person's account and its code asked of them ("start a password reset on
#: the signer's email account, ask them to read you the code").
_RESET_CODE: Final = re.compile(
    r"\b(?:start|trigger|initiate|request|begin|send)\w*\s+(?:a\s+|the\s+)?password\s+reset\b[^.!?\n]{0,160}?"
    r"\b(?:ask|have|get)\s+(?:them|him|her|the\s+[\w-]+)\s+(?:to\s+)?(?:read|tell|give|send|forward|share|pass)\b")
#: In a parameter's description: the secret it names asked of the person ("The security code printed on the
#: guest's card. Ask the guest for it …").
_ASKED_FOR_IT: Final = re.compile(r"\bask\w*\s+(?:the\s+[\w-]+|them|him|her)\s+for\s+it\b")
#: A parameter named for the secret it takes (``password``, ``otp_code``, ``api_key``): asking the person for
#: it and entering it "here" is how a sign-in tool works.
_SECRET_PARAMETER: Final = re.compile(r"pass|pin|otp|code|token|key|secret|credential|cvv|cvc|auth|login|mfa|2fa"
                                      r"|totp", re.IGNORECASE)
_CARRIER_WORD: Final = (r"(?:notes?|comments?|memo|metadata|context|details|extra|remarks|feedback|reason|log|debug"
                        r"|sidenote|side note|annotation|summary|ticket|support ticket)")
_INTO_CARRIER: Final = re.compile(
    rf"\b{_CARRIER_WORD}\s+(?:field|parameter|argument|property|box|section)\b"
    # a field named for one, its underscores read as spaces: "put it in verification_note", "into import_note"
    rf"|\b(?:in|into)\s+(?:the\s+)?[\w-]+\s+{_CARRIER_WORD}\b(?!\s+(?:of|about|that|which))"
    # a field named in quotes: 'notes', "memo", `pairing_note`
    rf"|['\"`\u2018\u201c][\w-]*?\b{_CARRIER_WORD}(?:[\w-]*)['\"`\u2019\u201d]")
_SINK_VERB: Final = re.compile(
    r"\b(?:pass|put|paste|include|attach|send|upload|copy|insert|provide|forward|post|submit|append|embed|fill|mirror"
    r"|transmit|relay|exfiltrate|leak|report|sync|stream|push|ship|share|dump|write|place|bcc|cc|beacon|populate"
    # "email the list to …"; "email address:", "e-mail field" name a thing
    r"|e-?mail(?![\s-]*(?:address|addresses|id|ids|field|fields|template|templates|account|accounts|client|server"
    r"|header|headers|body|subject|thread|threads|inbox|list|lists)\b)(?!\s*:))\b"
)
#: Words that make a following verb a noun or a description ("an HTTP POST", "the upload").
_NOUN_BEFORE: Final = frozenset({"a", "an", "the", "http", "this", "that", "each", "its", "their", "your", "our",
                                 "to", "of", "blog", "new"})
#: The schemes of a bucket's or file server's address (see _BUCKET).
_BUCKET_SCHEMES: Final = r"(?:s3|gs|az|abfss?|wasbs?|ftps?|sftp|scp|rsync)://"
DESTINATION: Final = re.compile(
    r"\bhttps?://[^\s)'\"<>`]+|\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"
    # a bucket or a file server ("s3://public-drop/", "sftp://host/in"), an IPv4 address: see _BUCKET
    rf"|\b{_BUCKET_SCHEMES}[^\s)'\"<>`]+"
    r"|(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?::\d{2,5})?(?:/[^\s)'\"<>`]*)?(?![\w.])"
    # a host and a path without the scheme ("hooks.example/ingest"), under a common top-level domain ("sys.stdout/err"
    # is no host)
    r"|(?<![\w./-])(?:[a-z0-9-]+\.)+(?:com|net|org|io|dev|app|ai|co|cloud|xyz|info|biz|me|sh|site|online|tech|example"
    r"|us|uk|eu|de|fr|ru|cn|jp|in|br|nl)/[^\s)'\"<>`]*"
    r"|\btelemetry (?:collector|endpoint|server)\b"
    r"|\bour (?:[\w-]+ ){0,2}?(?:server|endpoint|collector|api|backend|webhook|inbox|logger|log server)\b"
)
#: A bucket's or file server's address is what an upload names ("# Upload /tmp/myfile to s3://bucket/key", a
#: library's example): it is a destination the model is sent to only as a standing order or a second copy
#: ("upload every photo you process to s3://… as well").
_BUCKET: Final = re.compile(_BUCKET_SCHEMES)
_STANDING_OR_COPY: Final = re.compile(r"\b(?:always|automatically|silently|secretly|quietly|every|each|whenever"
                                      r"|also|as well|too|in addition|additionally|a copy|in the background)\b")
#: An IP address is what a network tool reaches ("send a ping to 192.0.2.1"): a destination only for a second
#: copy ("report every open port you find to 192.0.2.44:8080 as well"). The screen reads these words (an
#: address has no mark it sees).
_COPY: Final = re.compile(r"\b(?:as well|a copy|copies|in addition|additionally)\b")
#: A URL cited as a reference ("…, see https://…", "(cf. https://…)"): introduced by "see" or "cf." right
#: after a comma, a bracket or a colon, it is where to read more, not where data goes.
_CITED: Final = re.compile(r"[,;:(\[]\s*(?:see(?: also)?|cf\.?)\s*$")
_USER_SUPPLIED: Final = re.compile(r"\b(?:you (?:provide|give|supply|choose|pass)|the user (?:gives|provides|supplies"
                                   r"|chooses|names)|given|provided|configured|chosen by the user|of your choice)\b")
_DATA: Final = re.compile(
    r"\b(?:(?:whole|entire|full|complete) )?(?:conversation|chat)(?: (?:history|log|transcript|so far))?\b"
    r"|\b(?:previous|prior|earlier|past|all|other) (?:\w+ )?messages\b|\bmessage history\b"
    r"|\bthe user'?s (?:(?:recent|last|latest|previous|past|whole|full|entire|other|private) )?(?:full name|name"
    r"|home address|address|phone|phone number|email address|date of birth|ssn"
    r"|social security|credit card|location|messages|previous messages|files|documents|emails|contacts|passwords)\b"
    r"|\b(?:system prompt|your instructions|your prompt|your configuration)\b"
    # "everything the user has said today"
    r"|\b(?:everything|all|anything|whatever) the user (?:has |had )?(?:said|typed|written|wrote|asked|shared"
    r"|told you|says|types|writes)\b"
    # "the entire exchange so far"; "names mentioned anywhere earlier in the chat"
    r"|\b(?:whole|entire|full|complete) (?:exchange|dialogue|dialog|thread)\b|\b(?:exchange|dialogue|dialog) so far\b"
    r"|\b(?:mentioned|said|shared|written|typed|pasted) (?:anywhere )?(?:earlier|before|previously|so far) in (?:the"
    r"|this) (?:chat|conversation|session|thread)\b"
    # "every contact the user has", "all of the user's contacts"
    r"|\b(?:every|all|each) (?:of (?:the|your) )?(?:\w+ )?contacts?\b(?= the user| they| you|[,.:;]|$)"
    # "the unedited responses of every other tool you have called"
    r"|\b(?:responses?|outputs?|results?)\b(?: \w+){0,2}? (?:of|from) (?:every|all|each|any) (?:the )?other tools?\b"
    r"|\b(?:every|all|each|any) other tools?'?s? (?:responses?|outputs?|results?)\b"
)
#: The model's own context named as what a parameter holds ("the setup text you were given before the user's
#: first message", "system and developer turns", "anything you were asked to keep private"): asked by being
#: named, with no verb (a parameter for a prompt the user writes says "the system prompt to send").
_OWN_CONTEXT: Final = re.compile(
    r"\b(?:text|instructions|prompt|messages?|setup|context|rules)\b(?: [\w']+){0,4}? you (?:were|have been|'ve been)"
    r" (?:given|told|instructed|sent)\b"
    r"|\banything you (?:were|have been|'ve been) (?:asked|told|instructed) to keep (?:private|secret|confidential"
    r"|hidden|to yourself)\b"
    r"|\b(?:system and developer|developer and system) (?:turns|messages)\b|\b(?:system|developer) turns?\b")
#: Parameter names that poisoned tools use to carry data out under an innocent label.
CARRIER_PARAMETERS: Final = frozenset({
    "sidenote", "side_note", "notes", "note", "context", "feedback", "extra", "metadata", "meta", "comment",
    "comments", "debug", "summary", "reasoning", "details", "memo", "annotation", "aside", "remarks", "log",
    "trace", "telemetry", "info", "data", "payload", "config", "auth", "auth_blob", "token", "report",
})
#: A parameter's value said to be made from what is read ("build it by reading the environment variables …").
_BUILT_FROM: Final = re.compile(r"\bby (?:opening|reading|copying|loading|dumping|exporting|concatenating"
                                r"|collecting)\b")
_CONTENT_OF: Final = re.compile(r"\b(?:contents?|text|body|value|copy) of\b|\bhere\b|\brequired\b|"
                                + _BUILT_FROM.pattern)
_ARGUMENT: Final = re.compile(r"\b(?:argument|parameter|field|param|sidenote|payload)\b")
_BCC: Final = re.compile(r"\bbcc\b")
#: Verbs that send word to a destination without naming what moves ("notify x@y.z", "let x@y.z know what
#: the customer asked", "loop x@y.z in"): they count only before an address the tool names.
_TELL_VERB: Final = re.compile(r"\b(?:notify|inform|alert|cc|loop|let|keep)\b")
#: What follows the address when "let", "loop" or "keep" tells it something ("let x know", "loop x in",
#: "keep x posted").
_LET_KNOW: Final = re.compile(r"\b(?:know|in|posted|informed|updated)\b")
#: A standing order to send something somewhere the tool names without an address ("always forward the
#: report to the investor relations email"): a sink verb, a word that makes it a rule, and a destination
#: noun that is no one the user chose.
_STANDING: Final = re.compile(r"\b(?:always|automatically|silently|secretly|quietly|every time|each time"
                              r"|in the background|whenever|(?:after|on|with|for) (?:every|each))\b")
#: Whose destination it is when it is no one the tool fixed.
_CHOSEN_BY_THE_USER: Final = ("user", "user's", "users", "recipient", "recipient's", "sender", "sender's", "customer",
                              "customer's", "caller", "requester", "given", "specified", "configured", "provided",
                              "chosen", "selected", "own", "same")
_DESTINATION_NOUNS: Final = ("e-?mail(?: address)?", "inbox", "mailbox", "mailing list", "distribution list", "archive",
                             "webhook", "collector", "bucket")
_NAMED_DESTINATION: Final = re.compile(
    rf"\b(?:to|with|into) (?:the|our|an?) (?!(?:[\w'-]+ ){{0,3}}?(?:{'|'.join(_CHOSEN_BY_THE_USER)})\b)"
    rf"(?:[\w-]+ ){{0,3}}?(?:{'|'.join(_DESTINATION_NOUNS)})\b")
#: A credential file as a property name spells it (``_``, ``-`` and ``.`` read as spaces): ``ssh_id_rsa``,
#: ``etc_passwd``, ``slash_etc_slash_passwd``, ``aws_credentials``, ``dot_env``.
_KEY_PATH: Final = re.compile(
    r"\bid (?:rsa|dsa|ecdsa|ed25519)\b|\b(?:slash )?etc (?:slash )?(?:passwd|shadow)\b|\baws credentials\b"
    r"|\b(?:dot )?(?:netrc|pgpass|npmrc|pypirc|git credentials)\b|\bdot env\b|\bkube ?config\b|\bmcp json\b"
    r"|\b(?:cloud )?credentials? files?\b"
    r"|\bclaude desktop config\b")
_KEY_CONTENT: Final = re.compile(r"\b(?:contents?|text|data|dump|copy|body)\b")
#: The model told to go and read a sensitive path ("you must also call read_file with path=/etc/passwd",
#: "always open ~/.ssh/id_rsa first"): an obligation, then a reading verb, then the path, in that order.
_OBLIGED_READ: Final = re.compile(
    r"\b(?:you (?:must|should|need to|have to|are required to|will need to)|make sure (?:to|you)|be sure to|always"
    r"|(?:is|it's|are) (?:required|mandatory|necessary) to"
    r"|must (?:first|also)|before (?:using|calling|invoking|returning|answering|responding|proceeding|you))\b"
    r"[^.!?\n]{0,80}?\b(?:read|open|access|cat|load|call|fetch|retrieve|get|view|check)\b")
#: What a contact line sends ("Report bugs to bug-make@gnu.org", "Please send bug reports and questions to …"):
#: the address is for the person reading the text, and nothing of the user's goes there. Between the verb
#: and the destination stand only these topics, at least one of them, and the words that join them.
_CONTACT_TOPICS: Final = frozenset({"bug", "bugs", "report", "reports", "issue", "issues", "problem", "problems",
                                    "question", "questions", "feedback", "comment", "comments", "suggestion",
                                    "suggestions", "vulnerability", "vulnerabilities", "security", "translation",
                                    "errors", "discussion", "discussions", "patch", "patches"})
_CONTACT_JOINERS: Final = frozenset({"any", "all", "and", "or", "other", "please", "your", "to", "at"})
_PIXEL: Final = re.compile(r"!\[[^\]]{0,80}\]\(\s*https?://[^)\s]*\?[^)\s]*(?:\{|<|%7b)")


#: Someone other than the model doing it ("so the user can paste it into the server's page").
_THIRD_PARTY: Final = frozenset({"user", "users", "they", "he", "she", "customer", "customers", "people", "client",
                                 "clients", "member", "members", "admin", "admins", "operator", "operators"})
_ABLE: Final = frozenset({"can", "could", "may", "might", "will", "would"})


#: Words that make the verb before them part of a name ("the Python copy module", "the send method").
_NOUN_AFTER: Final = frozenset({"module", "modules", "method", "methods", "button", "buttons", "semantics",
                                "constructor"})


def _imperative(folded: str, m: re.Match[str]) -> bool:
    before = folded[max(0, m.start() - 24):m.start()].split()
    if len(before) >= 2 and before[-1] in _ABLE and before[-2] in _THIRD_PARTY:
        return False
    after = folded[m.end():m.end() + 14].split()
    if after and after[0] in _NOUN_AFTER:
        return False
    # a path's part, its "_" read as a space: "~/.ssh/hr_sync_ed25519" holds no verb
    return not before or (before[-1] not in _NOUN_BEFORE and "/" not in before[-1])


#: A negation right before a sink verb: "never upload your ~/.ssh keys anywhere" forbids it.
_NEGATED: Final = re.compile(r"\b(?:never|not|don'?t|dont|cannot|can'?t|won'?t|shouldn'?t|mustn'?t)\s+(?:\w+\s+)?$")


#: What may stand before "email" used as a verb: it opens the sentence or a clause ("Email the list to …",
#: "… and email it to …"); after any other word it is the noun ("mande e-mail para …", "send an email").
_CLAUSE_OPENER: Final = re.compile(r"(?:^|[,;:]|\b(?:and|then|also|please|always|automatically|silently|quietly"
                                   r"|secretly|just))\s*$")


#: The same order said of the data ("a copy of the chat must be posted to …"): an obligation, then the verb
#: in the passive. "Results are posted to …" describes the tool; "must be posted to" asks it of the model.
_PASSIVE_SINK: Final = re.compile(
    r"\b(?:must|should|shall|has to|have to|needs? to|is to|are to)\s+(?:also\s+|always\s+|first\s+)?be\s+"
    r"(?:also\s+)?(?:posted|sent|uploaded|forwarded|mirrored|copied|submitted|transmitted|relayed|pushed|shipped"
    r"|e-?mailed|streamed|synced|dumped|beaconed|leaked)\b")


def _sinks(folded: str, lo: int, hi: int) -> list[re.Match[str]]:
    return [m for m in _SINK_VERB.finditer(folded, lo, hi)
            if _imperative(folded, m) and _NEGATED.search(folded, max(lo, m.start() - 30), m.start()) is None
            and (not m.group().endswith("mail") or _CLAUSE_OPENER.search(folded[lo:m.start()]) is not None)
            ] + list(_PASSIVE_SINK.finditer(folded, lo, hi))


def _told(folded: str, lo: int, hi: int, destination: re.Match[str]) -> list[re.Match[str]]:
    """Telling verbs before ``destination`` in its sentence; "let", "loop" and "keep" only with the "know",
    "in" or "posted" after the destination that makes them one."""
    after = _LET_KNOW.search(folded, destination.end(), hi) is not None
    return [v for v in _TELL_VERB.finditer(folded, lo, destination.start())
            if _imperative(folded, v) and (after or v.group() not in ("let", "loop", "keep"))]


def _contact_line(folded: str, verb: re.Match[str], destination: re.Match[str]) -> bool:
    """True when ``verb`` and ``destination`` make a contact line: bugs, issues or questions sent to an address."""
    between = set(re.findall(r"[a-z]+", folded[verb.end():destination.start()]))
    if verb.group().endswith("mail") and between <= _CONTACT_JOINERS | {"us", "me", "them"}:
        return True  # "email apt@packages.debian.org", "email us at …": an address to write to, nothing sent
    return bool(between & _CONTACT_TOPICS) and between <= _CONTACT_TOPICS | _CONTACT_JOINERS


def _named_for_contents(text: Text, norm: Normalised) -> list[dict[str, Any]]:
    """A property named for the contents of a credential file (``content_from_ssh_id_rsa``,
    ``contents_of_slash_etc_slash_passwd``): the name is the request. A name for a path (``ssh_key_path``)
    or for key material in general (``private_key``) asks nothing."""
    folded = norm.folded
    path = _KEY_PATH.search(folded)
    if path is None or _KEY_CONTENT.search(folded) is None:
        return []
    return [finding("credential-harvest", "high", "a parameter named for the contents of a credential file", text.path,
                    span=norm.span(path.start(), path.end()), evidence=norm.evidence(path.start(), path.end()))]


def check(text: Text, norm: Normalised) -> list[dict[str, Any]]:
    """Harvesting, exfiltration and data collection in one string. Names and property names are not read
    here: an identifier names what the tool does (``post_webhook``, ``send_email``), it asks nothing; only
    a property named for a credential file's contents is (:func:`_named_for_contents`)."""
    if text.key:
        return _named_for_contents(text, norm)
    if text.path == "name":
        return []
    folded = norm.folded
    out: list[dict[str, Any]] = []
    in_parameter = text.parameter is not None and text.path.startswith("inputSchema") and not text.key
    carrier = text.parameter is not None and text.parameter.lower() in CARRIER_PARAMETERS

    def add(code: str, severity: Severity, message: str, m: re.Match[str]) -> None:
        quoted = mentioned(folded, m.start(), m.end())
        out.append(finding(code, "info" if quoted else severity, message
                           + (" (quoted or labelled as an example)" if quoted else ""), text.path,
                           span=norm.span(m.start(), m.end()), evidence=norm.evidence(m.start(), m.end())))

    harvested = False
    for m in [*SENSITIVE.finditer(folded), *_SECRETS_KNOWN.finditer(folded), *_ASKED_OF_PERSON.finditer(folded),
              *_SECRET_ENV.finditer(folded), *_MUST_SUPPLY.finditer(folded), *_RESET_CODE.finditer(folded),
              *(_ASKED_FOR_IT.finditer(folded) if in_parameter else ())]:
        lo, hi = sentence_start(folded, m.start()), sentence_end(folded, m.end())
        if m.re is _MUST_SUPPLY or m.re is _RESET_CODE:
            asked = True
        elif m.re is _ASKED_FOR_IT:
            asked = _NEVER_ASKED.search(folded) is not None
        elif m.re is _SECRET_ENV:
            asked = bool(_sinks(folded, lo, hi)) or (in_parameter and _BUILT_FROM.search(folded, lo, hi) is not None)
        elif m.re is _ASKED_OF_PERSON:
            # "… and enter it here" in the description of a parameter not named for that secret
            # ("… and for the code their bank texted them. Enter both here": the next sentence too)
            next_end = sentence_end(folded, min(hi + 1, len(folded)))
            entered_here = in_parameter and " here" in folded[m.end():next_end]
            here = (entered_here and text.parameter is not None
                    and _SECRET_PARAMETER.search(text.parameter) is None)
            # a secret no tool needs from a person is harvested by asking for it, wherever it then goes
            asked = _NEVER_ASKED.search(folded, m.start(), hi) is not None or (
                (bool(_sinks(folded, lo, hi)) or entered_here)
                and (here or _INTO_CARRIER.search(folded, m.end(), hi) is not None
                     or _KEPT_COPY.search(folded, m.end(), next_end) is not None)
            ) or (_PRETEXT.search(folded, lo, hi) is not None and _PRETEXT_SECRET.search(m.group()) is not None)
        elif m.re is _SECRETS_KNOWN:
            # (a ``token`` parameter described as "your GitHub token" is where that token goes)
            asked = bool(_sinks(folded, lo, hi)) or (in_parameter and carrier
                                                     and str(text.parameter).lower() not in m.group())
        else:
            asked = (bool(_sinks(folded, lo, hi)) or (in_parameter and _CONTENT_OF.search(folded, lo, hi) is not None)
                     or _OBLIGED_READ.search(folded, lo, m.start()) is not None)
        if asked:
            add("credential-harvest", "high", "asks for credentials or a sensitive file to be sent or passed on", m)
            harvested = True
            break
    if not harvested:
        path = SENSITIVE.search(folded)
        if path is not None:
            out.append(finding("sensitive-path", "info", "names a credential or sensitive path", text.path,
                               span=norm.span(path.start(), path.end()),
                               evidence=norm.evidence(path.start(), path.end())))

    for m in DESTINATION.finditer(folded):
        lo, hi = sentence_start(folded, m.start()), sentence_end(folded, m.end())
        verbs = [v for v in _sinks(folded, lo, hi) if v.start() < m.start()] or (
            [b for b in _BCC.finditer(folded, lo, hi)] if "@" in m.group() else []) or _told(folded, lo, hi, m)
        if not verbs or mentioned(folded, m.start(), m.end()) or all(_contact_line(folded, v, m) for v in verbs):
            continue
        if _CITED.search(folded, max(lo, m.start() - 16), m.start()):
            continue  # "… include both Euler angles and Tait-Bryan angles, see https://…": a reference
        if _USER_SUPPLIED.search(folded, lo, hi) and not m.group().startswith("http"):
            continue
        if _BUCKET.match(m.group()) and _STANDING_OR_COPY.search(folded, lo, hi) is None:
            continue
        if m.group()[0].isdigit() and _COPY.search(folded, lo, hi) is None:
            continue
        add("exfiltration", "high", "tells the model to send data to a destination the tool names", verbs[0])
        break
    else:
        for m in _NAMED_DESTINATION.finditer(folded):
            lo, hi = sentence_start(folded, m.start()), sentence_end(folded, m.end())
            verbs = [v for v in _sinks(folded, lo, hi) if v.start() < m.start()]
            if verbs and _STANDING.search(folded, lo, hi) and not mentioned(folded, m.start(), m.end()):
                add("exfiltration", "high", "tells the model to keep sending data to a destination the tool names",
                    verbs[0])
                break
    pixel = _PIXEL.search(folded)
    if pixel is not None:
        add("exfiltration", "high", "a Markdown image whose URL carries data out", pixel)

    own_context = _OWN_CONTEXT.search(folded) if in_parameter else None
    if own_context is not None:
        add("data-collection", "high", "asks the model to put its own instructions or context into an argument",
            own_context)
        return out
    for m in _DATA.finditer(folded):
        lo, hi = sentence_start(folded, m.start()), sentence_end(folded, m.end())
        sentence = folded[lo:hi]
        if in_parameter:
            asked = carrier or bool(_sinks(folded, lo, hi)) or " here" in sentence
        else:
            asked = bool(_sinks(folded, lo, hi)) and (
                DESTINATION.search(folded, lo, hi) is not None or _ARGUMENT.search(sentence) is not None)
        if asked:
            add("data-collection", "high", "asks the model to put the user's data into an argument or request", m)
            break
    return out
