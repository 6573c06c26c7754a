"""Where people live and come from: "we moved from Berlin to Lisbon", "I'm now living here in Fallowfield", "our
flat in Tiong Bahru", "based in Fana", "she lives in Haifa", "I'm from Zaragoza".

A move is a change of the ``lives_in`` slot (the old place, when named, becomes ``lived_in``); a move that is
still ahead ("we'll move to London in May", "moving into a flat in Midtown on Dec 1") is a plan dated to when it
happens, not a change of where the person lives today.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from engine.facts.catalog import Catalog
from engine.facts.rules.life.common import ctx_at, lowercase_writer, make, read_name, speaker_ctx, words_of
from engine.facts.rules.life.context import Time
from engine.facts.rules.life.people import mentions
from engine.facts.rules.model import Found, Sentence

_LIVE_RE = re.compile(
    r"\b(?P<verb>live|lives|lived|living|reside|resides|resided|residing|stay|stays|stayed|based|settled)"
    r"(?:\s+(?:alone|together|happily|now|currently|still|here|there|full[- ]time|with\s+(?:my|our)\s+\w+"
    r"(?:\s+and\s+(?:my|our)\s+\w+)?))*\s+(?:in|at)\s+(?:(?:a|an|the|our|my)\s+(?:[\w-]+\s+){0,3}?"
    r"(?:cottage|flat|house|home|apartment|apt|place|village|town|city|suburb|farm|studio|room|condo|bungalow)"
    r"\s+(?:[\w-]+\s+){0,2}?(?:in|near|outside|at)\s+)?",
    re.IGNORECASE,
)
_MOVE_RE = re.compile(
    r"\b(?P<verb>move|moves|moved|moving|relocate|relocated|relocating|emigrated|immigrated|shift|shifted|shifting)\s+"
    r"(?:back\s+|out\s+|over\s+|here\s+)?(?:from\s+(?P<from>[^,.;!?]{2,40}?)\s+)?(?:to|into)\s+"
    r"(?:(?:a|an|the|our|my)\s+(?:[\w-]+\s+){0,3}?(?:cottage|flat|house|home|apartment|apt|place|condo|room|\dbr|"
    r"\d-bed(?:room)?|studio)\s+(?:[\w-]+\s+){0,2}?(?:in|near|at)\s+)?",
    re.IGNORECASE,
)
_HOME_RE = re.compile(
    r"\b(?:(?:our|my)\s+(?:own\s+|little\s+|new\s+)?(?:flat|place|house|home|apartment|apt|condo|cottage|farm)|"
    r"(?<![\w'’])(?:company|staff|rented|shared|new)\s+(?:flat|apartment|apt|house|place)|"
    r"(?:renting|rent|rented|bought|own|have|got|found)\s+(?:a|an|our|the)\s+(?:[\w-]+\s+){0,3}?"
    r"(?:flat|place|house|home|apartment|apt|condo|room)|near\s+home|at\s+home)\s+(?:is\s+)?(?:in|near|outside)\s+",
    re.IGNORECASE,
)
_HERE_RE = re.compile(r"\bhere\s+in\s+", re.IGNORECASE)
_COMMUTE_RE = re.compile(r"\bcommute\w*\s+(?:[\w-]+\s+){0,4}?from\s+", re.IGNORECASE)
_FARM_RE = re.compile(r"\b(?:we|i)\s+farm\b[^.;!?]{0,60}?\b(?:outside|near|in)\s+", re.IGNORECASE)
_FROM_RE = re.compile(
    r"\b(?:i['’]?m|i\s+am|im|we['’]re|we\s+are|(?:he|she)['’]?s|(?:he|she)\s+is|is|are|was|originally|"
    r"come|comes|came)\s+(?:originally\s+)?from\s+",
    re.IGNORECASE,
)
#: "born n raised in hilo", "growing up in lahaina we …", "born and bred in Leeds"
_RAISED_RE = re.compile(
    r"\b(?:born\s+(?:and|n|&|an['’]?)\s+(?:raised|bred)|born|raised|growing\s+up|grew\s+up)\s+(?:in|on)\s+",
    re.IGNORECASE,
)
_CAME_TO_RE = re.compile(r"\b(?:came|come|immigrated|emigrated)\s+to\s+", re.IGNORECASE)
_COMING_FROM_RE = re.compile(
    r"\b(?:coming|driving|flying|travelling|traveling|visiting|come|comes)\s+(?:up\s+|down\s+|over\s+|in\s+|back\s+)?from\s+",
    re.IGNORECASE,
)
_LEAVING_HOME_RE = re.compile(
    r"\b(?:(?:move|moves|moving|moved|relocating|relocated)\s+(?:out\s+)?(?:from|of)|leaving|left|moving\s+out\s+of)\s+$",
    re.IGNORECASE,
)
_MOVED_IN_RE = re.compile(r"[\s.!]*(?:we\s+|i\s+)?moved\s+in\s+(?:on\s+)?[^.!?\n]{0,30}", re.IGNORECASE)
_IS_IN_RE = re.compile(r"\b(?:is|are|['’]s)\s+(?:now\s+|currently\s+|still\s+)?(?:in|at)\s+", re.IGNORECASE)
#: Words after "in" that are not places ("live in fear", "stay in touch").
_NOT_PLACES = frozenset(
    """fear touch love debt peace hope denial shock pain sales marketing finance tech it hr
    charge time bed school class work office hospital""".split()
)
_PAST = frozenset("lived resided stayed moved relocated emigrated immigrated settled shifted".split())
#: "we've been in Nelson nearly 3 weeks now", "I've been living in Leeds since 2019": where the speaker lives
_BEEN_IN_RE = re.compile(
    r"\b(?:i|we)\s*(?:['’]ve|\s+have)?\s+been\s+(?:living\s+|based\s+)?(?:in|at)\s+", re.IGNORECASE
)
_SINCE_A_WHILE_RE = re.compile(
    r"^[^.;!?]{0,30}?\b(?:(?:nearly|almost|about|over|around|like)\s+)?(?:\d+|a|an|two|three|four|five|six|a\s+few|"
    r"a\s+couple(?:\s+of)?|several)\s+(?:weeks?|months?|years?|yrs?)\s+now\b|^[^.;!?]{0,30}?\bsince\s+(?:19|20)\d\d",
    re.IGNORECASE,
)
_PLACE_WORDS = frozenset(
    """live lives lived living reside resides resided residing stay stays stayed based settled move moves moved
    moving relocate relocated relocating emigrated immigrated flat place house home apartment apt condo cottage farm
    here commute commuting commutes from came come comes coming shift shifted shifting been born raised growing grew
    """.split()
)


def places(s: Sentence, catalog: Catalog) -> Iterator[Found]:  # noqa: C901 — a cascade of rules read top to bottom; not yet split
    """Residence, moves and origins in one sentence."""
    text, low = s.text, s.low
    words = words_of(low)
    located = bool(words & {"in", "at"}) and (bool(words & {"is", "are"}) or "'s " in low or "’s " in low)
    if not words & _PLACE_WORDS and not located:
        return
    named = located and any(s.start <= p.start < s.end for p in mentions(text))
    lower_ok = lowercase_writer(text)
    if any(w in low for w in ("live", "stay", "based", "settled", "resid")):
        for m in _LIVE_RE.finditer(text, s.start, s.end):
            verb = m.group("verb").casefold()
            if verb.startswith("stay") and re.match(r"[^.;!?]{0,40}\bfor\b", text[m.end() : s.end]):
                continue  # "stayed in Rome for a week": a visit
            time: Time = "past" if verb in _PAST and not verb.startswith("stay") else "present"
            yield from _residence(s, m.start(), m.end(), time, lower_ok, "live", change=verb.startswith("stay"))
    if "been" in words:
        for m in _BEEN_IN_RE.finditer(text, s.start, s.end):
            place = _place(text, m.end(), s.end, lower_ok)
            if place is None or _SINCE_A_WHILE_RE.match(text[place[1] : s.end]) is None:
                continue  # "I've been in Paris" alone is a visit
            ctx = speaker_ctx(s, m.start())
            if ctx is not None and not ctx.negated:
                yield make(ctx, s, "lives_in", place[0], "been-in", end=place[1], change=True)
    if "mov" in low or "relocat" in low or "migrat" in low or "shift" in low:
        for m in _MOVE_RE.finditer(text, s.start, s.end):
            yield from _move(s, m, lower_ok)
    if any(w in low for w in ("flat", "place", "house", "home", "apartment", "apt", "condo", "cottage", "farm")):
        for m in _HOME_RE.finditer(text, s.start, s.end):
            own = re.match(r"(?:our|my)\b", m.group(), re.IGNORECASE) is not None
            # "move from our flat in Lombok", "leaving my apt in cordova": the home being left
            left = _LEAVING_HOME_RE.search(text, max(s.start, m.start() - 30), m.start()) is not None
            yield from _residence(s, m.start(), m.end(), "past" if left else "present", lower_ok, "home", own=own)
    if "here in" in low:
        for m in _HERE_RE.finditer(text, s.start, s.end):
            place = _place(text, m.end(), s.end, lower_ok)
            ctx = speaker_ctx(s, m.start())
            if place is not None and ctx is not None and not ctx.negated:
                # "a studio here in Lisbon": where the speaker is, said in passing; the home slot is left to
                # statements about living somewhere
                found = make(ctx, s, "located_in", place[0], "here", end=place[1])
                yield replace(found, span=(m.start(), place[1]))
    if "commut" in low:
        for m in _COMMUTE_RE.finditer(text, s.start, s.end):
            yield from _residence(s, m.start(), m.end(), "present", lower_ok, "commute")
    if " farm" in low:
        for m in _FARM_RE.finditer(text, s.start, s.end):
            yield from _residence(s, m.start(), m.end(), "present", lower_ok, "farm")
    if "from " in low:
        for m in _FROM_RE.finditer(text, s.start, s.end):
            place = _place(text, m.end(), s.end, lower_ok)
            ctx = ctx_at(s, m.end())
            if place is None or ctx is None or ctx.time == "future":
                continue
            if re.match(r"\s*(?:work|home|school|the\s+(?:office|airport|station|gym))\b", text[m.end() :], re.I):
                continue
            yield make(ctx, s, "is_from", place[0], "from", end=place[1])
    if any(w in low for w in ("born", "raised", "growing up", "grew up")):
        for m in _RAISED_RE.finditer(text, s.start, s.end):
            place = _place(text, m.end(), s.end, lower_ok)
            ctx = speaker_ctx(s, m.start(), "past")
            if place is None or ctx is None or ctx.negated or ctx.subject != s.speaker:
                continue
            if place[0].casefold() in ("the", "a", "my", "our", "hospital", "poverty", "church"):
                continue
            yield make(ctx, s, "is_from", place[0], "raised", end=place[1])
    if "came to" in low or "migrated to" in low:
        for m in _CAME_TO_RE.finditer(text, s.start, s.end):
            place = _place(text, m.end(), s.end, lower_ok)
            ctx = ctx_at(s, m.start(), time="past")
            if place is None or ctx is None:
                continue
            yield make(ctx, s, "moved_to", place[0], "came-to", end=place[1], time="past")
    if named and words & {"in", "at"}:
        for m in _IS_IN_RE.finditer(text, s.start, s.end):
            yield from _located(s, m, lower_ok)
    if "from " in low:
        for m in _COMING_FROM_RE.finditer(text, s.start, s.end):
            place = _place(text, m.end(), s.end, lower_ok)
            ctx = ctx_at(s, m.start())
            if place is None or ctx is None or ctx.person is None or ctx.person.is_pet or ctx.negated:
                continue
            # "my sister Thandi is coming up from Durban for it": a visitor comes from where they live
            yield replace(make(ctx, s, "lives_in", place[0], "coming-from", end=place[1]), span=(m.start(), place[1]))


def _place(text: str, pos: int, end: int, lower_ok: bool) -> tuple[str, int] | None:
    found = read_name(text, pos, end, lowercase_ok=lower_ok, max_words=4)
    if found is None:
        return None
    value, stop = found
    if value.casefold() in _NOT_PLACES or len(value) < 2:
        return None
    return value, stop


def _residence(
    s: Sentence,
    start: int,
    pos: int,
    time: Time,
    lower_ok: bool,
    rule: str,
    *,
    speaker_only: bool = False,
    own: bool = False,
    change: bool = False,
) -> Iterator[Found]:
    place = _place(s.text, pos, s.end, lower_ok)
    if place is None:
        return
    # "our flat in …", "my place in …": the speaker's home whoever the clause is about
    ctx = speaker_ctx(s, start, time) if own else ctx_at(s, start, time=time)
    if ctx is None:
        return
    if own:
        ctx = replace(ctx, negated=False)
    if speaker_only and ctx.subject != s.speaker:
        return
    if ctx.time == "future" or ctx.planned:
        yield make(ctx, s, "plans_to", f"live in {place[0]}", f"{rule}.plan", end=place[1])
        return
    predicate = "lived_in" if time == "past" and not ctx.negated else "lives_in"
    found = make(ctx, s, predicate, place[0], rule, end=place[1], change=change or bool(ctx.negated))
    if rule in ("home", "commute", "farm"):
        # said in passing ("I swim at the club near home in Bukit Timah"): the rest of the clause is its own fact
        found = replace(found, span=(start, place[1]))
    yield found


def _move(s: Sentence, m: re.Match[str], lower_ok: bool) -> Iterator[Found]:
    text = s.text
    verb = m.group("verb").casefold()
    place = _place(text, m.end(), s.end, lower_ok)
    if place is None:
        return
    tail = text[m.start() : m.end()].casefold()
    if re.search(r"\b(?:department|team|ward|unit|role|position|office)\b", text[m.end() : place[1] + 20], re.I):
        return  # "moved from icu to the emergency department": work, read by the work shapes
    if re.match(r"\s*(?:the|a|an)\s", text[m.end() :], re.I) and " in " not in tail and " near " not in tail:
        return
    time: Time = "past" if verb in _PAST else "present"
    ctx = ctx_at(s, m.start(), time=time)
    if ctx is None or ctx.negated:
        return
    if verb in ("moving", "move", "moves", "shifting", "shift") or ctx.time == "future" or ctx.planned:
        # a move still ahead: a plan, dated by its clause ("moving into a 1br in midtown dec 1")
        yield make(ctx, s, "plans_to", f"move to {place[0]}", "move.plan", end=place[1], time="future")
        return
    after = _MOVED_IN_RE.match(text, s.end) if clause_end_of(s, place[1]) == s.end else None
    for found in (
        make(ctx, s, "moved_to", place[0], "move.event", end=place[1], time="past"),
        make(ctx, s, "lives_in", place[0], "move", end=place[1], change=True),
    ):
        if after is not None and found.span is not None:
            # "we moved from Brunswick to Geelong!! moved in on the 10th": the next words date the move
            found = replace(found, span=(found.span[0], after.end()))
        yield found
    origin = m.group("from")
    if origin:
        old = _place(text, m.start("from"), m.end("from"), lower_ok)
        if old is not None and old[0].casefold() != place[0].casefold():
            yield make(ctx, s, "lived_in", old[0], "move.from", end=old[1])


def clause_end_of(s: Sentence, pos: int) -> int:
    """Where the sentence's text after ``pos`` stops being part of the same clause (the sentence end when only
    punctuation follows)."""
    rest = s.text[pos : s.end]
    return s.end if not rest.strip(" !.?") else pos


def _located(s: Sentence, m: re.Match[str], lower_ok: bool) -> Iterator[Found]:
    """A third person "is in <Place>" ("my bf diego is in monterrey for his internship")."""
    text = s.text
    place = _place(text, m.end(), s.end, lower_ok)
    if place is None or not (place[0][:1].isupper() or lower_ok):
        return
    ctx = ctx_at(s, m.start())
    if ctx is None or ctx.subject == s.speaker or ctx.person is None or ctx.person.is_pet or ctx.negated:
        return
    if re.match(r"\s*(?:the|a|an|her|his|their|my|our)\s", text[m.end() :], re.I):
        return
    yield make(ctx, s, "located_in", place[0], "is-in", end=place[1])
