"""What happened to the speaker in passing: their things broke or were lost, and the people they came across.

- **Mishaps** — something of the speaker's broke down, was stolen, damaged, flooded or hit by something: "my car
  broke down on my way to work", "our basement flooded", "my old neighbourhood was hit by a flood last week" →
  ``experienced`` "car broke down".  Only things: relatives and pets have their own shapes (a death is a
  relationship fact), and only what did happen (not "my car almost broke down", "if my phone gets stolen").
- **People met** — someone introduced by what they are and their name, in a clause of the speaker's: "I heard some
  stories from an elderly veteran named Samuel", "we got talking to a woman called Ines" → ``met`` "elderly veteran
  named Samuel", the way "I met a guy named Tom" reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from engine.facts.catalog import Catalog
from engine.facts.rules.life.common import ctx_at, make, speaker_ctx, words_of
from engine.facts.rules.life.words import NOT_NAMES_LIFE, PET_WORDS, RELATION_PREDICATES
from engine.facts.rules.model import Found, Sentence
from engine.facts.rules.text import clean_object

_MISHAP_RE = re.compile(
    r"\b(?:my|our)\s+(?P<thing>(?:old\s+|new\s+)?[\w'’-]+(?:\s+[\w'’-]+){0,2}?)\s+"
    r"(?P<adv>(?:(?:just|recently|finally|completely|totally|almost|nearly|never|not)\s+)*)"
    r"(?P<what>broke\s+down|(?:got|was|were)\s+(?:stolen|damaged|flooded|destroyed|wrecked|totaled|totalled|towed|"
    r"ruined|broken\s+into|hit\s+by\s+[^,;:.!?]{3,40}?(?=\s*(?:[,;:.!?]|$|\s(?:and|but|so|last|this|yesterday)\b)))|"
    r"flooded|burned\s+down|burnt\s+down|caught\s+(?:on\s+)?fire|crashed)\b",
    re.IGNORECASE,
)
_MISHAP_GATE = frozenset(
    "broke stolen damaged flooded destroyed wrecked totaled totalled towed ruined broken hit burned burnt fire "
    "crashed".split()
)
#: What a mishap can happen to that is no thing of the speaker's ("my heart broke", "my plans were ruined").
_NOT_THINGS = frozenset(
    """heart hearts plans plan day week weekend mood dreams dream hopes life mind voice confidence ego streak
    record""".split()
)
#: "There was a power cut in our area last week": something that hit where the speaker lives.
_AROUND_ME_RE = re.compile(
    r"\bthere\s+(?:was|were|has\s+been|had\s+been)\s+(?:a|an|some)\s+(?:(?:big|huge|major|nasty|bad|terrible|small)\s+)?"
    r"(?P<what>power\s+(?:cut|outage)|blackout|flood|fire|storm|earthquake|break-in|burglary|robbery|gas\s+leak|"
    r"hurricane|tornado|snowstorm|blizzard|heat\s*wave|wildfire|landslide|flooding)\s+(?:in|at|on|near|around)\s+"
    r"(?:our|my)\s+(?P<where>[\w-]+(?:\s+[\w-]+)?)",
    re.IGNORECASE,
)
_AROUND_ME_GATE = frozenset(
    """cut outage blackout flood fire storm earthquake break-in burglary robbery leak hurricane tornado snowstorm
    blizzard heatwave heat wildfire landslide flooding""".split()
)
_PERSON_NOUNS = (
    r"(?:guy|man|woman|lady|girl|boy|kid|child|veteran|student|teacher|coach|nurse|doctor|neighbou?r|resident|"
    r"volunteer|artist|author|writer|player|person|gentleman|chef|musician|farmer|officer|soldier|mentor|"
    r"instructor|trainer|stranger|couple|family)"
)
_NAMED_RE = re.compile(
    r"\b(?:an?|one|this)\s+(?P<who>(?:[\w-]+\s+){0,2}?" + _PERSON_NOUNS + r")\s+(?:named|called)\s+"
    r"(?P<name>(?-i:[A-Z])[a-zà-ÿ'’-]+)",
    re.IGNORECASE,
)


def happenings(s: Sentence, catalog: Catalog) -> Iterator[Found]:
    """The speaker's mishaps and the people they came across, in one sentence."""
    words = words_of(s.low)
    if words & _MISHAP_GATE and s.has("my ", "our "):
        yield from _mishaps(s)
    if "named" in words or "called" in words:
        yield from _named(s)
    if "there" in words and not words.isdisjoint(_AROUND_ME_GATE) and ("our" in words or "my" in words):
        for m in _AROUND_ME_RE.finditer(s.text, s.start, s.end):
            ctx = speaker_ctx(s, m.start(), time="past")
            if ctx is not None and not ctx.negated:
                value = s.text[m.start("what") : m.end()]
                yield make(ctx, s, "experienced", value, "around-me", end=m.end(), negated=False, time="past")


def _mishaps(s: Sentence) -> Iterator[Found]:
    for m in _MISHAP_RE.finditer(s.text, s.start, s.end):
        if m.group("adv").strip():
            continue  # "almost broke down", "never got stolen": it did not happen (or not quite)
        thing = m.group("thing").casefold().split()
        if thing[-1] in _NOT_THINGS or thing[-1] in RELATION_PREDICATES or thing[-1] in PET_WORDS:
            continue
        ctx = speaker_ctx(s, m.start(), time="past")
        if ctx is None or ctx.negated:
            continue
        value = clean_object(s.text[m.start("thing") : m.end()], "phrase")
        if value is not None:
            yield make(ctx, s, "experienced", value, "mishap", end=m.end(), negated=False, time="past")


def _named(s: Sentence) -> Iterator[Found]:
    for m in _NAMED_RE.finditer(s.text, s.start, s.end):
        if m.group("name") in NOT_NAMES_LIFE:
            continue  # "a woman named Ms Clark": a title, not the name
        ctx = ctx_at(s, m.start(), time="past")
        if ctx is None or ctx.negated or ctx.subject != s.speaker or _SECOND_RE.search(s.text, ctx.start, m.start()):
            continue  # "he met a woman named Sue", "you met a guy named Tom?", "if I meet someone named …"
        value = s.text[m.start("who") : m.end("name")]
        yield make(ctx, s, "met", value, "met.named", end=m.end(), negated=False, time="past")


_SECOND_RE = re.compile(r"\b(?:you|your|u|ya)\b", re.IGNORECASE)
