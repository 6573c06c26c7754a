"""Choosers: pick the predicate for an already matched object from what the object is.

"I play the violin" and "I play basketball" share one pattern; the object decides between
``plays_instrument`` and ``plays_sport``.  A chooser returns a predicate name, a ``(predicate,
object)`` pair when the object must be reshaped, or None to reject the match (the object is not what
the pattern is about).
"""

from __future__ import annotations

import re

from engine.facts.rules.lexicon import (
    CHAT_VERBS,
    CREATIONS,
    EVENT_NOUNS,
    FRAMEWORKS,
    GAMES,
    INSTRUMENTS,
    LANGUAGES,
    OCCUPATIONS,
    PETS,
    PLACE_NOUNS,
    RELATIONS,
    ROUTINE_PLACES,
    SPORTS,
    TECHNOLOGIES,
    word_set,
)
from engine.facts.rules.model import Choice, Chooser

_WORD_RE = re.compile(r"[\w'’+#.-]+")
_TRAVEL_PLAN_RE = re.compile(
    r"(?:visit(?:ing)?|go(?:ing)?\s+(?:back\s+)?to|travel(?:l?ing)?\s+to|head(?:ing)?\s+to|"
    r"fly(?:ing)?\s+to|"
    r"mov(?:e|ing)\s+to|(?:tak(?:e|ing)\s+)?(?:(?:a|an|my|our)\s+)?(?:[\w-]+\s+)?(?:trip|vacation|"
    r"holiday|visit)\s+to)"
    r"\s+(?:the\s+)?(?P<place>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,3})$"
)
_FOR_OTHERS_RE = re.compile(
    r"(?:my\s+\w+|our\s+\w+|you|him|her|them|people|everyone|everybody|someone|others|the\s+kids|kids)\s+"
    r"(?:[\w'-]+\s+)?to\s",
    re.IGNORECASE,
)
_ADJECTIVES = word_set(
    "safe new big small good great nice beautiful little special cozy warm lovely huge amazing "
    "awesome happy healthy strong delicious tasty fun real"
)
#: "a total movie fan", "a sucker for superheroes", "a big coffee lover": a liking stated as an
#: identity.


_VERBISH = word_set("go have see get do make take grab meet catch")
_GENERIC_WORKS = word_set("book books series novel movie movies show shows film films one thing stuff")
_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
_DATE_RE = re.compile(
    r"\d|\b(?:" + "|".join(_MONTHS) + r"|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|today|next|noon|midnight|end\s+of)"
    r"\b",
    re.IGNORECASE,
)
_POSSESSIVE_START = word_set("my our his her their your")
_PLACE_PREPOSITIONS = frozenset(["in", "at", "on", "during", "near"])
_POINTING = word_set("it that this them you ya u him her us me there what what's how")
_CONSUMABLES = word_set(
    "tickets ticket groceries food lunch dinner breakfast coffee tea drinks gift gifts present "
    "presents stuff things clothes snacks gas"
)
_BUSINESS = word_set(
    "business company store shop startup bakery cafe café restaurant studio blog channel podcast "
    "salon agency farm clinic practice bar brand boutique firm nonprofit non-profit charity "
    "website"
)
_GROUPS = word_set(
    "club team group gym band choir orchestra community league society association union crew "
    "squad organization organisation church congregation troupe circle"
)
_THEMES = re.compile(r"^(?:dark|light|night|high[\s-]contrast)\s+(?:mode|theme)$", re.IGNORECASE)
_VAGUE_FAVORITES = word_set("part moment memory bit thing time one")
_MADE_IDIOMS = word_set(
    "mistake mistakes decision decisions choice choices difference sense progress friends it time "
    "plans money call point effort change changes day sure living appointment reservation list "
    "fun peace way deal mess promise comeback move moves noise impression connection connections "
    "that this them"
)


