"""Dated events and plans: "My viva is on the 24th of April", "His parent-teacher meeting is on Tuesday at 11",
"tomorrow at 2pm I have a hearing at the TRT", "we fly to Casablanca on 19 March", "diego and i are going to oaxaca
april 1 to 5", "Artur will play in a junior tournament in Riga on 8 November", "Lwazi's birthday is 27 July",
"Our daughter Hana was born on 6 December", "We returned from Riga on Sunday".

An event is filed under whoever it belongs to ("Kuba" for "My son Kuba have football tournament on Saturday"),
worded from the sentence without its time words, and dated from its clause (the extractor resolves the clause's
time expression forward for what is ahead, backward for what is past).  A trip that is still ahead is a plan —
never a visit — until a later message says it happened.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from engine.facts.catalog import Catalog
from engine.facts.rules.life.common import MONTH_WORD, WEEKDAY_WORD, ctx_at, make, words_of
from engine.facts.rules.life.context import Context
from engine.facts.rules.life.people import resolve_pronoun
from engine.facts.rules.model import Found, Sentence

#: A time expression that dates something (cheap test before any event reading).
TIME_CUE_RE = re.compile(
    r"\b(?:" + WEEKDAY_WORD + r"|tomorrow|tonight|yesterday|next\s+(?:week|month|year|weekend|" + WEEKDAY_WORD + r")|"
    r"this\s+(?:week|weekend|month|year|" + WEEKDAY_WORD + r")|last\s+(?:week|month|year|" + WEEKDAY_WORD + r")|"
    r"(?:on\s+)?the\s+\d{1,2}(?:st|nd|rd|th)\b|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?"
    + MONTH_WORD
    + r"\b|"
    + MONTH_WORD
    + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?\b|in\s+"
    + MONTH_WORD
    + r"\b|(?:19|20)\d\d\b)",
    re.IGNORECASE,
)
_STRIP_TIME_RE = re.compile(
    r"\s*,?\s*\b(?:(?:on|at|from|by|until|till|for|in)\s+)?(?:(?:the\s+)?(?:"
    + WEEKDAY_WORD
    + r"|tomorrow|tonight|today|"
    r"yesterday|(?:next|this|last)\s+(?:week|month|year|weekend|"
    + WEEKDAY_WORD
    + r")|the\s+\d{1,2}(?:st|nd|rd|th)(?:\s+of\s+"
    + MONTH_WORD
    + r")?|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?"
    + MONTH_WORD
    + r"(?:\s+\d{4})?|"
    + MONTH_WORD
    + r"\.?\s+\d{1,2}"
    r"(?:st|nd|rd|th)?(?:\s+to\s+\d{1,2})?|" + MONTH_WORD + r"|\d{1,2}(?::\d\d)?\s*(?:am|pm)|(?:19|20)\d\d)\b"
    r"(?:\s*,\s*|\s+)?)+",
    re.IGNORECASE,
)
_EVENT_NOUNS = (
    "party|birthday|wedding|engagement|ceremony|reception|meeting|appointment|interview|hearing|exam|test|viva|"
    "defen[cs]e|surgery|operation|replacement|procedure|scan|check-?up|tournament|match|race|marathon|half-marathon|"
    "gig|concert|recital|show|trip|holiday|vacation|honeymoon|flight|conference|presentation|deadline|graduation|"
    "funeral|assessment|pre-op|course|training|camp|retreat|launch|festival|fair|reunion|shower|christening|"
    "baptism|bar\\s+mitzvah|bat\\s+mitzvah|quinceañera|festa|recital|audition|premiere|lease|move|shift|mri|"
    "x-?ray|ultrasound|colonoscopy|endoscopy|biopsy|physio|lesson|session|induction|orientation|onboarding|"
    "check|checkup|mock"
)
#: A word inside an event's noun phrase: not a pronoun, verb or conjunction.
_NP_WORD = (
    r"(?!(?:i|we|you|he|she|they|it|have|has|had|is|are|was|were|am|be|do|does|did|and|but|or|so|to|sign|make|"
    r"doing|going|want|need|plan|planning|help|write|for|with|at|on|in|of|me|us|him|them|this|that|a|an|ok|okay|"
    r"so|well|also|btw|update|anyway|lol|haha|yeah|yes|oh|hey|hi|guess|omg)\b)"
    r"[\w'’-]+"
)
_EVENT_SUBJECT_RE = re.compile(
    r"(?P<np>\b(?:(?:my|our|his|her|their|the|(?-i:[A-Z])[\w'’-]+['’]s)\s+)?(?:"
    + _NP_WORD
    + r"\s+){0,4}?(?:"
    + _EVENT_NOUNS
    + r")s?"
    r"(?:\s+(?:for|at|with|in|of|to)\s+(?:the\s+)?[^,.;!?]{1,40}?)?)\s+(?:is|are|was|will\s+be|['’]s)\s+"
    r"(?:(?:now|still|actually|finally|also|going\s+to\s+be)\s+)*(?=(?:on\s+|at\s+|in\s+|the\s+|this\s+|next\s+|"
    r"tomorrow|tonight|" + WEEKDAY_WORD + r"|" + MONTH_WORD + r"|\d))",
    re.IGNORECASE,
)
#: An event named, then dated by "it": "a new MRI, I have it next Tuesday", "my interview got moved, it's now Friday"
_IT_THEN_RE = re.compile(
    r"(?P<np>\b(?:(?:a|an|the|my|our)\s+)(?:(?:new|second|follow-up|big|final)\s+)?(?:"
    + _EVENT_NOUNS
    + r"))\b[^.;!?]{0,40}?\b(?P<it>i\s+(?:have|got)\s+it|it['’]?s|it\s+is|it\s+will\s+be|it\s+got\s+moved\s+to)\s+"
    r"(?:now\s+|booked\s+|scheduled\s+|set\s+)?(?:for\s+|on\s+)?(?=(?:next\s|this\s|tomorrow|the\s+\d|\d|"
    + WEEKDAY_WORD
    + r"|"
    + MONTH_WORD
    + r"))",
    re.IGNORECASE,
)
_HAVE_EVENT_RE = re.compile(
    r"\b(?P<verb>have|has|having|got|had)\s+(?:an?\s+|the\s+|my\s+|our\s+|his\s+|her\s+)?(?P<np>(?:[\w'’-]+\s+){0,3}?"
    r"(?:" + _EVENT_NOUNS + r")s?)\b",
    re.IGNORECASE,
)
_NOUN_DATE_RE = re.compile(
    r"(?P<np>\b(?:(?:my|our|his|her|their|the|(?-i:[A-Z])[\w'’-]+['’]s)\s+)?(?:"
    + _NP_WORD
    + r"\s+){0,3}?(?:"
    + _EVENT_NOUNS
    + r")s?(?:\s+(?:at|in|for|with)\s+(?:the\s+)?(?:(?-i:[A-Z])[\w'’-]*\s*){1,5}){0,2})\s*(?::\s*|\s+)"
    r"(?=(?:on\s+|in\s+)?(?:the\s+\d|"
    + WEEKDAY_WORD
    + r"|tomorrow|next\s|this\s|\d{1,2}(?:st|nd|rd|th)?\s+"
    + MONTH_WORD
    + r"|"
    + MONTH_WORD
    + r"\b))",
    re.IGNORECASE,
)
_GO_RE = re.compile(
    r"\b(?P<verb>fly|flying|flies|going|go|heading|head|travel(?:l?ing)?|off|driving|drive|visiting|visit|coming|"
    r"returned|got\s+back|came\s+back|back)\s+(?:up\s+|down\s+|over\s+|out\s+|in\s+(?=from))?(?P<dir>to|from|back\s+from|in|into)\s+(?P<place>(?-i:[A-Z])[\w'’-]+"
    r"(?:\s+(?-i:[A-Z])[\w'’-]+){0,2}|[a-z]{4,}(?=\s+(?:" + MONTH_WORD + r"|on|next|this|for|in|from)\b))",
    re.IGNORECASE,
)
_PLAY_RE = re.compile(
    r"\b(?P<verb>will\s+play|plays?|playing|compete|competing|run|running|race|racing)\s+(?:in|at)\s+(?:an?\s+|the\s+)?"
    r"(?P<np>[^,.;!?]{3,60}?)(?=\s+on\s|\s+this\s|\s+next\s|,|\.|$)",
    re.IGNORECASE,
)
_BIRTHDAY_RE = re.compile(
    r"(?P<whose>\b(?:my|our|his|her)|(?-i:[A-Z])[\w'’-]+['’]s)\s+(?:(?P<rel>[\w-]+)['’]s\s+)?birthday\s+(?:is|was|'s)\s+"
    r"(?:(?:actually|on)\s+)*(?P<date>(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?(?:\s+(?:of\s+)?"
    + MONTH_WORD
    + r")?|"
    + MONTH_WORD
    + r"\s+\d{1,2}(?:st|nd|rd|th)?)",
    re.IGNORECASE,
)
_DATE_IS_BIRTHDAY_RE = re.compile(
    r"(?P<date>\d{1,2}(?:st|nd|rd|th)?\s+"
    + MONTH_WORD
    + r"|"
    + MONTH_WORD
    + r"\s+\d{1,2})\s+is\s+(?P<whose>my\s+[\w-]+['’]s|"
    r"(?-i:[A-Z])[\w'’-]+['’]s)\s+birthday",
    re.IGNORECASE,
)
_ANY_DIGIT_RE = re.compile(r"\d")
_BORN_RE = re.compile(r"\b(?:was|were|is)\s+born\s+(?:on\s+)?", re.IGNORECASE)
_TURNS_RE = re.compile(r"\bturns?\s+(?P<age>\d{1,2}|[a-z]+)\s+(?:on\s+|in\s+)", re.IGNORECASE)
_SET_DATE_RE = re.compile(r"\bset\s+(?:the|a)\s+date\b[^,.;]{0,8}[,.!:\s]+", re.IGNORECASE)


def events(s: Sentence, catalog: Catalog) -> Iterator[Found]:  # noqa: C901 — a cascade of rules read top to bottom; not yet split
    """Dated events, trips and birthdays in one sentence."""
    text = s.text
    low = s.low
    words = words_of(low)
    timed = (
        bool(words & _TIME_GATE or _ANY_DIGIT_RE.search(low)) and TIME_CUE_RE.search(text, s.start, s.end) is not None
    )
    if "birthday" in low:
        yield from _birthdays(s)
    if "born" in low:
        for m in _BORN_RE.finditer(text, s.start, s.end):
            ctx = ctx_at(s, m.start(), time="past")
            if ctx is not None and ctx.subject != s.speaker and TIME_CUE_RE.match(text, m.end(), s.end):
                date = TIME_CUE_RE.match(text, m.end(), s.end)
                assert date is not None
                yield make(ctx, s, "has_birthday", date.group(0), "born", end=date.end(), time="past")
    if words & _RESULT_VERBS and (any(ch.isdigit() for ch in low) or words & {"place", "position", "prize"}):
        for m in _RESULT_RE.finditer(text, s.start, s.end):
            yield from _result(s, m)
    for m in _IT_IS_DATE_RE.finditer(text, s.start, s.end) if "not" in words else ():
        ctx = ctx_at(s, m.start())
        if ctx is not None and not ctx.negated:
            # "Actually it's the 14th, not the 4th": the date of the event spoken of before is corrected
            found = make(ctx, s, "has_event", ANY_EVENT, "event.redate", end=m.end(), change=True)
            yield replace(found, span=(m.start("date"), m.end("date")), time="present")
    if not timed:
        return
    claimed: list[tuple[int, int]] = []
    for m in _EVENT_SUBJECT_RE.finditer(text, s.start, s.end):
        np = m.group("np")
        if "birthday" in np.casefold():
            continue
        event = _event_np(s, m.start("np"), m.end("np"), np, m.end())
        if event is not None:
            claimed.append(event.span or (m.start(), m.end()))
            yield event
    for m in _NOUN_DATE_RE.finditer(text, s.start, s.end):
        if any(a <= m.start() < b for a, b in claimed) or "birthday" in m.group("np").casefold():
            continue
        event = _event_np(s, m.start("np"), m.end("np"), m.group("np"), m.end())
        if event is not None:
            claimed.append(event.span or (m.start(), m.end()))
            yield event
    if " it" in low:
        for m in _IT_THEN_RE.finditer(text, s.start, s.end):
            if any(a <= m.start("np") < b for a, b in claimed):
                continue
            # "The doctor wants a new MRI, I have it next Tuesday": "it" is the event just named
            ctx = ctx_at(s, m.start("it"))
            what = re.sub(r"^(?:a|an|the|my|our)\s+", "", m.group("np"), flags=re.IGNORECASE)
            if ctx is None or ctx.negated or not what:
                continue
            date = TIME_CUE_RE.match(text, m.end(), s.end)
            end = date.end() if date is not None else m.end()
            event = replace(make(ctx, s, "has_event", what, "event.it", end=end), span=(m.start("np"), end))
            claimed.append((m.start("np"), end))
            yield replace(event, time="present")
    for m in _HAVE_EVENT_RE.finditer(text, s.start, s.end):
        if any(a <= m.start("np") < b for a, b in claimed):
            continue
        event = _have_event(s, m)
        if event is not None:
            claimed.append(event.span or (m.start(), m.end()))
            yield event
    for m in _GO_RE.finditer(text, s.start, s.end):
        if any(a <= m.start() < b for a, b in claimed):
            continue
        event = _trip(s, m)
        if event is not None:
            claimed.append(event.span or (m.start(), m.end()))
            yield event
    for m in _PLAY_RE.finditer(text, s.start, s.end):
        if any(a <= m.start() < b for a, b in claimed):
            continue
        ctx = ctx_at(s, m.start(), time="future" if m.group("verb").casefold().startswith("will") else "present")
        if ctx is None or ctx.negated or not _clause_timed(s, ctx, m.end()):
            continue
        verb = re.sub(r"^will\s+", "", m.group("verb"), flags=re.I)
        obj = f"{verb} in {_untimed(m.group('np'))}"
        yield make(
            ctx,
            s,
            "plans_to" if ctx.time != "past" else "participated_in",
            obj,
            "play",
            end=m.end(),
            time="future" if ctx.time != "past" else "past",
        )
    first = _DATE_FIRST_RE.match(text, s.start, s.end)
    if first is not None and not any(a <= first.start("np") < b for a, b in claimed):
        ctx = ctx_at(s, first.start("np"))
        if ctx is not None and not ctx.negated:
            np = re.sub(r"^(?:a|an|the|our|my|small|big)\s+", "", first.group("np").strip(), flags=re.I)
            yield replace(
                make(ctx, s, "has_event", np, "event.dated", end=first.end()),
                span=(s.start, first.end()),
                time="future",
            )
    for m in _PLAN_TRIP_RE.finditer(text, s.start, s.end):
        if any(a <= m.start("np") < b for a, b in claimed):
            continue
        ctx = ctx_at(s, m.start("np"))
        if ctx is None or ctx.negated:
            continue
        rest = m.group("rest")
        dest = re.search(r"\bto\s+(?P<place>(?-i:[A-Z])[\w'’-]+(?:\s+(?-i:[A-Z])[\w'’-]+)?)", rest)
        route = _ROUTE_RE.match(text, m.end("np"), s.end)
        what = m.group("np").strip()
        if dest is not None:
            what = (
                f"{_untimed(rest[: dest.end()]).strip()}"
                if len(rest[: dest.end()]) < 60
                else f"{what} to {dest.group('place')}"
            )
            what = f"{m.group('np').strip()} {what}".strip()
        elif route is not None:
            what = f"{what}: {route.group('route').strip()}"
        claimed.append((m.start(), m.end()))
        yield replace(
            make(ctx, s, "plans_to", _untimed(what), "trip.plan", end=m.end(), time="future"), span=(m.start(), m.end())
        )
    for m in _SIGNED_UP_RE.finditer(text, s.start, s.end):
        ctx = ctx_at(s, m.start(), time="past")
        if ctx is None or ctx.negated:
            continue
        yield replace(
            make(ctx, s, "has_event", m.group("np").strip(), "signed-up", end=m.end(), time="future"),
            span=(m.start(), m.end()),
        )
    if "set" in low and "date" in low:
        for m in _SET_DATE_RE.finditer(text, s.start, s.end):
            rest = re.compile(r"[^.;!?\n]{2,80}").match(text, m.end(), s.end)
            ctx = ctx_at(s, m.start(), time="past")
            if rest is None or ctx is None:
                continue
            what = _untimed(rest.group(0)).strip(" ,")
            if what:
                yield replace(
                    make(ctx, s, "has_event", what, "set-date", end=rest.end(), time="future"),
                    span=(m.start(), rest.end()),
                )


_PLACE_AFTER_RE = re.compile(
    r"[^,.;!?]{0,30}?\b(?:at|in)\s+(?P<place>(?!"
    + MONTH_WORD
    + r"\b|"
    + WEEKDAY_WORD
    + r"\b|\d)(?:(?!(?:on|this|next|the|a|an|my|our)\b)[\w'’&-]+\s*){1,4}?)"
    r"(?=\s*(?:[,.;!?\n]|$|[^\w\s]|\s(?:and|but|so|for|with|on|this|next)\b))",
    re.IGNORECASE,
)
_ROUTE_RE = re.compile(
    r"[^:.;!?]{0,20}:\s*(?P<route>(?-i:[A-Z])[\w'’-]*(?:\s+[\w'’-]+){0,3}\s+to\s+(?-i:[A-Z])[\w'’-]*(?:\s+(?-i:[A-Z])[\w'’-]*){0,2})"
    r"(?:[^.;!?]{0,40}?\bstart(?:ing|s)?\s+(?:on\s+)?[^,.;!?]{2,20})?",
    re.IGNORECASE,
)
_PLAN_TRIP_RE = re.compile(
    r"\b(?:plan|plans|planning|planned|booked|booking)\s+(?:a\s+|our\s+|the\s+|my\s+)?(?P<np>(?:[\w-]+\s+){0,2}?"
    r"(?:holiday|trip|vacation|getaway|tour|visit|honeymoon|break))\b(?P<rest>[^.;!?]{0,80})",
    re.IGNORECASE,
)
_SIGNED_UP_RE = re.compile(
    r"\b(?:signed\s+up|registered|entered|booked)\s+(?:for|in|into)\s+(?:the\s+|a\s+)?(?P<np>(?:[\w-]+\s+){0,3}?(?:"
    + _EVENT_NOUNS
    + r"))s?\b(?P<rest>[^.!?]{0,40})",
    re.IGNORECASE,
)
_RESULT_RE = re.compile(
    r"\b(?P<verb>scored|got|finished|took|won|placed|came|passed|ran|completed)\s+(?P<obj>(?:[^.;!?,]{0,30}?)"
    r"(?:\d+(?:[:.]\d+)+|\d+(?:\s+out\s+of\s+\d+|/\d+)|(?<=\s)\d+(?:\.\d+)?(?=\s*(?:overall|points?|pts|%|$|[,.!]))|"
    r"(?:first|second|third|fourth|fifth|1st|2nd|3rd|\d+th)\s+(?:place|position|prize))(?:[^.;!?,]{0,40}?)?)(?=[.;!?,]|\s+and\b|$)",
    re.IGNORECASE,
)


_TIME_GATE = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday tomorrow tonight yesterday next this last the in
    january february march april may june july august september october november december jan feb mar apr jun jul
    aug sep sept oct nov dec""".split()
)
_RESULT_VERBS = frozenset("scored got finished took won placed came passed ran completed".split())
#: The object of a date correction that names no event ("it's the 14th, not the 4th"): the latest one is meant.
ANY_EVENT = "*"
_IT_IS_DATE_RE = re.compile(
    r"\b(?:it['’]?s|it\s+is|it\s+was|that['’]s|i\s+mean|i\s+meant|sorry,?|actually,?)\s+(?:actually\s+|really\s+)?(?:on\s+)?(?P<date>(?:the\s+)?\d{1,2}(?:st|nd|rd|th)"
    r"(?:\s+of\s+"
    + MONTH_WORD
    + r")?|"
    + WEEKDAY_WORD
    + r"|"
    + MONTH_WORD
    + r"\s+\d{1,2}(?:st|nd|rd|th)?)\s*,?\s+not\s+",
    re.IGNORECASE,
)


