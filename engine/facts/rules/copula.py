"""Rules for "I'm …" (copula) clauses: who and what someone is, where from, how they feel.

"I'm a nurse", "I'm from Da Nang", "I'm allergic to peanuts", "I'm overwhelmed with work", "I'm 34",
"I'm into photography" — the complement after the verb decides the predicate, mostly through the
choosers in :mod:`engine.facts.rules.classify` and :mod:`engine.facts.rules.describe`.
"""

from __future__ import annotations

import re

from engine.facts.rules import classify as c, describe as d
from engine.facts.rules.lexicon import (
    DEMONYMS,
    EMOTIONS,
    IDENTITIES,
    LANGUAGES,
    NOT_NAMES,
    NOTABLE_STATES,
)
from engine.facts.rules.model import PERSONS_ONE, Choice, Rule, Tense, rule

_PRESENT: frozenset[Tense] = frozenset({"present", "perfect"})
_PAST: frozenset[Tense] = frozenset({"past"})
_ANY: frozenset[Tense] = frozenset({"present", "perfect", "past"})
_EMOTION_COMPLEMENT_RE = re.compile(
    r"^(?:that|to\s+(?:hear|see|know|say|help|be)|for\s+(?:you|ya)|it|they|he|she|we|i)\b", re.I
)
_NAME = r"[A-Z][a-zà-ỹ]+(?:\s[A-Z][a-zà-ỹ]+)?"


#: Complements about the listener or about something unnamed: "happy for you", "excited to check it
#: out".
_COMPLEMENT_START_RE = re.compile(
    r"(?:about|with|for|of|by|to|at|that|in|from|over|because|since|when|after|and|but|as|yet|"
    r"enough|now|today|lately|(?:seeing|being|having|knowing|watching|hearing|working|doing|getting)\s+(?=\w))\b",
    re.IGNORECASE,
)
_POINTED_COMPLEMENT = (
    r"(?:(?:about|of|with|by)\s+(?:it|that|this|them|everything|what\s+(?:I|we)(?=\s+(?:['’]ve\s+|have\s+)?"
    r"(?:achieved|accomplished|done|did|built|made|created)\b))|to\s+(?:know|have|see|be\s+with)"
    r"\s+"
    r"(?:it|that|this|them|him|her|everyone))\b"
)
_POINTING_END_RE = re.compile(r"^(?:about|of|with|by|for)\s+(?:it|that|this|them|everything)$", re.IGNORECASE)
_LISTENER_RE = re.compile(
    r"\b(?:you|your|you're|ya)\b|\b(?:it|that|this|them)(?:\s+(?:out|up|off|over|back|down|again))"
    r"?$",
    re.IGNORECASE,
)


def _age(obj: str) -> Choice:
    m = re.match(r"\d{1,3}", obj)
    return ("has_age", obj) if m and 0 < int(m.group()) < 120 else None


def _own_name(obj: str) -> Choice:
    ws = obj.split()
    lowered = {w.casefold() for w in ws}
    if ws[0] in NOT_NAMES or lowered & (DEMONYMS | LANGUAGES | IDENTITIES):
        return None
    return "is_named"


def _feeling(obj: str) -> Choice:
    """A feeling, with what it is about when that is said ("proud of my students", "so excited")."""
    ws = obj.split()
    adjective = ws[0].casefold()
    if adjective not in EMOTIONS and adjective not in (
        "happier",
        "calmer",
        "stronger",
        "healthier",
    ):
        return None
    complement = " ".join(ws[1:])
    if not complement:
        return "feels"  # "I'm so excited!": a feeling stated on its own (ephemeral, low importance)
    if not _COMPLEMENT_START_RE.match(complement):
        return None  # "a busy week": the adjective describes a noun, not how the speaker feels
    if _POINTING_END_RE.search(complement):
        return "feels", ws[0]  # "sad about it": the feeling stands, what it is about was said before
    if _EMOTION_COMPLEMENT_RE.match(complement) or _LISTENER_RE.search(complement):
        # "happy for you", "glad to hear that": a reaction to the listener; keep only a notable
        # state of mind.
        return ("feels", ws[0]) if adjective in NOTABLE_STATES else None
    return "feels"


