"""Questions about a person's own slots: "Where do I live now?", "What's my wife's name?", "Where does my son
live?", "What do I take for my migraines?", "Do I still sing in the choir?".

Such a question names a slot (the predicates that hold its answer, best first) and whose slot it is: the asker, a
named person, or a relative the asker refers to ("my son", "my husband").  The recall service resolves a relative
to the people the vault knows in that relation and ranks the live facts of those slots first, so the current value
("User lives in Lisbon") answers rather than a fact that merely shares a word ("Noa lives in Haifa" for *live*).

Rules only, general English: a question the table does not know is left to the ordinary channels.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

_REL = (
    r"(?:son|daughter|kids?|children|child|boy|girl|twins|wife|husband|spouse|partner|girlfriend|boyfriend|gf|bf|"
    r"fianc[ée]e?|mum|mom|mother|dad|father|parents|sister|brother|siblings?|grandson|granddaughter|grandchildren|"
    r"grandkids|cousin|aunt|uncle|niece|nephew|friend|roommate|flatmate|colleague|coworker|workmate|boss|"
    r"(?:line\s+)?manager|supervisor|(?:team\s+)?lead|family|"
    r"dog|cat|pet|puppy|kitten)"
)
#: relation noun → the asker's relationship predicates that name such a person
RELATION_OF = {
    **dict.fromkeys(("son", "daughter", "kid", "kids", "children", "child", "boy", "girl", "twins"), ("has_child",)),
    **dict.fromkeys(("wife", "husband", "spouse"), ("has_spouse", "has_partner")),
    **dict.fromkeys(
        ("partner", "girlfriend", "boyfriend", "gf", "bf", "fiance", "fiancé", "fiancee", "fiancée"),
        ("has_partner", "has_spouse"),
    ),
    **dict.fromkeys(("mum", "mom", "mother", "dad", "father", "parents"), ("has_parent",)),
    **dict.fromkeys(("sister", "brother", "sibling", "siblings"), ("has_sibling",)),
    **dict.fromkeys(
        ("grandson", "granddaughter", "grandchildren", "grandkids", "cousin", "aunt", "uncle", "niece", "nephew"),
        ("has_relative", "has_child"),
    ),
    **dict.fromkeys(("friend", "roommate", "flatmate"), ("has_friend",)),
    **dict.fromkeys(("colleague", "coworker", "workmate"), ("has_colleague",)),
    **dict.fromkeys(
        ("boss", "manager", "supervisor", "lead", "team lead", "line manager"), ("has_manager", "has_colleague")
    ),
    **dict.fromkeys(("dog", "cat", "pet", "puppy", "kitten"), ("has_pet",)),
}

#: (question pattern, predicates that answer it, best first)
_TABLE: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = tuple(
    (re.compile(p, re.IGNORECASE), preds)
    for p, preds in (
        (
            r"\bwhere\b.{0,30}\b(?:live|living|stay|staying|based|reside)\b|\b(?:city|town|neighbou?rhood|country|"
            r"suburb|area)\b.{0,30}\blive\b|\bwhere(?:'s| is)\s+home\b",
            ("lives_in", "moved_to", "located_in", "plans_to", "works_at", "studies_at"),
        ),
        (r"\bwhere\b.{0,25}\b(?:from|grow\s+up|grew\s+up|born)\b|\bhome\s*town\b", ("is_from", "lived_in")),
        (
            r"\bwhere\s+did\b.{0,20}\bwork\b|\bbefore\b.{0,40}\b(?:started|retired|moved|came)\b|\bused\s+to\s+(?:do|work)\b|"
            r"\bworked\b",
            ("previous_job", "worked_at", "works_as"),
        ),
        (
            r"\b(?:restaurant|shop|business|company|firm|practice|caf[eé]|bar|studio|band|shop)['’]?s?\b.{0,15}\bname\b|"
            r"\bname\s+of\s+my\s+(?:restaurant|shop|business|company|firm|practice|caf[eé]|bar|studio|band)\b",
            ("runs_business", "member_of", "works_at"),
        ),
        (r"\bteach\b", ("teaches", "works_as")),
        (
            r"\bwhere\s+did\s+\w+\s+go\b|\bhoneymoon\b|\btrip\b|\bholiday\b|\bvacation\b",
            ("visited", "plans_to", "has_event"),
        ),
        (r"\bwhat\s+department\b|\bwhich\s+(?:department|ward|unit|team)\b", ("works_in_department", "works_at")),
        (r"\b(?:area|field|kind|type)\s+of\s+\w+\b.{0,20}\b(?:practi[cs]e|work|do)\b", ("works_in_field", "works_as")),
        (
            r"\bwhere\b.{0,30}\b(?:work|working|job|employed)\b|\b(?:which|what)\s+(?:company|firm|employer|business)\b|"
            r"\bwho\s+do\s+\w+\s+work\s+for\b|\bwork\s+for\b",
            ("works_at", "runs_business", "works_as", "works_in_department"),
        ),
        (
            r"\bwhat\b.{0,20}\b(?:do|does)\b.{0,15}\b(?:for\s+(?:a\s+)?(?:work|living|job)|do\s+for\s+work)\b|"
            r"\b(?:job|role|title|occupation|profession|position)\b|\bwhat\s+do\s+i\s+do\b|\bworking\s+or\s+studying\b",
            ("works_as", "works_at", "runs_business", "studies", "studies_at", "plans_to"),
        ),
        (r"\b(?:postdoc|phd|internship|residency|apprenticeship)\b", ("works_at", "plans_to", "studies_at")),
        (
            r"\b(?:which|what)\s+(?:school|college|uni|university)\b|\bwhere\b.{0,30}\b(?:study|studies|school|college|uni|"
            r"university)\b|\bgo\s+to\s+(?:school|college|uni)",
            ("studies_at", "studies", "enrolled_in", "has_degree", "graduated_from", "plans_to"),
        ),
        (
            r"\bwhat\s+did\b.{0,25}\b(?:study|major|degree)\b|\bfirst\s+degree\b|\bdegree\s+in\b",
            ("has_degree", "graduated_from", "studies", "studies_at"),
        ),
        (
            r"\bwhat\s+was\s+my\b.{0,20}\b(?:time|score|result|grade|mark|place|rank|finish)\b|\bhow\s+did\b.{0,40}\bdo\b|"
            r"\bhow\s+did\b.{0,40}\b(?:go|went|get\s+on)\b",
            ("achieved", "participated_in", "attended"),
        ),
        (
            r"\bwhat\b.{0,25}\b(?:study|studying|major|degree|course)\b",
            ("studies", "studies_at", "has_degree", "enrolled_in", "graduated_from", "plans_to"),
        ),
        (
            r"\bname\b|\bcalled\b|\bwho\s+(?:is|am|are)\b|\bengaged\b|\bmarried\b|\bseeing\s+anyone\b|\bsingle\b|"
            r"\bdating\b|\brelationship\b",
            ("relationship_status", "has_partner", "has_spouse"),
        ),
        (
            r"\bhealth\b|\bcondition|\bdiagnos|\billness|\bdisease|\bwrong\s+with\s+(?:my|me)\b|"
            r"\b(?:back|knee|hip|shoulder|neck|wrist|ankle|foot|feet)\s+(?:problem|pain|issue|trouble)s?\b",
            ("has_condition", "has_injury", "has_allergy"),
        ),
        (r"\ballerg", ("has_allergy", "has_condition")),
        (r"\bmedicat|\bmedicine|\bpills?\b|\btake\s+for\b|\bprescri", ("takes_medication",)),
        (
            r"\bdiet|\bvegetarian|\bvegan\b|\bdietary\b|\beat\b|\bfood\b",
            ("diet", "has_allergy", "has_condition", "avoids"),
        ),
        (r"\bsmoke|\bsmoking\b", ("stopped", "avoids", "consumes")),
        (r"\bdrink\b|\balcohol\b|\bcoffee\b", ("consumes", "stopped", "avoids")),
        (r"\b(?:car|vehicle|van|truck)\b|\bdrive\b", ("drives",)),
        (r"\blanguage|\bspeak\b", ("speaks_language", "native_language")),
        (r"\binstrument\b", ("plays_instrument",)),
        (r"\bsports?\b|\bexercise\b|\bwork\s*out\b", ("plays_sport", "exercises", "does_regularly")),
        (r"\bbirthday\b|\bwhen\s+was\b.{0,20}\bborn\b", ("has_birthday",)),
        (r"\bhow\s+old\b|\bwhat\s+age\b|\bage\s+(?:is|of)\b|\bmy\s+age\b", ("has_age", "has_birthday")),
        (r"\bstill\b", ("stopped", "sold", "avoids")),
    )
)
_RELATION_RE = re.compile(
    r"\b(?:my|our)\s+(?P<rel>" + _REL + r")(?:['’]s\b)?(?:\s+(?P<name>(?-i:[A-Z])[\w'’-]+))?", re.IGNORECASE
)
#: The question asks for the relation itself ("what's my son's name", "who am I engaged to").
_ASKS_RELATION_RE = re.compile(
    r"\b(?:name|names|called|who\s+(?:is|are)\s+my|who\s+am\s+i\s+(?:engaged|married|dating|seeing))\b", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class SlotQuestion:
    """What a personal question asks: the predicates that answer it and whose they are."""

    predicates: tuple[str, ...]
    relation: str | None = None  # a relative the question refers to ("son"), lower case
    relation_predicates: tuple[str, ...] = ()  # the asker's predicates naming such relatives
    name: str | None = None  # a name given with the relative ("my son Dariush")
    asks_relation: bool = False  # the answer is the relation fact itself ("what's my wife's name")


def slot_question(text: str) -> SlotQuestion | None:
    """The slot a question asks about, or None when it is not a personal question the rules know."""
    predicates: list[str] = []
    for pattern, preds in _TABLE:
        if pattern.search(text):
            predicates.extend(p for p in preds if p not in predicates)
    rel = _RELATION_RE.search(text)
    relation = rel.group("rel").casefold() if rel else None
    if relation in ("family",):
        relation = None  # "my family" is the asker and theirs: the asker's slots answer
    rel_preds = RELATION_OF.get(relation or "", ())
    asks_relation = (
        relation is not None and bool(_ASKS_RELATION_RE.search(text)) and rel is not None and not rel.group("name")
    )
    if asks_relation:
        predicates = list(rel_preds)
    if not predicates:
        return None
    return SlotQuestion(
        tuple(predicates),
        relation,
        rel_preds,
        rel.group("name") if rel else None,
        asks_relation,
    )


#: A plan whose date has passed answers for the slot it planned: a move for where someone lives, a start for work.
DONE_PLANS: dict[str, tuple[str, ...]] = {
    "lives_in": ("move", "live"),
    "works_as": ("start", "work", "join"),
    "works_at": ("start", "work", "join"),
    "studies_at": ("study", "start"),
    "studies": ("study", "start"),
}


def slot_rank(
    predicate: str,
    object_text: str,
    subject_id: int,
    valid_from: datetime | None,
    *,
    predicates: tuple[str, ...],
    subject_ids: tuple[int, ...],
    reference: datetime,
    now: bool,
) -> int | None:
    """Where a fact stands among a personal question's answers (0 = the asked slot itself), or None when it is
    not part of the asked slots.

    A plan whose date has passed ranks as the value it planned ("plans to move to Midtown (Dec 1)", asked in
    February, says where they live); asked about now, a value that only holds from a later date ranks after every
    other.
    """
    if predicate not in predicates or (subject_ids and subject_id not in subject_ids):
        return None
    rank = predicates.index(predicate)
    later = valid_from is not None and valid_from > reference + timedelta(days=1)
    if predicate == "plans_to" and valid_from is not None and not later and predicates:
        words = object_text.casefold().split()
        if words and words[0] in DONE_PLANS.get(predicates[0], ()):
            rank = 0
    if later and now:
        rank += len(predicates)
    return rank