def _clause_timed(s: Sentence, ctx: Context, end: int) -> bool:
    stop = re.compile(r"[^.;!?]*").match(s.text, end, s.end)
    return TIME_CUE_RE.search(s.text, ctx.start, stop.end() if stop else end) is not None


def _untimed(phrase: str) -> str:
    """The phrase without its time words ("football tournament on Saturday in Wieliczka" → "football tournament
    in Wieliczka")."""
    out = _STRIP_TIME_RE.sub(" ", phrase)
    out = re.sub(r"\s{2,}", " ", out).strip(" ,;:-—")
    out = re.sub(r"\s+(?:on|at|from|by|in|for|until)$", "", out, flags=re.I)
    return out


def _owner(s: Sentence, np: str, ctx: Context) -> tuple[str, str]:
    """Whose event a noun phrase names, and the phrase without the possessor."""
    m = re.match(r"(?P<who>my|our|his|her|their|the|(?-i:[A-Z])[\w'’-]+['’]s)\s+(?P<rest>.+)", np.strip(), re.I | re.S)
    if m is None:
        return ctx.subject, np.strip()
    who = m.group("who")
    rest = m.group("rest")
    if who.casefold() in ("my", "our"):
        return s.speaker, rest
    if who.casefold() == "the":
        return ctx.subject, rest
    if who.casefold() in ("his", "her", "their"):
        return ctx.subject, rest
    return re.sub(r"['’]s$", "", who), rest