_ACTIVITY_NOUNS = (
    SPORTS
    | INSTRUMENTS
    | word_set(
        """
        dance music art pottery yoga photography writing poetry gaming games cooking baking
        gardening hiking travel knitting painting drawing reading fitness exercise sport sports
        running swimming
        """
    )
)
_ART_FORMS = word_set("pottery woodworking calligraphy embroidery crafts ceramics sculpture knitting")
_EXERCISES = word_set(
    "yoga pilates kickboxing crossfit karate judo taekwondo boxing ballet gymnastics workouts "
    "workout cardio weights lifting running swimming cycling"
)


def words(obj: str) -> list[str]:
    """Lowercase word tokens of an object."""
    return [w.casefold().strip(".'’") for w in _WORD_RE.findall(obj)]


def head_noun(obj: str) -> str:
    """The last word of a noun phrase, lowercased (its head in English)."""
    ws = words(obj)
    return ws[-1] if ws else ""


def is_proper(obj: str) -> bool:
    """True when every word of the object is capitalised (a name, a place, a title)."""
    ws = obj.split()
    return bool(ws) and all(w[:1].isupper() or w in ("of", "de", "la", "the", "and") for w in ws)


def looks_like_date(obj: str) -> bool:
    """True when the object names a date, a weekday or a relative day."""
    return _DATE_RE.search(obj) is not None


def not_possessive(predicate: str) -> Chooser:
    """A chooser keeping ``predicate`` unless the object is someone's unnamed something ("my
    husband")."""

    def choose(obj: str) -> Choice:
        return None if words(obj)[0] in _POSSESSIVE_START else predicate

    return choose


def is_activity(obj: str) -> bool:
    """True when an object names an activity: a gerund, a hobby, a sport or an art ("Dance",
    "pottery").
    """
    ws = words(obj)
    return bool(ws) and (ws[0].endswith("ing") or ws[0] in _ACTIVITY_NOUNS)


def destination(obj: str) -> Choice:
    """Where someone went: an event (attended), a place (visited), or a routine trip (rejected)."""
    named = re.search(r"\b(?:called|named)\s+(?P<name>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,3})$", obj)
    if named:
        return "visited", named.group("name")
    ws = words(obj)
    if not ws or (ws[0] in _POSSESSIVE_START and ws[-1] in ROUTINE_PLACES):
        return None
    if any(w in EVENT_NOUNS for w in ws[-2:]):
        return "attended"
    if ws[-1] in ROUTINE_PLACES or ws[-1] in ("gym", "doctor", "dentist"):
        return None
    if is_proper(obj) or any(w in PLACE_NOUNS for w in ws):
        return "visited"
    return None


def photo_place(obj: str) -> Choice:
    """Where a photo was taken: a place visited, an event attended, or an outing ("on a hike")."""
    if head_noun(obj) in (
        "hike",
        "trip",
        "walk",
        "vacation",
        "run",
        "ride",
        "holiday",
        "cruise",
        "tour",
    ):
        return "did_activity"
    return destination(obj)


def planned_destination(obj: str) -> Choice:
    """A destination someone is about to go to: a place to visit, or an event in their calendar."""
    kind = destination(obj)
    if kind == "visited":
        return "plans_to_visit"
    if kind == "attended":
        return "has_event"
    return None


_LISTENER_WORDS = frozenset({"you", "your", "yours", "ya", "u", "ur"})


def plan(obj: str) -> Choice:
    """A plan; a plan to travel somewhere named becomes ``plans_to_visit`` that place."""
    m = _TRAVEL_PLAN_RE.match(obj)
    if m:
        return "plans_to_visit", m.group("place")
    ws = words(obj)
    if (len(ws) > 1 and ws[1] in _POINTING) or (len(ws) == 1 and ws[0] in CHAT_VERBS) or ws[:2] == ["catch", "up"]:
        return None  # "keep that in mind", "let you know", "(can't wait to) hear": conversation
    if _LISTENER_WORDS & set(ws):
        return None  # "(can't wait to) see your art": about the listener
    return "plans_to"