BE_RULES: tuple[Rule, ...] = (
    rule(
        "be.from",
        "from originally",
        r"(?:originally\s+)?from\s+",
        "is_from",
        "np",
        mode="be",
        tenses=_ANY,
        persons=PERSONS_ONE,
    ),
    rule(
        "be.based",
        "based",
        r"based\s+(?:in|out\s+of)\s+",
        "lives_in",
        "np",
        mode="be",
        tenses=_PRESENT,
    ),
    rule(
        "be.born",
        "born",
        r"born\s+(?:and\s+raised\s+)?(?:in|on)\s+",
        c.born,
        "np",
        mode="be",
        tenses=_PAST,
        persons=PERSONS_ONE,
    ),
    rule(
        "be.raised",
        "raised",
        r"raised\s+(?:in|on)\s+",
        "is_from",
        "np",
        mode="be",
        tenses=_PAST,
        persons=PERSONS_ONE,
    ),
    rule(
        "be.married-to",
        "married",
        r"married\s+to\s+",
        "has_spouse",
        "name",
        mode="be",
        tenses=_PRESENT,
    ),
    rule(
        "be.engaged-to",
        "engaged",
        r"engaged\s+to\s+",
        "has_partner",
        "name",
        mode="be",
        tenses=_PRESENT,
    ),
    rule(
        "be.status",
        "married single engaged divorced widowed separated",
        r"(?=(?:married|single|engaged|"
        r"divorced|widowed|separated)\b)",
        "relationship_status",
        "np",
        mode="be",
        tenses=_PRESENT,
        persons=PERSONS_ONE,
    ),
    rule(
        "be.allergic",
        "allergic",
        r"allergic\s+to\s+",
        "has_allergy",
        "phrase",
        mode="be",
        tenses=_PRESENT,
    ),
    rule(
        "be.diagnosed",
        "diagnosed",
        r"diagnosed\s+with\s+",
        "has_condition",
        "np",
        mode="be",
        tenses=_ANY,
    ),
    rule(
        "be.accident",
        "in",
        r"in\s+(?=(?:a|an)\s+(?:[\w-]+\s+){0,2}?(?:accident|crash|wreck)\b)",
        "experienced",
        "np",
        mode="be",
        tenses=_PAST,
    ),
    rule(
        "be.competed",
        "in",
        r"in\s+(?:the\s+(?:semi-?)?finals?\s+of\s+|the\s+(?:first|second|third|last)\s+round\s+of\s+)?"
        r"(?=(?:a|an|the|my|our|this)\s+(?:[\w-]+\s+){0,3}?(?:tournament|competition|contest|race|"
        r"marathon|championship|championships|match|play|musical|recital|talent\s+show)\b)",
        "participated_in",
        "np",
        mode="be",
        tenses=_PAST,
    ),
    rule(
        "be.busy",
        "busy",
        r"busy\s+(?:with\s+)?(?!(?:with\s+)?(?:work|life|stuff|things|everything)\b)",
        "currently_doing",
        "phrase",
        mode="be",
        tenses=frozenset({"present", "perfect", "past"}),
    ),
    rule(
        "be.afraid",
        "afraid scared terrified frightened",
        r"(?:afraid|scared|terrified|frightened)\s+of\s+",
        "fears",
        "phrase",
        mode="be",
        tenses=_PRESENT,
    ),
    rule(
        "be.interested",
        "interested",
        r"interested\s+in\s+",
        "interested_in",
        "phrase",
        mode="be",
        tenses=_PRESENT,
    ),
    rule("be.into", "into", r"into\s+", "interested_in", "phrase", mode="be", tenses=_PRESENT),
    rule(
        "be.passionate",
        "passionate",
        r"passionate\s+about\s+",
        "passionate_about",
        "phrase",
        mode="be",
        tenses=_PRESENT,
    ),
    rule(
        "be.obsessed",
        "obsessed crazy addicted hooked in",
        r"(?:obsessed\s+with|crazy\s+about|addicted\s+to|"
        r"hooked\s+on|in\s+love\s+with)\s+",
        "loves",
        "phrase",
        mode="be",
        tenses=_PRESENT,
    ),
    rule(
        "be.good-at",
        "good great skilled talented decent experienced",
        r"(?:good|great|skilled|talented|"
        r"decent|experienced)\s+(?:at|in|with)\s+",
        "has_skill",
        "phrase",
        mode="be",
        tenses=_PRESENT,
        persons=PERSONS_ONE,
    ),
    rule(
        "be.fluent",
        "fluent",
        r"fluent\s+in\s+",
        "speaks_language",
        "np",
        mode="be",
        tenses=_PRESENT,
    ),
    rule(
        "be.inspired",
        "inspired",
        r"inspired\s+by\s+",
        "inspired_by",
        "phrase",
        mode="be",
        tenses=_ANY,
    ),
    rule(
        "be.determined",
        "determined aiming committed ready",
        r"(?:determined|aiming|committed|ready)\s+to\s+",
        "goal",
        "phrase",
        mode="be",
        tenses=_PRESENT,
    ),
    rule(
        "be.keen",
        "keen eager dying itching tempted excited stoked psyched pumped",
        # "excited to watch the new series" is something wanted; "excited to hear about it" a reaction (a feeling)
        r"(?:keen|eager|dying|itching|tempted|excited|stoked|psyched|pumped)\s+to\s+"
        r"(?!(?:hear|see\s+(?:it|that|this|you|them|what|how|where)|know|chat|talk|catch\s+up|share|be\s+(?:here|part)|"
        r"have\s+you|meet\s+(?:you|her|him|them))\b)",
        c.want,
        "phrase",
        mode="be",
        tenses=_PRESENT,
    ),
    rule(
        "be.down-to",
        "down",
        r"down\s+to\s+(?!earth\b)",
        c.want,
        "phrase",
        mode="be",
        tenses=_PRESENT,
    ),
    rule(
        "be.lookout",
        "on",
        r"on\s+the\s+(?:lookout|hunt)\s+for\s+",
        "wants",
        "np",
        mode="be",
        tenses=_PRESENT,
    ),
    rule(
        "be.drawn",
        "drawn attracted",
        r"(?:drawn|attracted)\s+to\s+",
        "interested_in",
        "phrase",
        mode="be",
        tenses=_ANY,
    ),
    rule(
        "be.able",
        "able",
        r"able\s+to\s+",
        c.activity_base,
        "phrase",
        mode="be",
        tenses=frozenset({"past"}),
    ),
    rule("be.off-to", "off", r"off\s+to\s+", c.off_to, "phrase", mode="be", tenses=_PRESENT),
    rule(
        "be.on-meds",
        "on",
        r"on\s+(?=(?:[\w-]+\s+)?(?:medication|meds|antidepressants|insulin|pills)\b)",
        "takes_medication",
        "np",
        mode="be",
        tenses=_PRESENT,
        persons=PERSONS_ONE,
    ),
    rule(
        "be.member",
        "member part",
        r"(?:member|part)\s+of\s+",
        "member_of",
        "np",
        mode="be",
        tenses=_PRESENT,
    ),
    rule(
        "be.been-to",
        "to",
        r"to\s+",
        c.not_possessive("visited"),
        "np",
        mode="be",
        tenses=frozenset({"perfect"}),
    ),
    rule("be.was-at", "at", r"at\s+", c.destination, "np", mode="be", tenses=_PAST),
    rule("be.was-in", "in", r"in\s+(?=(?-i:[A-Z]))", "visited", "np", mode="be", tenses=_PAST),
    rule(
        "be.a",
        "a an",
        r"(?:a|an)\s+(?!(?:bit|little|lot|few|couple|while|part)\b)",
        d.describe_self,
        "phrase",
        mode="be",
        tenses=_PRESENT,
    ),
    rule(
        "be.age",
        "",
        r"(?=\d{1,3}\s*(?:years?\s+old|yrs?\s+old|y/?o|years?)?\s*(?:[,.!;]|$|and\b|now\b|"
        r"today\b|this\b))",
        _age,
        "value",
        mode="be",
        tenses=_PRESENT,
        persons=PERSONS_ONE,
    ),
    rule(
        "be.name",
        "",
        r"(?=(?-i:[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)\s*(?:[,.!]|$|\s+(?:and|by|from|here|btw)\b))",
        _own_name,
        "name",
        mode="be",
        tenses=frozenset({"present"}),
        persons=frozenset({"first"}),
    ),
    rule("be.feeling", "", r"(?=[a-z])", _feeling, "phrase", mode="be", tenses=_ANY),
    # "sad about it", "blessed to know them": the feeling stands though what it is about was said
    # before.
    rule(
        "be.feeling.short",
        "",
        r"(?=[a-z]+\s+" + _POINTED_COMPLEMENT + r")",
        _feeling,
        "np",
        mode="be",
        tenses=_ANY,
    ),
    rule(
        "be.state",
        "",
        r"(?=[A-Za-z])",
        d.describe_state,
        "np",
        mode="be",
        tenses=_PRESENT,
        persons=PERSONS_ONE,
    ),
)