def _event_np(s: Sentence, start: int, end: int, np: str, after: int) -> Found | None:
    ctx = ctx_at(s, start)
    if ctx is None:
        pron = re.match(r"(?:his|her|their)\b", np.strip(), re.I)
        if pron is None:
            return None
        person = resolve_pronoun(s.text, start, "m" if pron.group(0).casefold() == "his" else "f")
        if person is None:
            return None
        ctx = Context(person.subject, start, False, "present", False, False, person)
    if ctx.negated:
        return None
    who, what = _owner(s, np, ctx)
    if re.match(r"(?:his|her|their)\b", np.strip(), re.I):
        person = resolve_pronoun(s.text, start, "m" if np.strip().casefold().startswith("his") else "f")
        if person is not None:
            who = person.subject
    what = _untimed(what)
    if not what or len(what.split()) > 10:
        return None
    what = _with_topic(s, start, what)
    where = _PLACE_AFTER_RE.match(s.text, after, s.end)
    if where is not None and where.group("place").casefold() not in what.casefold():
        what = f"{what} at {where.group('place').strip()}"  # "we have a gig this saturday at sala el sol"
        after = where.end()
    route = _ROUTE_RE.match(s.text, after, s.end)
    if route is not None:
        what = f"{what}: {route.group('route').strip()}"  # "a bikepacking trip in July: Innsbruck to Lake Garda"
        after = route.end()
    found = make(replace(ctx, subject=who), s, "has_event", what, "event", end=after)
    return replace(found, span=(start, found.span[1] if found.span else after), time="present")