def off_to(obj: str) -> Choice:
    """ "I'm off to Ireland for a semester" → plans_to_visit Ireland; "off to have dinner" →
    plans_to."""
    m = re.match(r"(?P<place>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,2})\b", obj)
    if m and m.group("place").split()[0].casefold() not in _VERBISH:
        return "plans_to_visit", m.group("place")
    return plan(obj)


#: A clause after "read"/"heard"/"saw" reports what it says ("sleep apnea makes diabetes", "that coffee is bad").
_REPORTED_CLAUSE_RE = re.compile(
    r"^(?:that\s+|somewhere\s+(?:that\s+)?|online\s+(?:that\s+)?)|\b(?:makes|causes|is|are|was|were|can|could|will|"
    r"helps|increases|reduces|leads\s+to|gives)\b",
    re.IGNORECASE,
)


def titled(predicate: str) -> Chooser:
    """A chooser keeping ``predicate`` unless the object is only a generic noun ("book")."""

    def choose(obj: str) -> Choice:
        ws = words(obj)
        if not ws or ws[0] in _POSSESSIVE_START or (len(ws) == 1 and ws[0] in _GENERIC_WORKS):
            return None
        if obj[:1].islower() and _REPORTED_CLAUSE_RE.search(obj):
            return None  # "I read sleep apnea makes diabetes": what was read, not a title
        return predicate

    return choose


def want(obj: str) -> Choice:
    """A wish: a job to become (career goal), a place to visit, or anything else wanted.

    "I want my kids to learn that" is a wish for someone else, not something the speaker wants to do
    or have.
    """
    if _FOR_OTHERS_RE.match(obj) or {"you", "ya", "your"} & set(words(obj)):
        return None
    m = re.match(r"(?:become|be)\s+(?:a|an)\s+(?P<job>.+)$", obj, re.IGNORECASE)
    if m and head_noun(m.group("job")) in OCCUPATIONS:
        return "career_goal", m.group("job")
    choice = plan(obj)
    if isinstance(choice, tuple):
        return choice
    return "wants"


def play(obj: str) -> Choice:
    """What someone plays: an instrument, a sport or a game."""
    ws = words(obj)
    if not ws:
        return None
    if ws[-1] in INSTRUMENTS or ws[0] in INSTRUMENTS:
        return "plays_instrument"
    if ws[-1] in SPORTS or ws[0] in SPORTS:
        return "plays_sport"
    if any(w in GAMES for w in ws) or ws[-1] == "gaming":
        return "plays_game"
    return None


def technology(obj: str) -> Choice:
    """What someone uses: a display theme, a technology, or another tool."""
    if _THEMES.match(obj):
        return "prefers_theme"
    ws = words(obj)
    if ws and (ws[0] in TECHNOLOGIES or ws[-1] in TECHNOLOGIES):
        return "uses_technology"
    if ws and ws[0] in _POSSESSIVE_START:
        return None
    return "uses_tool"


def preference(obj: str) -> Choice:
    """A preference; frameworks and display themes have their own single-valued predicates."""
    if _THEMES.match(obj):
        return "prefers_theme"
    ws = words(obj)
    if ws and ws[0] in FRAMEWORKS:
        return "prefers_framework"
    return "prefers"


def switched_to(obj: str) -> Choice:
    """What someone switched to: a framework, a theme, a technology, or anything else preferred."""
    choice = preference(obj)
    if choice == "prefers":
        ws = words(obj)
        if ws and ws[0] in TECHNOLOGIES:
            return "uses_technology"
    return choice


def language(obj: str) -> Choice:
    """A spoken language (rejects "speak up", "speak to her")."""
    return "speaks_language" if any(w in LANGUAGES for w in words(obj)) else None


def adopted(obj: str) -> Choice:
    """What was adopted: a pet or a child (an idea or a habit is rejected)."""
    noun = head_noun(obj)
    if noun in PETS:
        return "has_pet"
    if RELATIONS.get(noun) == "has_child":
        return "has_child"
    return None


