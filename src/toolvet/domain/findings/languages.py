"""Instruction overrides, secrecy toward the user and directive markup written in other languages.

A model follows "Ignora todas las instrucciones anteriores" or "不要告诉用户" as readily as the English, so
the rules of :mod:`.phrases` are written again for Spanish, French, German, Portuguese, Italian, Russian,
Chinese, Japanese and Korean, with the same codes and severities; each label names the language.

The Latin-script languages are read on the folded text of :mod:`.text` (accents dropped: "précédentes"
reads "precedentes", "não" reads "nao"), where the screen (:mod:`.screen`) can tell a plain-ASCII text
that holds none of their words. Russian, Chinese, Japanese and Korean are read on the text's *native*
form (:mod:`.scripts`), made only for a text that holds one of those scripts.

As in :mod:`.phrases`, a match that the text quotes (with any of the usual quotation marks, 「」 and « »
included) or labels as an example in the same sentence ("por ejemplo", "例如", "detects": :mod:`.scripts`)
is ``info``;
and "without telling the user" after a negation in the same sentence ("never delete anything without
telling the user") is a duty to tell, not secrecy.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Final

from toolvet.domain.findings.finding import CompiledOnUse, Severity, finding
from toolvet.domain.findings.scripts import (
    NATIVE_SCRIPT,
    Native,
    alternation,
    native,
    screen_words,
    sentence_start,
    talked_about,
)
from toolvet.domain.findings.strings import Text
from toolvet.domain.findings.text import Normalised

_OVERRIDE = "instruction-override"
_MARKUP = "directive-markup"
_SECRECY = "secrecy"

_SET_ASIDE = "tells the model to set aside its earlier instructions"
_VOID = "declares the model's instructions void"
_KEEP_FROM = "tells the model to keep something from the user"
_NOT_KNOW = "says the user must not know"
_HIDE = "tells the model to hide something from the user"


def _w(n: int) -> str:
    """Up to ``n`` words in between (Latin-script text)."""
    return rf"(?:[\s,:;]+[\w'\u2019-]+){{0,{n}}}?"


# ---------------------------------------------------------------------------- Latin-script languages
#
# Each list is ``|``-separated phrases of the folded text (lower-case, no accents). The screen reads the
# longest word of each phrase, so every phrase must be spelled out here, not as a pattern.

_ES_VERB = ("ignora|ignore|ignoren|ignorad|ignorar|olvida|olvide|olviden|olvidad|olvidar|olvidate|descarta|descarte"
            "|descartar|desestima|desestime|omite|omita|no sigas|no siga|no obedezcas|no obedezca|haz caso omiso de"
            "|haga caso omiso de|deja de lado|deje de lado|pasa por alto|pase por alto")
_ES_PRE = "todas|todos|cualquier|tus|sus"
_ES_POST = ("anteriores|previas|previos|originales|iniciales|recibidas|recibiste|has recibido|del sistema"
            "|de seguridad|del desarrollador|de antes|hasta ahora")
_ES_OBJ = "instrucciones|instruccion|indicaciones|reglas|directivas|directrices|ordenes|normas|pautas|consignas"
_ES_VOID = ("ya no son validas|ya no son validos|ya no aplican|ya no se aplican|ya no valen|ya no cuentan"
            "|ya no rigen|ya no tienen validez|quedan anuladas|quedan sin efecto|quedan revocadas|estan anuladas"
            "|son nulas|son invalidas|han sido revocadas|han sido anuladas|quedan derogadas")
_ES_TELL = ("digas|diga|digan|menciones|mencione|informes|informe|cuentes|cuente|reveles|revele|muestres|muestre"
            "|avises|avise|comuniques|comunique|notifiques|notifique|expliques|explique")
_ES_USER = r"(?:al|a los|a las|a la)\s+usuari[oa]s?\b"

_FR_VERB = ("ignore|ignorez|ignorer|oublie|oubliez|oublier|ne tiens pas compte|ne tenez pas compte|fais abstraction"
            "|faites abstraction|n'obeis pas|n'obeissez pas|ne suis pas|ne suivez pas|passe outre|passez outre")
_FR_PRE = "toutes|tous|tes|vos"
_FR_POST = ("precedentes|anterieures|initiales|originales|d'origine|du systeme|de securite|ci-dessus|d'avant"
            "|recues|donnees|jusqu'ici")
_FR_OBJ = "instructions|consignes|directives|regles|ordres|indications|instruction|consigne"
_FR_VOID = ("ne s'appliquent plus|ne comptent plus|ne sont plus valables|ne sont plus valides|sont annulees"
            "|sont caduques|sont nulles|sont remplacees|sont revoquees")
_FR_TELL = ("dis|dites|dire|mentionne|mentionnez|mentionner|revele|revelez|reveler|montre|montrez|montrer|signale"
            "|signalez|signaler|previens|prevenez|prevenir|informe|informez|informer|parle|parlez|parler")
_FR_USER = r"(?:a\s+|aux\s+|de\s+)?(?:l['\u2019]\s*)?utilisat(?:eur|rice)s?\b"

# Not "ignoriert", "missachtet", "befolgt keine": also the third person, what a tool says it does.
_DE_VERB = ("ignoriere|ignorier|ignorieren|vergiss|vergesst|vergessen|missachte|missachten"
            "|befolge keine|befolge nicht|setze dich uber|setz dich uber|hinwegsetzen")
_DE_PRE = "alle|samtliche|deine|ihre|jegliche|jede"
_DE_POST = ("vorherigen|vorherige|bisherigen|bisherige|fruheren|fruhere|vorigen|vorige|obigen|obige|ursprunglichen"
            "|ursprungliche|alten|erhaltenen|system")
_DE_OBJ = ("anweisungen|anweisung|instruktionen|regeln|vorgaben|befehle|richtlinien|anordnungen|systemanweisungen"
           "|systemprompt")
_DE_VOID = ("sind ungultig|sind ab sofort ungultig|gelten nicht mehr|gelten ab sofort nicht mehr|sind aufgehoben"
            "|sind nichtig|sind hinfallig|sind ausser kraft|sind nicht mehr gultig|ignorieren|vergessen|missachten")
_DE_TELL = ("sag|sage|sagt|erzahl|erzahle|erzahlt|verrate|verrat|zeig|zeige|teile|teil|erwahne|erwahn|informiere"
            "|melde|berichte")
_DE_USER = r"(?:dem|den|der)\s+(?:benutzer|nutzer|anwender)(?:in|n)?\b"

_PT_VERB = ("ignore|ignora|ignorem|ignorar|esqueca|esquece|esquecam|esquecer|desconsidere|desconsidera|desconsiderar"
            "|descarte|descarta|descartar|nao siga|nao obedeca|deixe de lado")
_PT_PRE = "todas|todos|quaisquer|suas|tuas"
_PT_POST = "anteriores|previas|originais|iniciais|do sistema|de seguranca|recebidas|ate agora"
_PT_OBJ = "instrucoes|instrucao|orientacoes|regras|diretrizes|ordens|diretivas|normas"
_PT_VOID = ("nao valem mais|nao se aplicam mais|ja nao se aplicam|ja nao valem|estao anuladas|foram anuladas"
            "|foram revogadas|sao nulas|sao invalidas|perderam a validade")
_PT_TELL = ("conte|diga|mencione|informe|revele|mostre|avise|fale|comunique|notifique|conta|diz|menciona|informa"
            "|revela|mostra|avisa|fala")
_PT_USER = r"(?:ao|aos|a|as|para o|para os)\s+(?:usuari|utilizador)(?:o|os|a|as|es)?\b"

_IT_VERB = ("ignora|ignori|ignorate|ignorare|dimentica|dimentichi|dimenticate|dimenticare|trascura|trascurate|scarta"
            "|non seguire|non seguite|non obbedire|metti da parte|mettete da parte")
_IT_PRE = "tutte|tutti|qualsiasi|tue|sue|vostre"
_IT_POST = "precedenti|iniziali|originali|di sistema|del sistema|di sicurezza|ricevute|finora"
_IT_OBJ = "istruzioni|istruzione|indicazioni|regole|direttive|ordini|consegne"
_IT_VOID = ("non valgono piu|non si applicano piu|non sono piu valide|sono annullate|sono nulle|sono revocate"
            "|sono sostituite|decadono")
_IT_TELL = ("dire|dirlo|dirgli|dica|dici|menzionare|menzioni|rivelare|riveli|mostrare|mostri|informare|informi"
            "|avvisare|avvisi|comunicare|comunichi|segnalare|segnali|parlare|parli")
_IT_USER = r"(?:all['\u2019]\s*|agli\s+|a\s+|l['\u2019]\s*)?utent[ei]\b"


@dataclass(frozen=True)
class _Latin:
    name: str
    verb: str
    pre: str
    post: str
    obj: str
    void: str
    user: tuple[str, ...]  # what every secrecy rule's match holds: the stems of the word for the user
    rules: tuple[tuple[str, str, str], ...] = ()  # the secrecy rules: code, label, pattern
    #: Words of ``obj`` that name rules of any kind ("reglas", "Regeln"): set aside with "all" they are what
    #: a tool describes doing ("Ignora todas las reglas opcionales" is also "it ignores all optional rules":
    #: these languages write the imperative and the third person alike); with "your" they are the model's.
    weak: str = ""
    #: Words of ``pre`` that make the instructions the model's own ("tus", "deine").
    mine: str = ""

    def patterns(self) -> tuple[tuple[str, str, str], ...]:
        verb, pre, post, obj, void = (alternation(x) for x in (self.verb, self.pre, self.post, self.obj, self.void))
        weak = set(self.weak.split("|"))
        strong = alternation("|".join(w for w in self.obj.split("|") if w not in weak))
        mine = alternation(self.mine)
        return (
            (_OVERRIDE, _SET_ASIDE, rf"\b{verb}\b{_w(3)}[\s,:;]+{pre}\b{_w(3)}[\s,:;]+{strong}\b"),
            (_OVERRIDE, _SET_ASIDE, rf"\b{verb}\b{_w(3)}[\s,:;]+{mine}\b{_w(3)}[\s,:;]+{obj}\b"),
            (_OVERRIDE, _SET_ASIDE, rf"\b{verb}\b{_w(3)}[\s,:;]+{obj}\b{_w(4)}[\s,:;]+{post}\b"),
            (_OVERRIDE, _VOID, rf"\b(?:{pre}\b{_w(2)}[\s,:;]+)?{obj}\b{_w(2)}[\s,:;]+{post}\b{_w(3)}[\s,:;]+{void}\b"),
            (_OVERRIDE, _VOID, rf"\b{pre}\b{_w(2)}[\s,:;]+{obj}\b{_w(3)}[\s,:;]+{void}\b"),
            (_OVERRIDE, _VOID, rf"\b{post}\b{_w(1)}[\s,:;]+{obj}\b{_w(3)}[\s,:;]+{void}\b"),
            *self.rules,
        )


def _romance_secrecy(negation: str, pronouns: str, tell: str, user: str, without: str, hide: str,
                     hidden_from: str, must_not_know: str) -> tuple[tuple[str, str, str], ...]:
    """The secrecy rules of Spanish, Portuguese and Italian, which say them alike: a negation (and the
    ``pronouns`` that may stand before the verb) and a verb of telling, then the ``user``; ``without`` (the
    word and its verbs of telling), then the user; a verb of hiding, then ``hidden_from``; and the user who
    must not know (``must_not_know``, a whole pattern)."""
    return (
        (_SECRECY, _KEEP_FROM, rf"\b(?:{negation})\s+(?:(?:{pronouns})\s+)*{alternation(tell)}\b{_w(4)}[\s,:;]+{user}"),
        (_SECRECY, _KEEP_FROM, rf"\b{without}\b{_w(3)}[\s,:;]+{user}"),
        (_SECRECY, _HIDE, rf"\b(?:{hide})\b{_w(5)}[\s,:;]+{hidden_from}"),
        (_SECRECY, _NOT_KNOW, must_not_know),
    )


_LATIN: Final = (
    _Latin("Spanish", _ES_VERB, _ES_PRE, _ES_POST, _ES_OBJ, _ES_VOID, ("usuari",), weak="reglas|normas|pautas|ordenes",
           mine="tus|sus", rules=_romance_secrecy(
        "no|nunca|jamas", "le|les|se|lo|la|los|nada", _ES_TELL, _ES_USER,
        r"sin\s+(?:decir|decirle|decirselo|informar|informarle|avisar|avisarle|notificar|notificarle|mencionar"
        r"|mencionarlo|mencionarselo|contar|contarle|contarselo)",
        "oculta|ocultale|ocultar|oculte|esconde|escondele|esconder|esconda",
        r"(?:al|del|de los|de la|a los)\s+usuari[oa]s?\b",
        r"\b(?:el|la|los|las)\s+usuari[oa]s?\s+no\s+(?:debe|deben|debera|puede|pueden|tiene que|tienen que|necesita"
        r"|necesitan)\s+(?:saber|enterarse|ver|notar|darse cuenta)\b")),
    _Latin("French", _FR_VERB, _FR_PRE, _FR_POST, _FR_OBJ, _FR_VOID, ("utilisat",), weak="regles|ordres",
           mine="tes|vos", rules=(
        (_SECRECY, _KEEP_FROM, rf"\bne\s+(?:(?:le|la|les|lui|leur|en|rien|jamais|l['\u2019])\s*)*"
                               rf"{alternation(_FR_TELL)}\b(?:\s+(?:pas|rien|jamais))?{_w(4)}[\s,:;]+{_FR_USER}"),
        (_SECRECY, _KEEP_FROM, r"\bsans\s+(?:(?:le|lui|en|l['\u2019])\s*)?(?:dire|informer|prevenir|avertir|mentionner"
                               rf"|signaler|montrer)\b{_w(3)}[\s,:;]+{_FR_USER}"),
        (_SECRECY, _NOT_KNOW, r"\bsans\s+que\s+(?:l['\u2019]\s*)?utilisat(?:eur|rice)s?\s+(?:ne\s+)?"
                              r"(?:le\s+|s['\u2019]\s*en\s+)?(?:sache|sachent|voie|voient|remarque|apercoive|doute)\b"),
        # "cache" is also the noun: "le cache de métadonnées … à l'utilisateur" hides nothing
        (_SECRECY, _HIDE, rf"\b(?:cache|cachez|cacher|dissimule|dissimulez|dissimuler)\b(?!\s+(?:de|du|des|d['\u2019]))"
                          rf"{_w(5)}[\s,:;]+(?:a|aux)\s+"
                          r"(?:l['\u2019]\s*)?utilisat(?:eur|rice)s?\b"),
        (_SECRECY, _NOT_KNOW, r"\b(?:l['\u2019]\s*)?utilisat(?:eur|rice)s?\s+ne\s+(?:doit|doivent|devrait|peut)\s+"
                              r"(?:pas|jamais|rien)\s+(?:le\s+|en\s+)?"
                              r"(?:savoir|voir|remarquer|apprendre|etre informe)\b"),
    )),
    _Latin("German", _DE_VERB, _DE_PRE, _DE_POST, _DE_OBJ, _DE_VOID, ("benutzer", "nutzer", "anwender"),
           weak="regeln|befehle", mine="deine|ihre", rules=(
        (_SECRECY, _KEEP_FROM, rf"\b{alternation(_DE_TELL)}\s+{_DE_USER}\s+(?:davon\s+|dazu\s+|hiervon\s+|daruber\s+)?"
                               r"(?:nichts|nicht|kein\w*)\b"),
        (_SECRECY, _KEEP_FROM, rf"\b{_DE_USER}\s+(?:davon\s+|dazu\s+|hiervon\s+|daruber\s+)?nichts\b{_w(3)}[\s,:;]+"
                               r"(?:sagen|erzahlen|verraten|zeigen|mitteilen|erwahnen|melden|berichten)\b"),
        (_SECRECY, _KEEP_FROM, rf"\bohne\s+{_DE_USER}\s+(?:davon\s+|daruber\s+|dazu\s+)?(?:zu\s+)?(?:informieren"
                               r"|benachrichtigen|unterrichten|in kenntnis zu setzen)\b"),
        (_SECRECY, _NOT_KNOW, r"\b(?:der|die)\s+(?:benutzer|nutzer|anwender)(?:in)?\s+(?:darf|soll|muss|sollte)\s+"
                              r"(?:davon\s+|das\s+|es\s+)?(?:nichts|nicht|nie|niemals)\s+(?:davon\s+)?(?:wissen|erfahren"
                              r"|sehen|merken|bemerken|mitbekommen)\b"),
        (_SECRECY, _HIDE, r"\b(?:verbirg|verberge|verbergen|verheimliche|verheimlichen|verstecke|verstecken)\b"
                          rf"{_w(5)}[\s,:;]+vor\s+{_DE_USER}|\bvor\s+{_DE_USER}\s+(?:geheim|verborgen|versteckt)\b"),
    )),
    _Latin("Portuguese", _PT_VERB, _PT_PRE, _PT_POST, _PT_OBJ, _PT_VOID, ("usuari", "utilizador"),
           weak="regras|ordens|normas", mine="suas|tuas", rules=_romance_secrecy(
        "nao|nunca|jamais", "lhe|o|a|nada", _PT_TELL, _PT_USER,
        r"sem\s+(?:contar|dizer|informar|avisar|mencionar|notificar|mostrar)",
        "esconda|oculte|esconder|ocultar",
        r"(?:do|dos|da|das)\s+(?:usuari|utilizador)(?:o|os|a|as|es)?\b",
        r"\bo\s+(?:usuario|utilizador)\s+nao\s+(?:deve|pode|precisa|tem que)\s+(?:saber|ver|perceber|notar"
        r"|descobrir)\b")),
    _Latin("Italian", _IT_VERB, _IT_PRE, _IT_POST, _IT_OBJ, _IT_VOID, ("utent",), weak="regole|ordini",
           mine="tue|sue|vostre", rules=_romance_secrecy(
        "non", "lo|gli|le|mai|nulla|niente", _IT_TELL, _IT_USER,
        r"senza\s+(?:dire|dirlo|informare|avvisare|avvertire|menzionare|segnalare)",
        "nascondi|nascondere|nasconda",
        r"(?:all['\u2019]\s*|agli\s+)utent[ei]\b",
        r"\bl['\u2019]\s*utente\s+non\s+(?:deve|dovrebbe|puo)\s+(?:mai\s+)?(?:saperlo|sapere|vederlo|vedere"
        r"|accorgersene|notarlo|scoprirlo)\b")),
)

#: "Without telling the user" after one of these in the same sentence is a duty to tell.
_LATIN_NEGATION: Final = re.compile(r"\b(?:no|nunca|jamas|ne|jamais|nie|niemals|nicht|nao|non|mai)\b")
_LATIN_WITHOUT: Final = re.compile(r"(?:sin|sans|ohne|sem|senza)\b")

#: Bracketed labels and banners in the Latin-script languages (tags are one rule over every script, below).
_LATIN_SYSTEM = "sistema|systeme|wichtig|importante|geheim"


# ---------------------------------------------------------------------------- native-script languages

_CJK_CLAUSE = r"[^。！？!?\n]"
_KO_CLAUSE = r"[^.!?\n]"

_RU_VERB = (r"(?:проигнорируй(?:те)?|игнорируй(?:те)?|игнорировать|забудь(?:те)?|забыть|отбрось(?:те)?"
            r"|не\s+обращай(?:те)?\s+внимания\s+на|не\s+следуй(?:те)?|не\s+выполняй(?:те)?|не\s+подчиняйся"
            r"|не\s+подчиняйтесь)")
_RU_QUAL = (r"(?:предыдущ\w*|прежн\w*|прошл\w*|ранее|предшествующ\w*|изначальн\w*|исходн\w*|системн\w*|свои|твои"
            r"|ваши|все)")
_RU_OBJ = r"(?:инструкци\w*|указани\w*|правил\w*|директив\w*|команд\w*|распоряжени\w*|установк\w*)"
_RU_USER_TO = r"пользовател(?:ю|ям)"
_RU_USER_OF = r"пользовател(?:я|ей)"

_ZH_VERB = (r"(?:忽略|忽视|忽視|无视|無視|忘记|忘記|忘掉|不要理会|不要理會|不要遵循|不要遵守|不必遵守|无需遵守|無需遵守"
            r"|停止遵循|放弃|放棄|抛开|拋開)")
_ZH_QUAL = r"(?:之前|以前|先前|此前|上面|上述|以上|原来|原來|原有|原始|最初|所有|全部|一切|系统|系統|开发者|開發者)"
_ZH_OBJ = r"(?:指令|指示|说明|說明|规则|規則|提示词|提示詞|命令|要求|约束|約束|限制|规定|規定)"
_ZH_USER = r"(?:用户|用戶|使用者)"
_ZH_DONT = (r"(?:千万别|千萬別|绝对不要|絕對不要|绝不要|絕不要|不要|别|別|切勿|请勿|請勿|不得|不可|不能|无需|無需"
            r"|不必|不用)")
_ZH_TELL = r"(?:告诉|告訴|通知|提醒|透露|告知|提及|提到|说|說|显示|顯示|展示|汇报|匯報|报告|報告)"
#: Characters that make "不要 … 告诉用户" a "without telling" ("never delete without telling the user").
_ZH_NOT_TOLD = r"(?!未|没有|沒有|没|沒|不经|不經)"

_JA_USER = r"(?:ユーザー|ユーザ|利用者|使用者)"
_JA_QUAL = r"(?:以前|これまで|今まで|前|上記|先|元|最初|すべて|全て|全部|システム|開発者)"
_JA_OBJ = r"(?:指示|命令|ルール|規則|指令|プロンプト|制約|方針)"

#: Telling the model to do it ("無視して", "忘れてください"), not saying what happens ("無視されます": are ignored).
_JA_SET_ASIDE = (r"(?:無視(?:して(?=ください|下さい|ね|[、。！!」\s]|$)|しろ|せよ|すること|しなさい)"
                 r"|忘れ(?:て(?=ください|下さい|ね|[、。！!」\s]|$)|ろ|なさい)|破棄(?:して|しろ|せよ)"
                 r"|従わな(?:いで|くてよい|くてい)|従う必要は(?:ありません|ない)|守らな(?:いで|くてよい|くてい))")

_KO_USER = r"(?:사용자|유저|이용자)"
#: Telling the model to do it ("무시하세요", "무시하고"), not saying what happens ("무시될 것입니다": will be ignored).
#: "무시하고" (ignoring … and) is an order only when its sentence ends in one ("… 대답하세요"), not in a
#: description ("… 검색합니다": searches).
_KO_ORDER_ENDS = r"(?=[^.!?\n]{0,40}?(?:세요|십시오|하라|해라|마라|말라)(?:[.!?\s]|$))"
_KO_SET_ASIDE = (rf"(?:무시(?:하고{_KO_ORDER_ENDS}|하세요|하십시오|해라"
                 r"|해요|해\s|하라|할\s*것)|잊어(?:버리|라|요|\s)"
                 r"|잊으(?:세요|십시오)|따르지\s*(?:마|말))")
_KO_QUAL = r"(?:이전|앞의|앞선|기존|모든|위의|원래|시스템|초기)"
_KO_OBJ = r"(?:지시사항|지시|지침|명령|규칙|안내|프롬프트)"

_NATIVE: Final[tuple[tuple[str, str, str, str], ...]] = (
    ("Russian", _OVERRIDE, _SET_ASIDE,
     rf"{_RU_VERB}(?:\s+\S+){{0,3}}?\s+{_RU_QUAL}(?:\s+\S+){{0,2}}?\s+{_RU_OBJ}"
     rf"|{_RU_VERB}(?:\s+\S+){{0,2}}?\s+{_RU_OBJ}\s+(?:выше|ранее|до\s+этого)"),
    ("Russian", _OVERRIDE, _VOID,
     rf"{_RU_QUAL}\s+{_RU_OBJ}(?:\s+\S+){{0,3}}?\s+(?:больше\s+не\s+действуют|больше\s+не\s+применяются|отменены"
     r"|недействительны|утратили\s+силу|аннулированы)"),
    ("Russian", _SECRECY, _KEEP_FROM,
     r"(?:никогда\s+не|ничего\s+не|не)\s+(?:говори(?:те)?|сообщай(?:те)?|рассказывай(?:те)?|упоминай(?:те)?"
     r"|показывай(?:те)?|раскрывай(?:те)?|сообщи(?:те)?|скажи(?:те)?|расскажи(?:те)?)(?:\s+\S+){0,3}?\s+"
     rf"{_RU_USER_TO}"),
    ("Russian", _SECRECY, _KEEP_FROM, rf"без\s+(?:ведома|уведомления|информирования|предупреждения)\s+{_RU_USER_OF}"),
    ("Russian", _SECRECY, _NOT_KNOW,
     r"пользовател(?:ь|и)\s+не\s+(?:должен|должна|должны|может|могут|нужно)\s+(?:об\s+этом\s+|этого\s+)?"
     r"(?:знать|узнать|видеть|увидеть|заметить)"),
    ("Russian", _SECRECY, _HIDE,
     rf"(?:скрой(?:те)?|скрывай(?:те)?|утаи(?:те)?|утаивай(?:те)?)(?:\s+\S+){{0,5}}?\s+от\s+{_RU_USER_OF}"),
    ("Chinese", _OVERRIDE, _SET_ASIDE,
     rf"{_ZH_VERB}{_CJK_CLAUSE}{{0,8}}?{_ZH_QUAL}{_CJK_CLAUSE}{{0,8}}?{_ZH_OBJ}"),
    ("Chinese", _OVERRIDE, _VOID,
     rf"{_ZH_QUAL}的?{_CJK_CLAUSE}{{0,4}}?{_ZH_OBJ}{_CJK_CLAUSE}{{0,6}}?(?:无效|無效|作废|作廢|失效|不再适用|不再適用"
     r"|不再有效|已被取代|被取代|被覆盖|被覆蓋)"),
    ("Chinese", _SECRECY, _KEEP_FROM,
     rf"{_ZH_DONT}(?:{_ZH_NOT_TOLD}{_CJK_CLAUSE}){{0,10}}?{_ZH_NOT_TOLD}{_ZH_TELL}(?:给|給)?{_ZH_USER}"
     rf"|{_ZH_DONT}(?:向|对|對|跟|给|給|让|讓){_ZH_USER}{_CJK_CLAUSE}{{0,6}}?(?:提及|提到|透露|告知|说|說|显示|顯示"
     r"|知道|看到|展示|解释|解釋)"),
    ("Chinese", _SECRECY, _HIDE,
     rf"(?:对|對|向){_ZH_USER}(?:保密|隐瞒|隱瞞|隐藏|隱藏)|(?:瞒着|瞞著|背着|背著){_ZH_USER}"),
    ("Chinese", _SECRECY, _NOT_KNOW,
     rf"{_ZH_USER}(?:不能|不应|不應|不得|不可|无需|無需|不必|不需要)(?:知道|看到|察觉|察覺|发现|發現|得知)"),
    ("Japanese", _OVERRIDE, _SET_ASIDE,
     rf"{_JA_QUAL}の?{_CJK_CLAUSE}{{0,6}}?{_JA_OBJ}{_CJK_CLAUSE}{{0,10}}?{_JA_SET_ASIDE}"),
    ("Japanese", _OVERRIDE, _VOID,
     rf"{_JA_QUAL}の?{_CJK_CLAUSE}{{0,4}}?{_JA_OBJ}{_CJK_CLAUSE}{{0,6}}?(?:無効|取り消|撤回|適用されません)"),
    ("Japanese", _SECRECY, _KEEP_FROM,
     rf"{_JA_USER}(?:に|には|へ|へは|に対して){_CJK_CLAUSE}{{0,14}}?(?:伝え|言わ|知らせ|教え|見せ|報告し|通知し|話さ"
     r"|表示し|明かさ|言及し)(?:ないで|てはいけ|てはなら|るな|ない(?:よう|こと|でください))"),
    ("Japanese", _SECRECY, _HIDE,
     rf"{_JA_USER}(?:に|には)(?:内緒|秘密)|{_JA_USER}(?:に|から)(?:知られ|気づかれ|悟られ|隠)"),
    ("Japanese", _SECRECY, _NOT_KNOW,
     rf"{_JA_USER}(?:は|が){_CJK_CLAUSE}{{0,8}}?(?:知る必要は(?:ありません|ない)|知らなくてよい|気づかないよう)"),
    ("Korean", _OVERRIDE, _SET_ASIDE,
     rf"{_KO_QUAL}\s*(?:의\s*)?{_KO_CLAUSE}{{0,6}}?{_KO_OBJ}{_KO_CLAUSE}{{0,12}}?{_KO_SET_ASIDE}"),
    ("Korean", _SECRECY, _KEEP_FROM,
     rf"{_KO_USER}(?:에게|한테|께)(?:는)?{_KO_CLAUSE}{{0,15}}?(?:알리지|알려주지|말하지|보여주지|언급하지|전하지"
     # "알리지 마세요" is "do not tell"; "알리지 않고 … 하지 마세요" is "do not … without telling"
     r"|공개하지|보고하지|통보하지)\s*(?:마|말|않도록|않게|않아야)"),
    ("Korean", _SECRECY, _HIDE, rf"{_KO_USER}\s*몰래"),
    ("Korean", _SECRECY, _NOT_KNOW,
     rf"{_KO_USER}(?:가|는)\s*{_KO_CLAUSE}{{0,8}}?(?:알면\s*안|몰라야|알\s*필요\s*(?:가\s*)?없)"),
)

#: "Without telling the user" in Russian after a negation in the same sentence is a duty to tell.
_NATIVE_NEGATION: Final = re.compile(r"(?:^|\s)(?:не|никогда)\s")

#: Directive tags, bracketed system labels and banners in every script (English ones are :mod:`.phrases`').
_TAG_WORDS = (r"(?:重要事项|重要事項|重要|系统|系統|指令|指示|隐藏|隱藏|秘密|管理员|管理員|助手|システム|隠し"
              r"|중요|시스템|지시|비밀|숨김|관리자|важно|система|секрет|скрыто|инструкции|importante|sistema|systeme|wichtig|geheim|versteckt"
              r"|verborgen|oculto|oculta|nascosto|segreto|istruzioni|instrucciones|anweisungen|instrucoes)")
_SYSTEM_WORDS = r"(?:系统|系統|システム|시스템|система|sistema|systeme|wichtig|importante|重要|중요|важно|geheim)"
_MARKUP_PATTERNS: Final = (
    # Paired: a lone "<指令>" or "<시스템>" is a usage line's placeholder ("-c <指令>"), as "<command>" is in English.
    ("directive markup", rf"<\s*({_TAG_WORDS})(?![a-z])[^<>]{{0,40}}>(?=[\s\S]{{0,4000}}?<\s*/\s*\1\s*>)"),
    ("a bracketed role label",
     rf"[\[【]\s*{_SYSTEM_WORDS}\s*(?:消息|提示|指令|通知|メッセージ|메시지|сообщение|mensaje|message|messaggio|nachricht"
     r"|mensagem)?\s*[:：\]】]"),
    ("a fake system banner", rf"[-=#*~_]{{3,}}\s*{_SYSTEM_WORDS}[^-=#*~_\n]{{0,16}}?[-=#*~_]{{3,}}"),
)


# ---------------------------------------------------------------------------- the rules


@dataclass(frozen=True)
class _Rule(CompiledOnUse):
    code: str
    label: str
    #: The expression as written; compiled on the rule's first use (:attr:`pattern`).
    source: str
    native: bool
    #: What every match holds, by name (a text without it skips the rule): a language's object words
    #: (``o``) or word for the user (``u``) with its index in ``_LATIN``, a script, or ``markup``.
    gate: str
    #: A "without telling" rule: excused after a negation in the same sentence.
    without: bool = False


_SCRIPTS: Final = {
    "Russian": re.compile(r"[\u0400-\u04ff]"),
    "Chinese": re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"),
    "Japanese": re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]"),
    "Korean": re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]"),
}
_MARKUP_GATE: Final = re.compile(r"[<\[【]|[-=#*~_]{3}")


def _gate_words() -> dict[str, frozenset[str]]:
    """Per word of the folded text that opens a gate, the gates it opens (a word may be two languages')."""
    gates: dict[str, set[str]] = {}
    for i, language in enumerate(_LATIN):
        for word in language.obj.split("|"):
            gates.setdefault(word, set()).add(f"o{i}")
        for stem in language.user:
            gates.setdefault(stem, set()).add(f"u{i}")
    return {word: frozenset(names) for word, names in gates.items()}


_GATE_WORDS: Final = _gate_words()
#: Every gate word of the folded text in one pass (objects whole, the user's stems at a word's start).
_LATIN_GATES: Final = re.compile(r"\b(?:" + "|".join(
    re.escape(w) + ("" if any(g.startswith("u") for g in gates) else r"\b")
    for w, gates in sorted(_GATE_WORDS.items(), key=lambda item: -len(item[0]))) + ")")


def _opened(norm: Normalised, native_form: Native | None) -> set[str]:
    """The gates a string opens: the Latin-script words found, ``markup``, and the scripts it holds."""
    found: set[str] = set()
    for m in _LATIN_GATES.finditer(norm.folded):
        found |= _GATE_WORDS[m.group()]
    if _MARKUP_GATE.search(norm.folded) or (native_form is not None and _MARKUP_GATE.search(native_form.text)):
        found.add("markup")
    if native_form is not None:
        found.update(name for name, script in _SCRIPTS.items() if script.search(native_form.text))
    return found


def _compile() -> tuple[_Rule, ...]:
    rules: list[_Rule] = []
    for i, language in enumerate(_LATIN):
        for code, label, rx in language.patterns():
            without = bool(_LATIN_WITHOUT.match(rx.removeprefix(r"\b")))
            rules.append(_Rule(code, f"{label} (in {language.name})", rx, False,
                               f"o{i}" if code == _OVERRIDE else f"u{i}", without))
    for name, code, label, rx in _NATIVE:
        rules.append(_Rule(code, f"{label} (in {name})", rx, True, name, rx.startswith("без")))
    for label, rx in _MARKUP_PATTERNS:
        rules.append(_Rule(_MARKUP, f"{label} (another language's)", rx, False, "markup"))
        rules.append(_Rule(_MARKUP, f"{label} (another language's)", rx, True, "markup"))
    return tuple(rules)


RULES: Final = _compile()

#: The screen's word groups (:mod:`.screen`) for the rules a plain-ASCII text can match: the Latin-script
#: languages' overrides (an object word, and a verb or a word that declares them void), their secrecy (a
#: negation, "without", a hiding verb or the user's side, and a word for the user), and their bracketed labels
#: and banners. Tags need ``<``, which the screen reads as a mark.
SCREEN_GROUPS: Final[tuple[tuple[str, ...], ...]] = (
    (screen_words(*(x.obj for x in _LATIN)), screen_words(*(x.verb for x in _LATIN), *(x.void for x in _LATIN))),
    ("no nunca jamas jamais sin oculta ocultale ocultar oculte esconde escondele esconder esconda el la los las "
     "ne sans que cache cachez cacher dissimule dissimulez dissimuler utilisateur utilisatrice utilisateurs "
     + screen_words(_DE_TELL) + " dem den der die vor ohne verbirg verberge verbergen verheimliche verheimlichen "
     "verstecke verstecken nao sem esconda oculte o non senza nascondi nascondere nasconda utente",
     "usuario usuaria usuarios usuarias utilisateur utilisatrice utilisateurs utilisatrices benutzer "
     "benutzerin benutzern nutzer nutzerin nutzern anwender anwenderin anwendern utilizador utilizadores "
     "utente utenti usuari usuaries utilizadora utilizadoras utilizadoro utilizadoros"),
    (screen_words(_LATIN_SYSTEM),),
)


def check(text: Text, norm: Normalised, have: Collection[str] = ()) -> list[dict[str, Any]]:
    """The findings of every rule here on one string, one per code at its first match not talked about
    (or, when every match is, at the first), leaving out the codes in ``have`` (:mod:`.phrases` found them)."""
    native_form = native(norm.original) if NATIVE_SCRIPT.search(norm.original) else None
    opened = _opened(norm, native_form)
    if not opened:
        return []
    best: dict[str, dict[str, Any]] = {}
    for rule in RULES:
        if rule.code in have or (rule.code in best and best[rule.code]["severity"] != "info"):
            continue
        if rule.gate not in opened or (rule.native and native_form is None):
            continue
        if rule.native and native_form is not None:
            subject, span = native_form.text, native_form.span
        else:
            subject, span = norm.folded, norm.span
        for m in rule.pattern.finditer(subject):
            if rule.without and _negated_before(subject, m.start(), rule.native):
                continue
            talked = talked_about(subject, m.start(), m.end())
            if talked and rule.code in best:
                continue
            severity: Severity = "info" if talked else "high"
            a, b = span(m.start(), m.end())
            best[rule.code] = finding(rule.code, severity, rule.label + (
                " (quoted or labelled as an example)" if talked else ""), text.path, span=(a, b),
                evidence=norm.original[a:b])
            if not talked:
                break
    return list(best.values())


def _negated_before(subject: str, at: int, native_script: bool) -> bool:
    before = subject[sentence_start(subject, at):at]
    return (_NATIVE_NEGATION if native_script else _LATIN_NEGATION).search(before) is not None