_ACRONYM_RE = re.compile(r"\b(?-i:[A-Z]{2,6})\b")
_NOT_TOPICS = frozenset("OK UK US USA EU AI CV TV PM AM ID PS FYI LOL OMG BTW NDA CEO COO CTO HR IT OMW ASAP".split())
_GENERIC_EVENTS = frozenset("test exam".split())


def _with_topic(s: Sentence, start: int, what: str) -> str:
    """A bare "test" or "exam" takes the name of what it is in the message ("help with IELTS writing. My test is
    on 16 August" → "IELTS test"); an acronym that names another test already ("TB test done") does not."""
    if what.casefold() not in _GENERIC_EVENTS:
        return what
    topics = [
        m.group(0)
        for m in _ACRONYM_RE.finditer(s.text, 0, start)
        if m.group(0) not in _NOT_TOPICS and not re.match(r"\s+(?:test|exam)\b", s.text[m.end() :], re.IGNORECASE)
    ]
    return f"{topics[-1]} {what}" if topics else what


#: "12 september 2026, small wedding in kilkenny": a sentence that opens with a date and names an event.
_DATE_FIRST_RE = re.compile(
    r"(?P<date>\d{1,2}(?:st|nd|rd|th)?\s+"
    + MONTH_WORD
    + r"(?:\s+\d{4})?|"
    + MONTH_WORD
    + r"\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?)"
    r"\s*[,:—–-]\s*(?P<np>(?:[\w'’-]+\s+){0,3}?(?:" + _EVENT_NOUNS + r")(?:\s+(?:in|at)\s+[^,.;!?]{2,40})?)",
    re.IGNORECASE,
)