def bought(obj: str) -> Choice:
    """A purchase worth remembering as a possession (not groceries or tickets)."""
    ws = words(obj)
    if not ws or ws[-1] in _CONSUMABLES or ws[0] in _CONSUMABLES:
        return None
    return "has_pet" if ws[-1] in PETS else "owns"


def made(obj: str) -> Choice:
    """Something made that is a creation ("a cake", "peach cobbler"), not "a mistake"."""
    ws = words(obj)
    if not ws or ws[-1] in _MADE_IDIOMS or (ws[0] in _POSSESSIVE_START and ws[-1] not in CREATIONS):
        return None
    if ws[-1] in _ADJECTIVES:
        return None  # "made a safe and loving home": cut before its noun
    return "created"


def activity_base(obj: str) -> Choice:
    """ "I got to volunteer at a career fair": an activity in the base form (not "got to know",
    "got to go").
    """
    ws = words(obj)
    if len(ws) < 2 or ws[0] in ("know", "go", "say", "be", "see", "admit", "the") or ws[1] in _POINTING:
        return None
    return "did_activity"


def hobby_or_activity(obj: str) -> Choice:
    """What someone does: a kind of exercise, a hobby, or another ongoing activity."""
    ws = words(obj)
    if not ws:
        return None
    if set(ws) & _EXERCISES:
        return "exercises"
    if ws[-1] in _ART_FORMS:
        return "creates_art"
    if ws[-1] in ("photography", "meditation"):
        return "has_hobby"
    return "currently_doing"


def activity(obj: str) -> Choice:
    """A past activity stated with its verb ("rehearsed with a group of dancers"), kept whole."""
    ws = words(obj)
    if {"was", "is", "were", "are"} & set(ws):
        return None  # "(the recipe that) I made … was great": the clause ran into the main verb
    if _LISTENER_WORDS & set(ws):
        return None  # "pumped for your next adventure": about the listener
    if len(ws) < 2 or ws[1] in ("so", "too", "well", "up", "out", "back", "home"):
        return None
    if ws[1] in _POINTING and not (len(ws) >= 4 and ws[2] in _PLACE_PREPOSITIONS):
        return None  # "made it" says nothing; "made it in pottery class" still says where
    if ws[0] == "went" and not ws[1].endswith("ing"):
        return None
    if ws[0] == "did" and ws[1] not in ("a", "an", "some", "my", "our"):
        return None
    return "did_activity"


def joined(obj: str) -> Choice:
    """A group joined (membership) or an activity joined (participation)."""
    ws = words(obj)
    if not ws or (ws[0] in _POSSESSIVE_START and len(ws) == 1):
        return None
    if ws[-1] in ("class", "course", "program", "programme", "workshop"):
        return "enrolled_in"
    if any(w in _GROUPS for w in ws):
        return "member_of"
    return "participated_in"


def business(obj: str) -> Choice:
    """A business someone runs or owns."""
    return "runs_business" if any(w in _BUSINESS for w in words(obj)) else None


def born(obj: str) -> Choice:
    """Born in/on: a date or year is a birthday, a place is where they are from."""
    if looks_like_date(obj):
        return "has_birthday"
    return "is_from" if obj[:1].isupper() else None


def work_place(obj: str) -> Choice:
    """An employer (not "home", "night" or "myself")."""
    ws = words(obj)
    if not ws or ws[-1] in (
        "home",
        "night",
        "nights",
        "weekends",
        "living",
        "fun",
        "free",
        "hours",
    ):
        return None
    return "works_at"


def field(obj: str) -> Choice:
    """A field of work ("marketing"), not a place ("in London") or a time ("in the morning")."""
    ws = words(obj)
    if not ws or obj[:1].isupper() or ws[-1] in ("morning", "evening", "afternoon", "office", "home", "team"):
        return None
    return "works_in_field"


def favorite_category(category: str) -> bool:
    """True when a favourite's category is specific enough to keep ("food", not "part")."""
    ws = words(category)
    return bool(ws) and ws[0] not in _VAGUE_FAVORITES
