"""Choosers for what someone says they are or feel: "I'm a nurse", "I'm vegan", "I feel accepted".

"I'm a/an …" can state a job, an identity, a diet, a nationality, a trait or a fandom ("a big fan of
jazz"); "I'm …" without an article a diet, identity, nationality, trait or condition; "I feel …" a
feeling; "a love for …" a liking.  Each chooser returns a predicate (or a reshaped object), or None.
"""

from __future__ import annotations

import re

from engine.facts.rules.classify import words
from engine.facts.rules.lexicon import (
    CONDITIONS,
    DEMONYMS,
    DIETS,
    EMOTIONS,
    IDENTITIES,
    LANGUAGES,
    OCCUPATIONS,
    TRAIT_PHRASES,
    TRAITS,
    word_set,
)
from engine.facts.rules.model import Choice

_FEELING_WORDS = word_set("low down blue off lost stuck drained overwhelmed seen heard understood") | word_set(
    "good great bad better worse alive free safe ready strong welcome lucky loved alone whole "
    "grounded calmer humble happier stronger closer lighter okay ok fine awesome amazing terrible "
    "awful"
)
_NOT_FEELINGS = frozenset(["need", "bed", "red", "shed"])
_FONDNESS = {
    "love": "loves",
    "passion": "passionate_about",
    "interest": "interested_in",
    "fear": "fears",
    "respect": "values",
    "talent": "has_skill",
    "knack": "has_skill",
    "connection": "interested_in",
    "bond": "interested_in",
    "affinity": "interested_in",
}
_PEOPLE = frozenset(["woman", "man", "person", "girl", "guy"])
_PREPOSITION_RE = re.compile(r"\s+(?:at|for|in|with|from|on|by|since|who|that|and)\s+", re.IGNORECASE)
_FAN_RE = re.compile(
    r"(?:(?:total|big|huge|massive|real|true|die-hard|diehard|major|kind\s+of|bit\s+of)\s+)"
    r"*(?:sucker\s+for\s+"
    r"(?:any\s+)?(?P<what>.+)|(?P<what2>[\w-]+(?:\s+[\w-]+)?)\s+(?:fan|lover|buff|nerd|geek|"
    r"enthusiast|junkie|addict))$"
)


def fondness(obj: str) -> Choice:
    """ "a love for horses" → loves horses; "an interest in X" → interested_in X; "a fear of X" →
    fears X.
    """
    m = re.match(
        r"(?P<what>love|passion|soft\s+spot|interest|fear|respect|talent|knack|fondness|connection|"
        r"bond|affinity)\s+"
        r"(?:for|of|in|to|with)\s+(?P<obj>.+)$",
        obj,
        re.IGNORECASE,
    )
    if not m:
        return None
    what = re.sub(r"\s+", " ", m.group("what").casefold())
    return _FONDNESS.get(what, "likes"), m.group("obj")


def felt(obj: str) -> Choice:
    """A feeling named after "I feel/felt …" (an emotion or a state like "accepted", "at home")."""
    ws = words(obj)
    first = ws[0] if ws else ""
    if first in EMOTIONS or first in _FEELING_WORDS or (first.endswith("ed") and first not in _NOT_FEELINGS):
        return "feels"
    if _MIXED_RE.match(obj):
        return "feels"  # "a mix of emotions", "a rollercoaster of emotions": a feeling named by its many parts
    return None


_MIXED_RE = re.compile(
    r"(?:(?:a|such\s+a|so\s+many)\s+)?(?:(?:mix|mixture|rollercoaster|roller\s+coaster|range|whirlwind|flood|wave|"
    r"rush|bunch)\s+of\s+(?:emotions|feelings)|mixed\s+(?:emotions|feelings)|emotions)\b",
    re.IGNORECASE,
)


def describe_self(obj: str) -> Choice:
    """What "I'm a/an <noun phrase>" says: a job, an identity, a diet, a nationality, a trait, a
    fandom.

    The prepositional tail is not part of the description ("a software engineer at a startup" is an
    engineer), except in "fan of X", "member of X", "believer in X", where the tail is the value.
    """
    lowered = obj.casefold()
    fan = _FAN_RE.match(lowered)
    if fan:
        group = "what" if fan.group("what") else "what2"
        return "likes", obj[fan.start(group) : fan.end(group)]
    for prefix, predicate in (
        ("fan of ", "likes"),
        ("member of ", "member_of"),
        ("believer in ", "believes"),
    ):
        i = lowered.find(prefix)
        if i >= 0 and len(words(obj[:i])) <= 2:
            rest = obj[i + len(prefix) :].strip()
            return (predicate, rest) if rest else None
    m = re.match(r"native\s+(?P<lang>\w+)\s+speaker", lowered)
    if m and m.group("lang") in LANGUAGES:
        return "native_language", obj.split()[1]
    head_part = _PREPOSITION_RE.split(obj, maxsplit=1)[0]
    ws = words(head_part)
    if not ws:
        return None
    noun = ws[-1]
    if any(w in IDENTITIES for w in ws) and noun in IDENTITIES | _PEOPLE:
        predicate = "identifies_as"
    elif noun in OCCUPATIONS:
        predicate = "works_as"
    elif noun in DIETS:
        predicate = "diet"
    elif noun in DEMONYMS:
        predicate = "has_nationality"
    elif noun in TRAITS or any(head_part.casefold().endswith(p) for p in TRAIT_PHRASES):
        predicate = "has_trait"
    else:
        return None
    return (predicate, head_part) if head_part != obj else predicate


def describe_state(obj: str) -> Choice:
    """What "I'm <adjective>" says when it is not a feeling: diet, identity, nationality, trait,
    condition.
    """
    ws = words(obj)
    if not ws or len(ws) > 3:
        return None
    first = ws[0]
    if " ".join(ws[:2]) in ("lactose intolerant", "gluten intolerant", "gluten sensitive"):
        return "has_condition", " ".join(obj.split()[:2])
    if first in DIETS:
        return "diet"
    if first in IDENTITIES:
        return "identifies_as"
    if first in DEMONYMS and obj[:1].isupper():
        return "has_nationality"
    if first in TRAITS:
        return "has_trait"
    if first in (
        "pregnant",
        "diabetic",
        "asthmatic",
        "colorblind",
        "deaf",
        "blind",
        "disabled",
        "epileptic",
    ):
        return "has_condition"
    return None


def condition(obj: str) -> Choice:
    """A health condition from its name ("asthma", "type 2 diabetes", "a cold")."""
    return "has_condition" if any(w in CONDITIONS for w in words(obj)) else None