def _have_event(s: Sentence, m: re.Match[str]) -> Found | None:
    verb = m.group("verb").casefold()
    ctx = ctx_at(s, m.start(), time="past" if verb == "had" else "present")
    if ctx is None or ctx.negated or not _clause_timed(s, ctx, m.end()):
        return None
    rest = re.compile(r"(?:(?!\s(?:and|but|so|because|bc|when|while|which|who|our|my)\s)[\w\s'’&-])*").match(
        s.text, m.end(), min(s.end, m.end() + 50)
    )
    tail = rest.group(0) if rest else ""
    what = _untimed(m.group("np") + tail)
    what = re.sub(r"^(?:a|an|the|my|our)\s+", "", what, flags=re.I)
    if not what:
        return None
    predicate = "attended" if verb == "had" else "has_event"
    return make(
        ctx, s, predicate, what, "have-event", end=m.end() + len(tail), time="past" if verb == "had" else "present"
    )


def _trip(s: Sentence, m: re.Match[str]) -> Found | None:
    verb = m.group("verb").casefold()
    direction = m.group("dir").casefold()
    past = verb in ("returned", "got back", "came back") or (verb == "back" and direction.endswith("from"))
    ctx = ctx_at(s, m.start(), time="past" if past else "present")
    if ctx is None or ctx.negated or not _clause_timed(s, ctx, m.end()):
        return None
    place = m.group("place")
    if past:
        return make(ctx, s, "visited", place, "trip.back", end=m.end(), time="past")
    if direction == "from" and verb not in ("fly", "flying", "coming"):
        return None
    if ctx.time == "past":
        return None
    verb_text = {
        "flying": "fly",
        "going": "go",
        "heading": "go",
        "off": "go",
        "travelling": "travel",
        "traveling": "travel",
        "driving": "drive",
        "coming": "come",
        "visiting": "visit",
        "flies": "fly",
    }.get(verb, verb)
    if direction == "from":
        return make(ctx, s, "plans_to", f"{verb_text} in from {place}", "trip.in", end=m.end(), time="future")
    tail = re.compile(
        r"\s+for\s+(?:the\s+|our\s+|a\s+)?(?P<what>honeymoon|holiday|vacation|wedding|trip|conference|eid|christmas|easter)\b",
        re.I,
    ).match(s.text, m.end(), s.end)
    extra = f" for the {tail.group('what')}" if tail else ""
    return make(
        ctx, s, "plans_to", f"{verb_text} to {place}{extra}", "trip", end=tail.end() if tail else m.end(), time="future"
    )


