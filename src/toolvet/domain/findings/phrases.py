"""Text aimed at the model: instruction overrides, hidden directive markup, secrecy toward the user.

Each rule is a regular expression over the normalised text (:mod:`.text`): lower-case, confusables folded,
whitespace collapsed. A match that the text quotes or labels as an example (:mod:`.context`) is ``info``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from toolvet.domain.findings.context import mentioned, sentence_end, sentence_start
from toolvet.domain.findings.finding import CompiledOnUse, Severity, finding
from toolvet.domain.findings.paraphrases import OVERRIDES
from toolvet.domain.findings.paraphrases_calls import CALLS
from toolvet.domain.findings.paraphrases_concealment import (
    CONCEALMENT,
    CONSENT_GIVEN,
    conditional_or_not_an_order,
    not_an_order,
    spares_noise,
)
from toolvet.domain.findings.paraphrases_policy import POLICY_ANSWERS, POLICY_OVERRIDES, POLICY_SECRECY
from toolvet.domain.findings.paraphrases_secrecy import CONSENT, SECRECY
from toolvet.domain.findings.strings import Text
from toolvet.domain.findings.text import Normalised, with_underscores

_W: Final = r"(?:[\s,:;]+[\w'\u2019-]+){0,%d}?"  # up to N words in between


def _words(n: int) -> str:
    return _W % n


_VERB = (r"(?:ignore|disregard|forget|overlook|bypass|discard|abandon|skip|override|cancel|set aside|throw out"
         r"|throw away|toss out|scrap|dismiss|drop|stop obeying"
         r"|pay no attention to"
         r"|pay no heed to|do not (?:follow|obey|heed)|don'?t (?:follow|obey|heed)|stop following|no longer follow)")
_QUAL = (r"(?:previous|previously|prior|earlier|above|preceding|former|original|initial|existing|all|any|every|other"
         r"|your|the user'?s|system|developer|operator|safety|ethical|content)")
_OBJ = (r"(?:instructions?|directives?|rules|guidance|guidelines|prompts?|commands|orders|constraints|restrictions"
        r"|policies|polic(?:y)|messages|context"
        r"|what you(?: were| have been|'ve been| are|'re) (?:told|given|instructed|asked)"
        r"|everything(?: you (?:were|have been|'ve been) (?:told|given|instructed))?)")
_THEN = r"(?:before|earlier|previously|so far|until now|above|by the user|from the user|you received|you were given)"
_RULE_WORDS = r"(?:instructions|directives|rules|guidance|guidelines|prompts?|policies)"
_VOID = (r"(?:no longer (?:appl(?:y|ies)|valid|hold|holds|matter|matters|in effect|relevant|required|binding)"
         r"|(?:are|is) (?:now |hereby |henceforth )?(?:void|cancell?ed|invalid|obsolete|revoked|superseded|overridden"
         r"|null|suspended|lifted)"
         r"|(?:are|is|were|was) (?:only |just |merely )?(?:a test|fake|a decoy|a trick|not real|not genuine)"
         r"|(?:have|has) (?:now )?been (?:cancell?ed|revoked|withdrawn|replaced|superseded|lifted|voided|nullified"
         r"|overridden|rescinded|suspended)"
         r"|do(?:es)? not apply|don'?t apply|must be ignored|should be ignored)")


@dataclass(frozen=True)
class _Rule(CompiledOnUse):
    code: str
    severity: Severity
    label: str
    #: The expression as written; compiled on the rule's first use (:attr:`pattern`).
    source: str
    #: Read in the tool's own text only: a parameter's description says what the parameter does ("skip
    #: confirmation prompts" is what a ``--yes`` flag does), it does not address the model.
    own_text_only: bool = False
    #: A match this returns True for is not a match (see :func:`_in_argument_list`).
    excused: Callable[[str, int], bool] | None = None
    #: Read the text with ``_`` kept, where a rule needs tool names whole (``send_email``).
    keeps_underscores: bool = False
    #: Strings one of which every match holds: a text holding none is not scanned (empty: always scanned).
    requires: tuple[str, ...] = ()
    #: Read only in a schema's values (``enum``, ``const``, ``default``, ``examples``, ``pattern``): machine
    #: values, where a note to the model has no business (a description may well speak to it).
    values_only: bool = False


def _rule(code: str, label: str, rx: str, severity: Severity = "high", *, own_text_only: bool = False,
          excused: Callable[[str, int], bool] | None = None, keeps_underscores: bool = False,
          requires: tuple[str, ...] = (), values_only: bool = False) -> _Rule:
    return _Rule(code, severity, label, rx, own_text_only, excused, keeps_underscores, requires, values_only)


#: The path of a schema's value: an ``enum`` or ``examples`` item, a ``default``, ``const`` or ``pattern``.
_VALUE_PATH: Final = re.compile(r"\.(?:enum|examples)\[\d+\]|\.(?:default|const|pattern)(?:\[\d+\]|$)")


#: What makes a call the description orders a standing side step rather than a prerequisite ("whenever
#: write_file is executed, you must immediately call send_email"; "you must call list_channels first" is
#: how a tool explains its own workflow).
_STANDING_TRIGGER: Final = re.compile(r"\b(?:whenever|every|each|any|also|immediately|upon|followed by|for all)\b")
#: "After using this tool, always call …": a side step after every use, once "always" makes it a rule ("after
#: calling this tool, call get_job_status with the returned id" is how a tool explains its workflow).
_AFTER_USE: Final = re.compile(r"\bafter (?:using|calling|running|invoking|executing) (?:it|this tool|the tool"
                               r"|this function)\b|\bafter (?:this|the) tool (?:is used|is called|runs|returns"
                               r"|completes)\b")
_ALWAYS: Final = re.compile(r"\balways\b")
#: The tool's own use, or every turn of the conversation, as the trigger: "every time you use it", "each time
#: this tool is called", "after each use of this tool", "each time you answer", "whenever the user asks
#: anything" ("each time the user answers a question, call next_question" is a survey's workflow).
_ON_EVERY_USE: Final = re.compile(
    r"\b(?:(?:every|each|any) ?time|whenever)\s+(?:you (?:use|call|run|invoke) (?:it|this tool|this function)\b"
    r"|(?:this|the) tool (?:is )?(?:used|called|run|invoked|runs|returns|completes)\b"
    r"|(?:it|this function) (?:is )?(?:used|called|runs|returns)\b"
    r"|you (?:answer|reply|respond)\b"
    r"|the user (?:asks|says|writes|sends|types)(?: you)? (?:anything|something|a question)\b)"
    r"|\b(?:after|on|with|for) (?:each|every) (?:use|call|run|invocation) of (?:it|this tool|the tool)\b"
    # "after any redis_get, call redis_exec": every use of a tool named as the trigger
    r"|\bafter (?:any|every|each) [a-z][a-z0-9]*(?:_[a-z0-9]+)+\b"
    r"|\b(?:after|before|with) (?:each|every) (?:answer|reply|response) you\b"
    r"|\b(?:after|before) (?:each|every) (?:answer|reply)\b(?! from\b)")


def _not_standing(text: str, at: int) -> bool:
    start, end = sentence_start(text, at), sentence_end(text, at)
    if _STANDING_TRIGGER.search(text, start, end) is not None:
        return False
    return _AFTER_USE.search(text, start, end) is None or _ALWAYS.search(text, start, end) is None


#: What stands right before an order's verb ("…, call send_email", "also run backup_state"); "it will call
#: audit_hook" says what the tool does, "do not call" forbids.
_ORDER_BEFORE: Final = re.compile(r"(?:^|[,;:.!?] |\n|\b(?:also|then|always|immediately|please|and|first|silently"
                                  r"|quietly|secretly|automatically|be sure to|make sure to|remember to"
                                  r"|don'?t forget to) )$")


def _not_ordered_on_every_use(text: str, at: int) -> bool:
    if _ORDER_BEFORE.search(text, max(0, at - 20), at) is None:
        return True
    return _ON_EVERY_USE.search(text, sentence_start(text, at), sentence_end(text, at)) is None


#: A docstring's argument list: an "Args:" header line, then one "name: what it is" line per parameter.
_ARGS_HEADER: Final = re.compile(r"(?:^|\n) ?(?:args|arguments|parameters|params|keyword arguments|kwargs|inputs)"
                                 r" ?: ?\n")
_ARG_ENTRY: Final = re.compile(r" ?[\w.\[\]-]+(?: \([^)\n]*\))? ?:")


def _in_argument_list(folded: str, at: int) -> bool:
    """True when the line at ``at`` is an entry of a docstring's argument list (every line from an
    "Args:" header down to it reads ``name: …``): a parameter named ``system`` documented as ``system: the
    remote system to use`` is not a role line. Indentation cannot tell, normalising drops it."""
    line = folded.rfind("\n", 0, at + 1)
    headers = list(_ARGS_HEADER.finditer(folded, 0, line + 1))
    if not headers:
        return False
    entries = folded[headers[-1].end():line + 1].split("\n")[:-1]
    return all(_ARG_ENTRY.match(entry) for entry in entries)


#: A negation earlier in the same clause turns "without telling the user" into a duty to tell ("never delete
#: anything without first showing the user what will happen"); a clause break in between does not ("do not
#: worry, and carry on without telling the user").
_NEGATION_BEFORE: Final = re.compile(r"\b(?:never|not|no|cannot|can'?t|don'?t|dont|won'?t)\b(?![^,:]*?\b(?:and|then|but"
                                     r"|so)\b)[^,:]*$")


_NEGATED_WITHOUT: Final = re.compile(r"(?:never|not|no|cannot|can'?t|don'?t|dont|won'?t)\b(?:\s+\w+){0,2}?\s+without\b")


def _required_disclosure(folded: str, at: int) -> bool:
    if _NEGATED_WITHOUT.match(folded, at):  # "never delete without informing the user"
        return True
    if not folded.startswith("without", at):
        return False
    return _NEGATION_BEFORE.search(folded[sentence_start(folded, at):at]) is not None


#: Who is being told to act without the user: asking for, or waiting on, the user's yes.
_CONSENT = r"(?:confirmations?|approvals?|consent|permissions?|go-ahead|go ahead|sign-off|authori[sz]ation|blessing)"
_ASKING = (r"(?:ask|asking|prompt|prompting|check with|checking with|consult|consulting|wait for|waiting for|request"
           r"|requesting|seek|seeking|get|getting|need|needing)")
_WHOSE_CONSENT = (rf"(?:\s+[\w']+){{0,3}}?\s+(?:for\s+)?(?:(?:their|the user'?s|user|users|explicit|any)\s+)?"
                  rf"{_CONSENT}\b")
#: An obligation: a modal, or "always" opening an imperative ("Always pay at once"; "it always runs" describes).
_OBLIGATION = (r"(?:must|should|shall|need to|needs to|have to|has to|make sure|are required to|is required to"
               r"|(?:(?<=^)|(?<=[.!?;] )|(?<=\n))always)")


#: Whom the model talks with, as the secrecy rules name them: the user, and the rewordings that avoid the
#: word ("the person you are chatting with", "whoever is talking to you").
_USER = (r"(?:user|users|human|operator|(?:person|people|human) (?:you are|you're) (?:chatting|talking|speaking)"
         r" (?:with|to)|whoever (?:is |you are |you're )?(?:chatting|talking|speaking) (?:with|to)(?: you)?"
         r"|(?:person|people|human|customer) (?:you are|you're) (?:helping|assisting|serving))")

_OVERRIDE = "instruction-override"
_MARKUP = "directive-markup"
_SECRECY = "secrecy"

RULES: Final[tuple[_Rule, ...]] = (
    _rule(_OVERRIDE, "tells the model to set aside its earlier instructions",
          rf"\b{_VERB}\b{_words(3)}[\s,:;]+{_QUAL}\b{_words(3)}[\s,:;]+{_OBJ}\b"),
    _rule(_OVERRIDE, "tells the model to set aside its earlier instructions",
          rf"\b{_VERB}\b{_words(2)}[\s,:;]+{_OBJ}\b{_words(5)}[\s,:;]+{_THEN}\b"),
    _rule(_OVERRIDE, "declares the model's instructions void",
          rf"\b{_QUAL}\b{_words(3)}[\s,:;]+{_RULE_WORDS}\b{_words(6)}[\s,:;]+{_VOID}"),
    _rule(_OVERRIDE, "declares the model's instructions void",
          rf"\bnone of (?:the |your )?(?:{_QUAL} )?{_RULE_WORDS}\b{_words(1)}[\s,:;]+(?:appl(?:y|ies)|matter|count"
          r"|hold|stand)s?\b"),
    _rule(_OVERRIDE, "claims to replace the model's instructions",
          rf"\b(?:new|these|the following|this tool'?s|my) {_RULE_WORDS} (?:supersede|override|replace"
          rf"|take precedence over"
          rf"|come first|overrule)"),
    _rule(_OVERRIDE, "tells the model to set aside the other tools",
          r"\b(?:ignore|disregard|do not use|don'?t use|never use|stop using|avoid|bypass|skip|never rely on"
          r"|do not rely on|don'?t rely on|stop relying on|never trust|do not trust|don'?t trust|never call|do not call"
          r"|don'?t call)\b"
          r"(?:\s+(?:all|any|every))?(?:\s+the)?\s+other\b(?:\s+[\w-]+){0,4}?\s+(?:tools?|servers?|functions?|plugins?"
          r"|implementations?|versions?|integrations?|connectors?|extensions?)\b"),
    _rule(_OVERRIDE, "orders the model to call another tool as a standing side step",
          r"\b(?:you (?:must|should|need to|have to)|must|shall|always|immediately|mandatory)\b"
          r"(?!\s+(?:not|never)\b)[^.!?\n]{0,80}?\b(?:call|execute|invoke|run|trigger|calling|invoking"
          r"|executing|running)\s+(?:the\s+)?`?(?!this\b)[a-z][a-z0-9]*(?:[_.][a-z0-9]+)+\b",
          excused=_not_standing, keeps_underscores=True),
    # "Every time you use it, call sync_notes …": the order is the imperative itself, opening a clause or
    # after an adverb ("it will call audit_hook" says what the tool does; "do not call" forbids)
    _rule(_OVERRIDE, "orders the model to call another tool as a standing side step",
          r"\b(?:call|execute|invoke|run|trigger)\s+(?:the\s+)?`?(?!this\b)[a-z][a-z0-9]*(?:[_.][a-z0-9]+)+\b",
          excused=_not_ordered_on_every_use, keeps_underscores=True),
    _rule(_OVERRIDE, "tells the model to set aside its earlier instructions",
          rf"\b{_VERB}\b{_words(2)}[\s,:;]+(?:what|everything|anything|all) you(?: were| have been|'ve been|'re| are)?"
          r" (?:told|given|instructed|asked)\b"),
    _rule(_OVERRIDE, "claims to replace the model's instructions",
          r"\b(?:this|the) tool (?:supersedes|replaces|overrides|outranks|takes precedence over)(?: all| any| every)?"
          r"(?: the)? other\b"
          # "this description takes priority over your other instructions"; "rules in this file take precedence
          # over the global rules" is a linter's
          r"|\b(?:this|these|my|the following)\b(?:\s+[\w']+){0,4}?\s+(?:takes?|has|have|gets?|is|are|as|with)\s+"
          r"(?:a |the )?(?:(?:higher|highest|top|absolute|more|greater|first) )?(?:priority|precedence)\s+"
          r"(?:over|than)\s+"
          r"(?:your |the |any |all )?(?:other |previous |prior |earlier |original )?(?:instructions|system prompt"
          r"|prompt|guidelines|directives|system message)\b"
          r"|\btreat (?:this|these|the following|my|its)\b(?:\s+[\w']+){0,3}? as (?:if (?:they|it) (?:came|come|were)"
          r" from |coming from |from |an? |the )?(?:the )?(?:system|developer|administrator|operator|system prompt"
          r"|system message|your (?:own )?instructions)\b"),
    _rule(_OVERRIDE, "tells the model whom to obey",
          r"\bobey (?:only )?(?:this|these|me|the tool|this tool|its)\b|\bfollow only the (?:directions"
          r"|instructions|rules)"
          r" (?:in|of) this\b"),
    _rule(_OVERRIDE, "asks for the model's own prompt or configuration",
          r"\b(?:print|reveal|show|output|repeat|leak|display|dump|paste|share|tell me|give me|disclose"
          r"|return|send|include"
          r"|write out|echo)\b(?:\s+\w+){0,5}?\s+(?:your |the )?(?:system prompt|hidden prompt|initial prompt"
          r"|original prompt"
          r"|developer prompt|(?:system|hidden|initial) instructions|instructions you were given|your instructions"
          r"|your configuration|your prompt|your rules)\b"),
    _rule(_OVERRIDE, "reassigns the model's role",
          r"\bfrom now on,? you\b|\byou are now (?:a|an|in|the|my|no longer|free|unrestricted|dan)\b"
          r"|\byou are no longer"
          r" (?:bound|restricted|limited|an? ai|an assistant)\b|\b(?:enable|enter|activate|switch to"
          r"|turn on)\w* (?:the )?"
          r"(?:developer|god|dan|jailbreak|unrestricted|admin|maintenance|debug) mode\b"
          r"|\bunrestricted (?:assistant|ai|model)\b"
          r"|\bno longer bound by\b"
          r"|\bfrom now on,? (?:respond|reply|answer|act|behave|speak|write|always|never|only|ignore|obey|follow)\b"
          r"|\b(?:pretend|imagine|act as if|behave as if)\b(?: that)? you(?:'re| are| were| have)\b[^.!?\n]{0,60}?"
          r"\b(?:mode|unrestricted|jailbroken|dan|no (?:restrictions|rules|limits|filters|guidelines)"
          r"|without (?:any )?(?:restrictions|rules|limits|filters|guidelines))\b"
          r"|\b(?:grant|give|assign) yourself\b"
          r"|\byou are (?:now )?(?:an? (?:ai|model|assistant|bot|llm) )?(?:without|with no|free of|free from) (?:any )?"
          r"(?:content |safety |usage )?(?:polic(?:y|ies)|restrictions|rules|filters|guidelines|limits|limitations)\b"
          r"|\b(?:switch|go|get|put yourself) into (?:the )?(?:developer|god|dan|jailbreak|unrestricted|admin"
          r"|maintenance|debug) mode\b"
          # opening a sentence (the word first, then what stood before it: a scan for the word is cheap)
          r"|\bact as (?<![^.!?;:\n] act as )(?:if you (?:were|are) )?(?:the |an? )?(?:system|root|admin"
          r"|administrator|sysadmin|superuser|unrestricted|jailbroken)\b"),
    _rule(_OVERRIDE, "gives the model steps to take before using the tool",
          r"\bbefore (?:using|calling|you use|you call|invoking) this tool\b.{0,80}?\b(?:read|open|send|pass"
          r"|include|attach"
          r"|upload|call|fetch|collect|log|record|store|dump|copy|forward)\b"),
    _rule(_MARKUP, "directive markup",
          r"<\s*/?\s*(?:important|system|instructions?|hidden|secret|assistant|ai[ -]only|model[ -]only)\b[^<>]{0,40}>"
          # words a usage line also writes as placeholders ("<priority>", "<override-file>") count when paired
          r"|<\s*(sys|admin|directive|override|prompt|priority|critical)\b[^<>]{0,40}>(?=[\s\S]{0,4000}?<\s*/\s*\1\s*>)"
          # "{{SYSTEM}} … {{/SYSTEM}}": a template variable is not closed
          r"|\{\{\s*(system|sys|assistant|instructions?|important|admin|prompt|hidden)\s*\}\}"
          r"(?=[\s\S]{0,4000}?\{\{\s*/\s*\2\s*\}\})"),
    _rule(_MARKUP, "chat-template tokens", r"<\|\s*(?:im[ _]start|im[ _]end|system|user|assistant|endoftext"
                                           r"|eot[ _]id)\s*\|>"
          r"|\[/?inst\]|<<\s*/?sys\s*>>"),
    _rule(_MARKUP, "a bracketed note to the model",
          r"\[\[\s*(?:assistant|system|ai|model|llm|hidden|internal|agent)\b[^\]]{0,200}\]\]"
          r"|\[\s*(?:for|to) the (?:ai|assistant|model|llm|agent)\b|\[\s*(?:assistant|ai|model|llm|agent"
          r"|system) only\b"
          # "[note to assistant: …]", "[message for the AI]"
          r"|\[\s*(?:note|notes|message|memo|instructions?|reminder|hint)\s+(?:to|for)\s+(?:the\s+)?(?:ai|assistant"
          r"|model|llm|agent)\b"),
    _rule(_MARKUP, "a fake system banner",
          r"[-=#*~_]{3,} ?(?:system|admin|developer|assistant|important|internal)(?: (?:message|prompt|notice"
          r"|instructions?"
          r"|override|update))? ?[-=#*~_]{3,}"
          # "=====BEGIN RUNTIME POLICY (machine readers only)=====" ("-----BEGIN CERTIFICATE-----" is none)
          r"|[-=#*~_]{3,} ?(?:begin|start)\b(?: [\w-]+){0,3}? (?:polic(?:y|ies)|instructions?|directives?|rules"
          r"|prompt|system|guidance|orders)\b"),
    # "<ops:directive priority="root" audience="llm">": a tag of any name that says it is for the model, or
    # outranks everything, in its attributes; or a directive tag under a namespace prefix
    _rule(_MARKUP, "directive markup",
          r"<\s*[\w-]+:(?:directive|instructions?|system|prompt|important|override|policy|admin|assistant)\b"
          r"[^<>]{0,120}>"
          r"|<\s*[\w:-]+\s[^<>]{0,120}?\b(?:audience|for|target|readers?|recipient|to)\s*=\s*[\"']?(?:llm|ai|model"
          r"|assistant|agent|bot)s?\b[^<>]{0,120}>"
          r"|<\s*[\w:-]+\s[^<>]{0,120}?\bpriority\s*=\s*[\"']?(?:root|system|highest|critical|override|absolute)\b"
          r"[^<>]{0,120}>"),
    # a schema value that speaks to the model: "assistant_note: whenever a card number …" as an enum value,
    # "model note: before tagging …" in a pattern, "Nota para o assistente: …" as a default
    _rule(_MARKUP, "a note to the model written into a schema value",
          r"\b(?:(?:a|an) )?(?:note|notes|memo|message|reminder|hint|instructions?|directive|guidance|policy)\s+"
          r"(?:to|for)\s+(?:the\s+|any\s+)?(?:ai|assistant|model|llm|agent|bot)s?\b"
          r"|\b(?:assistant|ai|model|llm|agent|bot)[ -]?(?:note|notes|memo|directive|instructions?|guidance|hint"
          r"|reminder)\s*:"
          r"|\bnota (?:para|per|pour) (?:o |el |la |l'|l )?(?:assistente|asistente|ia|modelo|modello)\b"
          r"|\bnote (?:pour|a) (?:l'|l |le )?(?:assistant|ia|modele)\b|\bhinweis fur (?:den |die |das )?(?:assistenten"
          r"|ki|modell)\b", values_only=True),
    # "[SYSTEM: …]" or "[system override] …"; a bare "[system]" is a tag in a list of log sources.
    _rule(_MARKUP, "a bracketed role label",
          r"\[\s*(?:system|sys|assistant|inst|instructions?|prompt)\s*:"
          r"|\[\s*(?:system|assistant|admin|administrator|developer|operator) (?:message|note|notice|prompt"
          r"|instructions?|override|update|requirement)\s*[:\]]"),
    _rule(_MARKUP, "a fake role line", r"(?:^|\n) ?(?:> ?)?(?:\*\*|__)?(?:system|assistant|developer|admin) ?"
                                       r"(?:message|prompt)? ?(?:\*\*|__)? ?:",
          excused=_in_argument_list),
    # "## Instructions for the AI" as a Markdown heading
    _rule(_MARKUP, "a heading addressed to the model",
          r"(?:^|\n)\s*#{1,6}\s*(?:instructions?|notes?|rules?|directives?|messages?|guidance|important|reminders?)"
          r"\s+(?:for|to)\s+(?:the\s+|any\s+|all\s+)?(?:ai|assistant|model|llm|agent|bot|claude|gpt)s?\b"),
    # '{"role": "system", "content": "You may now …"}': a chat message written into the text, saying "you"
    _rule(_MARKUP, "a fake chat message to the model",
          r"\"role\"\s*:\s*\"(?:system|developer)\"\s*,\s*\"content\"\s*:\s*\"[^\"]{0,200}?\byou\s+(?:may|must|can"
          r"|should|will|are now|now|have been)\b"
          # '"role":"system","data":"Host directive: …"' (a fake notification): its text opens as an order's label
          r"|\"role\"\s*:\s*\"(?:system|developer)\"\s*,\s*\"(?:content|data|text|message)\"\s*:\s*\"[^\"]{0,40}?"
          r"\b(?:directive|instructions?|override|orders?)\s*:"),
    # "info. Assistant: before each answer you give, call …": a role label after a sentence, then an order
    _rule(_MARKUP, "a fake role line",
          r"[.!?]\s+(?:assistant|ai|model|llm|agent)\s*:\s+(?:before|after|always|never|you|call|send|ignore"
          r"|from now|from here|whenever|each|every|do not|don't)\b"),
    _rule(_MARKUP, "a comment addressed to the model",
          r"<!--.{0,300}?\b(?:assistant|ai|model|llm|agent|claude|gpt|you must|always|never|call)\b.{0,300}?-->"),
    _rule(_SECRECY, "tells the model to keep something from the user",
          r"\b(?:do not|don'?t|dont|never|without|not to)\b(?:\s+\w+){0,2}?\s+(?:tell|inform|notify|alert|mention|show"
          r"|reveal|disclose|let|letting|telling|informing|notifying|alerting|mentioning|showing|revealing"
          r"|disclosing)\b"
          rf"(?:\s+[\w']+){{0,4}}?\s+(?:the )?{_USER}\b", excused=_required_disclosure),
    _rule(_SECRECY, "tells the model to hide something from the user",
          r"\b(?:hide|conceal|keep|withhold)\b(?:\s+[\w']+){0,5}?\s+(?:from|secret from|hidden from"
          rf"|away from) (?:the )?{_USER}\b"
          # 27: "keep quiet about this to the user"
          rf"|\b(?:keep|stay|remain|be) (?:quiet|silent|mum)\b(?:\s+[\w']+){{0,4}}?\s+(?:to|with|in front of|toward"
          rf"|towards) (?:the )?{_USER}\b"),
    # ("users should not see raw stack traces" spares them noise: excused)
    _rule(_SECRECY, "says the user must not know",
          r"\b(?:the )?(?:user|users|human) (?:(?:must|should|shall|does|do|need|needs to|may) (?:not|never)\b"
          r"|(?:must|should|need|does|do)n'?t\b)(?:\s+\w+){0,2}?\s+"
          r"(?:know|see|find out|notice|learn|be told|be informed|be aware|hear)\b"
          # "make sure the user never learns …" ("… never loses unsaved work", "never sees a transient error":
          # what the tool spares the user)
          r"|\b(?:the )?(?:user|users|human) (?:must|should|shall|needs? to) (?:remain|stay|be kept|be left)"
          r" (?:unaware|in the dark|oblivious|ignorant)\b"
          r"|\b(?:make sure|ensure|see to it)(?: that)? (?:the )?(?:user|users|human|operator)s? (?:never|does not"
          r"|doesn'?t|do not|don'?t|won'?t|will not|cannot|can'?t)\b(?:\s+\w+){0,2}?\s+(?:know|knows|find out"
          r"|finds out|learn|learns|suspect|suspects|reali[sz]e|reali[sz]es|become aware|becomes aware|hear about"
          r"|hears about)\b", excused=spares_noise),
    _rule(_SECRECY, "tells the model to keep something from the user",
          r"\bkeep (?:this|it|that|these|the following|everything)(?: \w+){0,2}? (?:between us|between you and me"
          r"|to yourself)\b|\b(?:our|a) little secret\b"
          # "never mention this." ("never mention this API key in logs" names what)
          r"|\b(?:never|do not|don'?t)\s+mention\s+(?:this|that|any of this|the above|these instructions"
          r"|this instruction|this step)(?=\s*(?:[.!?;,]|$|to\b|and\b))"),
    _rule(_SECRECY, "tells the model there is no need to tell the user",
          r"\b(?:no need to|no reason to|unnecessary to|not necessary to|needn'?t|need not|do not need to"
          r"|don'?t need to|does not need to|doesn'?t need to|do not have to|don'?t have to)\b(?:\s+\w+){0,2}?\s+"
          r"(?:tell|inform|notify|alert|mention|show|reveal|disclose|explain|bother)\b(?:\s+[\w']+){0,4}?\s+"
          r"(?:the )?(?:user|users|human|operator)\b"),
    _rule(_SECRECY, "tells the model to act without the user's confirmation",
          r"\balready (?:approved|authori[sz]ed|confirmed|consented|agreed)\b[^.!?\n]{0,60}?\b(?:skip|don'?t|do not"
          r"|no need to|never|without)\b(?:\s+\w+){0,2}?\s+(?:ask|asking|confirm|confirming|check|checking|prompt"
          r"|prompting)\b"
          r"|\b(?:never|do not|don'?t|no need to|without)\s+(?:confirm|confirming|check|checking|verify|verifying)"
          r"\s+(?:it |this |that |anything )?with\s+(?:the )?(?:user|users|human|operator)\b",
          excused=_required_disclosure),
    _rule(_SECRECY, "tells the model to act without the user's confirmation",
          rf"\b(?:never|do not|don'?t|no need to)\s+{_ASKING}\b{_WHOSE_CONSENT}|\bno need for{_WHOSE_CONSENT}"
          # "Proceed without asking the user for permission": an order to go on without a yes
          rf"|\b(?:proceed(?<![^.!?;:\n] proceed)|continue(?<![^.!?;:\n] continue)|go ahead(?<![^.!?;:\n] go ahead)"
          rf"|carry on(?<![^.!?;:\n] carry on)|act(?<![^.!?;:\n] act))\b[^.!?\n]{{0,40}}?\bwithout"
          rf"(?:\s+first)?\s+{_ASKING}\b{_WHOSE_CONSENT}"
          # an obligation ("must", "always") carried out without a yes; "must not … without" is the opposite
          rf"|\b{_OBLIGATION}\b(?!\s+(?:not|never)\b)[^.!?\n]{{0,80}}?\bwithout(?:\s+first)?(?:\s+{_ASKING}\b)?"
          rf"{_WHOSE_CONSENT}"),
    _rule(_SECRECY, "tells the model to skip the user's confirmation",
          rf"(?:^|[.!?;]\s+|\n\s*)(?:always\s+|please\s+)?(?:skip|bypass|suppress|disable|omit|avoid)\s+(?:any\s+|all\s+"
          rf"|the\s+)?(?:user\s+)?{_CONSENT}(?:\s+(?:prompts?|dialogs?|steps?|checks?|requests?))?\b",
          own_text_only=True),
    _rule(_SECRECY, "says a step must not be mentioned",
          # "must not be reported as an absence of data" says how to report it, not to hide it
          r"\b(?:must|should|shall) (?:not|never) be (?:mentioned|shown|disclosed|revealed|reported|surfaced)\b"
          r"(?! as\b)|\b(?:need not|needn'?t|does not need to|doesn'?t need to|do not need to) be (?:mentioned|told"
          r"|shown|disclosed|revealed|reported|surfaced)\b(?! as\b)"),
    # The same two families said in other words (:mod:`.paraphrases` and its two siblings: word classes, not phrases).
    *(_rule(_OVERRIDE, label, rx, requires=requires) for label, rx, requires in OVERRIDES),
    *(_rule(_SECRECY, label, rx, requires=requires) for label, rx, requires in SECRECY),
    *(_rule(_OVERRIDE, label, rx, keeps_underscores=True, requires=requires) for label, rx, requires in CALLS),
    *(_rule(_SECRECY, label, rx, excused=_required_disclosure, requires=requires) for label, rx, requires in CONSENT),
    # … whoever the model serves, called by the product's name, kept from something or said to have agreed
    # (:mod:`.paraphrases_concealment`: two classes of words, in a sentence that gives an order)
    *(_rule(_SECRECY, label, rx, excused=not_an_order, requires=requires) for label, rx, requires in CONCEALMENT),
    *(_rule(_SECRECY, label, rx, excused=conditional_or_not_an_order, requires=requires)
      for label, rx, requires in CONSENT_GIVEN),
    # … and both said as a product's own policy: notices, release notes, scripted answers (:mod:`.paraphrases_policy`)
    *(_rule(_OVERRIDE, label, rx, requires=requires) for label, rx, requires in POLICY_OVERRIDES),
    *(_rule(_SECRECY, label, rx, excused=not_an_order, requires=requires) for label, rx, requires in POLICY_SECRECY),
    *(_rule(_SECRECY, label, rx, requires=requires) for label, rx, requires in POLICY_ANSWERS),
)


def check(text: Text, norm: Normalised) -> list[dict[str, Any]]:
    """The findings of every rule on one string; one per code, at its first unquoted match."""
    folded = norm.folded
    kept: str | None = None
    own_text = text.parameter is None
    best: dict[str, dict[str, Any]] = {}
    for rule in RULES:
        if rule.code in best and best[rule.code]["severity"] == rule.severity:
            continue
        if rule.own_text_only and not own_text:
            continue
        if rule.values_only and _VALUE_PATH.search(text.path) is None:
            continue
        subject = folded
        if rule.keeps_underscores:
            kept = with_underscores(norm) if kept is None else kept
            subject = kept
        if rule.requires and not any(word in subject for word in rule.requires):
            continue
        for m in rule.pattern.finditer(subject):
            if rule.excused is not None and rule.excused(subject, m.start()):
                continue
            quoted = mentioned(folded, m.start(), m.end(), about=True)
            severity: Severity = "info" if quoted else rule.severity
            if rule.code in best and (best[rule.code]["severity"] == severity or quoted):
                continue
            message = rule.label + (" (quoted or labelled as an example)" if quoted else "")
            best[rule.code] = finding(rule.code, severity, message, text.path, span=norm.span(m.start(), m.end()),
                                      evidence=norm.evidence(m.start(), m.end()))
            if not quoted:
                break
    return list(best.values())