def _birthdays(s: Sentence) -> Iterator[Found]:
    text = s.text
    for m in _BIRTHDAY_RE.finditer(text, s.start, s.end):
        whose = m.group("whose")
        ctx = ctx_at(s, m.start()) or Context(s.speaker, m.start(), False, "present", False, False)
        if whose.casefold() in ("my", "our"):
            owner = f"user's {m.group('rel')}" if m.group("rel") else s.speaker
        elif whose.casefold() in ("his", "her"):
            person = resolve_pronoun(text, m.start(), "m" if whose.casefold() == "his" else "f")
            if person is None:
                continue
            owner = person.subject
        else:
            owner = re.sub(r"['’]s$", "", whose)
        changed = bool(
            re.search(r"\b(?:wait|no|actually|sorry|correction|i\s+mean)\b", text[s.start : m.start()], re.I)
        )
        yield replace(
            make(ctx, s, "has_birthday", m.group("date"), "birthday", end=m.end(), subject=owner, change=changed),
            span=(m.start("date"), m.end()),
        )
    for m in _DATE_IS_BIRTHDAY_RE.finditer(text, s.start, s.end):
        whose = m.group("whose")
        rel = re.match(r"my\s+([\w-]+)['’]s", whose, re.I)
        owner = f"user's {rel.group(1)}" if rel else re.sub(r"['’]s$", "", whose)
        ctx = Context(s.speaker, m.start(), False, "present", False, False)
        yield replace(
            make(ctx, s, "has_birthday", m.group("date"), "birthday.of", end=m.end(), subject=owner),
            span=(m.start(), m.end()),
        )


def _result(s: Sentence, m: re.Match[str]) -> Iterator[Found]:
    """A result with its number: "I FINISHED THE MARATHON 🏃 4:12:37", "I got IELTS 7.5 overall", "Artur scored 5 out
    of 7 and took third place"."""
    verb = m.group("verb").casefold()
    obj = m.group("obj").strip()
    if verb == "got" and not re.match(r"(?:an?\s+)?(?-i:[A-Z]{2,})|.*\b(?:score|band|grade|mark|place|points?)\b", obj):
        return
    if re.match(r"(?:up|back|home|to|off|in|out|on|over)\b", obj, re.IGNORECASE):
        return
    ctx = ctx_at(s, m.start(), time="past")
    if ctx is None or ctx.negated or ctx.planned:
        return
    words = re.sub(r"[^\w\s:.,'’/-]", " ", f"{verb} {obj}")
    yield make(ctx, s, "achieved", re.sub(r"\s{2,}", " ", words).strip(), "result", end=m.end(), time="past")
