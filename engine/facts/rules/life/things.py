"""Vehicles, languages, instruments and studies.

"Our car is VW Passat B8 2016", "we sold it and now we have Skoda Kodiaq", "Bought a Ford E-Transit", "Hilux sold
to a guy in Voss", "is Camry 2014, not Corolla", "No car, never had one", "Drove my Golf"; "I speak Arabic, French,
English and a little Spanish"; "im the bassist"; "im in 3rd semester of arquitectura at ITESO", "Dariush study
engineering at University of Toronto", "BSc Statistics from OAU", "registered for Seneca Polytechnic", "Emma's home
from Iowa State on winter break".
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from engine.facts.catalog import Catalog
from engine.facts.rules.life.common import ctx_at, lowercase_writer, make, read_name, read_phrase, speaker_ctx, words_of
from engine.facts.rules.life.context import Time
from engine.facts.rules.life.words import LANGUAGE_WORDS, VEHICLE_BRANDS, VEHICLE_MODELS
from engine.facts.rules.model import Found, Sentence

_VEHICLE_WORD = (
    r"(?:" + "|".join(sorted((re.escape(w) for w in VEHICLE_BRANDS | VEHICLE_MODELS), key=len, reverse=True)) + r")"
)
_VEHICLE_RE = re.compile(
    r"(?P<lead>\b(?:our|my)\s+(?:car|van|truck|suv)\s+is\s+|\b(?:now\s+)?(?:we|i)\s+(?:now\s+)?(?:have|has|drive|own)\s+"
    r"(?:an?\s+|the\s+)?|\b(?:bought|buying|got|getting|picked\s+up|drove|driving|drive)\s+(?:an?\s+|my\s+|our\s+|the\s+)?|"
    r"\b(?:sold|selling)\s+(?:the\s+|my\s+|our\s+)?|\bis\s+|\b(?:my|our|the)\s+)"
    r"(?P<car>(?:(?:19|20)\d\d\s+(?:used\s+)?)?(?:"
    + _VEHICLE_WORD
    + r")(?:[\s-]+(?:(?-i:[A-Z0-9])[\w-]*(?:\.\d+)?|"
    + _VEHICLE_WORD
    + r")){0,4})",
    re.IGNORECASE,
)
_SOLD_RE = re.compile(
    r"(?<![\w-])(?P<car>(?-i:[A-Z])[\w-]*(?:\s+(?-i:[A-Z0-9])[\w-]*){0,2})\s+(?:was\s+|got\s+)?sold\b", re.IGNORECASE
)
_SOLD_THING_RE = re.compile(
    r"\b(?:sold|got\s+rid\s+of)\s+(?P<thing>(?:the|our|my)\s+(?:(?!last|this|next|in|on|at|to|for|and|but|so)[\w-]+\s*){1,3})",
    re.IGNORECASE,
)
_CLASS_RE = re.compile(
    r"\b(?:got|have|teach|teaching|taking|with)\s+(?:a|the|my)?\s*(?P<cls>(?:year|grade)\s+\d{1,2})\s+class\b|"
    r"\bteach(?:er|ing)?\s*\((?P<cls2>(?:year|grade)\s+\d{1,2})",
    re.IGNORECASE,
)
#: "traded the f150 in for a 2021 silverado", "traded in my Civic for a RAV4"
_TRADED_RE = re.compile(
    r"\btraded\s+(?:in\s+)?(?:the|my|our|that|this)\s+(?:(?:old|trusty|beat-?up)\s+)?(?P<old>" + _VEHICLE_WORD + r")\s+"
    r"(?:in\s+)?for\s+(?:an?\s+|the\s+)?(?:(?:new|used|brand\s+new)\s+)?(?P<year>(?:19|20)\d\d\s+)?"
    r"(?P<new>" + _VEHICLE_WORD + r"(?:[\s-]+(?:(?-i:[A-Z0-9])[\w-]*|" + _VEHICLE_WORD + r")){0,2})",
    re.IGNORECASE,
)
_SOLD_AFTER_RE = re.compile(r"\s+(?:was\s+|is\s+)?sold\b", re.IGNORECASE)
_CORRECTION_RE = re.compile(r",?\s*not\s+(?:the\s+|my\s+|a\s+)?(?P<wrong>[\w-]+)", re.IGNORECASE)
_NO_CAR_RE = re.compile(
    r"\b(?:no\s+car|don['’]?t\s+(?:have|own)\s+a\s+car|never\s+had\s+a\s+car|car-?free)\b", re.IGNORECASE
)
_LANG_ALT = "|".join(sorted(LANGUAGE_WORDS, key=len, reverse=True))
_SPEAK_RE = re.compile(
    r"\b(?P<verb>speak|speaks|spoke|fluent\s+in|learning|learn|native\s+language\s+is)\s+(?P<list>(?:(?:a\s+little|some|basic|"
    r"fluent|good|bad|broken|ok|okay|decent)\s+)?(?:" + _LANG_ALT + r")(?:\s*(?:,|and|&)\s*(?:(?:a\s+little|some|basic|"
    r"fluent|a\s+bit\s+of)\s+)?(?:" + _LANG_ALT + r"))*)",
    re.IGNORECASE,
)
_PLAYER_RE = re.compile(
    r"\b(?:the|a|an)\s+(?P<who>bassist|guitarist|drummer|pianist|violinist|cellist|saxophonist|trumpeter|keyboardist)\b",
    re.IGNORECASE,
)
_INSTRUMENT_OF = {
    "bassist": "bass",
    "guitarist": "guitar",
    "drummer": "drums",
    "pianist": "piano",
    "violinist": "violin",
    "cellist": "cello",
    "saxophonist": "saxophone",
    "trumpeter": "trumpet",
    "keyboardist": "keyboards",
}
_YEAR_OF_RE = re.compile(
    r"\b(?:in|into)\s+(?:(?:my|her|his|their|the)\s+)?(?:\w+\s+)?(?:year|semester|term|grade)\s+of\s+(?:an?\s+|my\s+|her\s+|his\s+)?"
    r"(?P<field>[^,.;!?()]{2,50}?)(?:\s+(?:at|in)\s+(?P<org>[^,.;!?()]{2,60}))?(?=[,.;!?()]|\s+and\b|$)",
    re.IGNORECASE,
)
_PLACE_ON_RE = re.compile(
    r"\b(?:got|have|been\s+offered|was\s+offered|won|accepted)\s+(?:a\s+place|onto|into|on)\s+(?:on\s+|at\s+|in\s+|onto\s+)?(?:the\s+|a\s+)?"
    r"(?P<course>(?:[\w-]+\s+){0,4}?(?:course|programme|program|degree|masters?|msc|ma|phd|apprenticeship|diploma))"
    r"(?:\s+at\s+(?:the\s+)?(?P<org>(?-i:[A-Z])[\w'’&-]*(?:\s+(?-i:[A-Z])[\w'’&-]*){0,4}))?",
    re.IGNORECASE,
)
_YEAR_AT_RE = re.compile(
    r"\b(?:\d(?:st|nd|rd|th)|first|second|third|fourth|final|last)\s+year\s+(?:of\s+)?(?P<field>(?:[\w-]+\s+){0,3}?[\w-]+)\s+"
    r"(?:at|in)\s+(?P<org>(?-i:[A-Z])[\w'’&-]*(?:\s+(?-i:[A-Z])[\w'’&-]*){0,4})",
    re.IGNORECASE,
)
_STUDY_RE = re.compile(
    r"\b(?P<verb>study|studies|studying|studied|majoring\s+in|major\s+in|doing)\s+(?P<field>[\w\s-]{2,40}?)\s+(?:at|in)\s+",
    re.IGNORECASE,
)
_DEGREE_RE = re.compile(
    r"\b(?P<deg>BSc|BA|BEng|MSc|MA|MBA|MEng|PhD|MPhil|BS|MS|LLB|LLM|MD|Bachelor(?:'s)?(?:\s+of\s+\w+)?|Master(?:'s)?(?:\s+of\s+\w+)?)"
    r"\s+(?:in\s+)?(?P<field>(?:[A-Z][\w-]*|and|&)(?:\s+(?:[A-Z][\w-]*|and|&)){0,3})\s+(?:at|from)\s+(?:the\s+)?",
)
_ENROLLED_RE = re.compile(r"\b(?:registered|enrolled|signed\s+up|accepted)\s+(?:for|in|at|into|to)\s+", re.IGNORECASE)
_HOME_FROM_RE = re.compile(
    r"['’]s\s+home\s+from\s+|\bhome\s+from\s+|\bheading\s+(?:off\s+)?to\s+|\bback\s+to\s+", re.IGNORECASE
)
_SCHOOL_WORD_RE = re.compile(
    r"\b(?:University|College|Institute|Polytechnic|School|State|Academy|Uni|Universidad|Université|Universität)\b|"
    r"^(?-i:[A-Z]{2,6})$"
)


_FAN_RE = re.compile(
    r"\b(?:(?:as\s+)?an?\s+|i['’]?m\s+an?\s+|im\s+an?\s+|big\s+|huge\s+)(?P<team>(?-i:[A-Z])[\w'’.-]*(?:\s+(?-i:[A-Z])[\w'’.-]*){0,2})"
    r"\s+(?:fan|supporter)\b",
    re.IGNORECASE,
)
_SPORT_CUE_RE = re.compile(
    r"\b(?:match|season|game|league|football|soccer|team|club|derby|banter|goal|cup|fixture|stadium|pitch)\b",
    re.IGNORECASE,
)
_SWITCH_RE = re.compile(
    r"\b(?:switch(?:ing|ed)?|chang(?:e|ed|ing)|mov(?:e|ed|ing))\s+(?:my\s+\w+\s+|over\s+)?from\s+(?P<old>[^,.;!?]{2,30}?)\s+to\s+"
    r"(?P<new>[^,.;!?\U0001F000-\U0001FAFF]{2,30}?)(?=\s*(?:[,.;!?\U0001F000-\U0001FAFF]|$|\s(?:starting|from|in|next|this|because|bc|as)\b))",
    re.IGNORECASE,
)
_EXERCISE_RE = re.compile(
    r"\b(?P<verb>swim|run|jog|cycle|ride|bike|row|climb|hike|lift|box|play)\s+(?P<what>(?:[a-z]+\s+)?)"
    r"(?P<freq>(?:\d+|one|two|three|four|five|six|seven|once|twice)\s*(?:x|times)\s+(?:a|per)\s+(?:week|day|month)|"
    r"(?:about\s+)?\d+\s*(?:km|k|miles?|kilometres?|kilometers?)\s+(?:a|per)\s+(?:week|day|month)|"
    r"every\s+(?:day|morning|evening|week|weekend)|daily|weekly)",
    re.IGNORECASE,
)


_VEHICLE_GATE = VEHICLE_BRANDS | VEHICLE_MODELS | frozenset({"car", "van", "truck", "suv"})
_EXERCISE_GATE = frozenset("week day month daily weekly every times x km k miles kilometres kilometers".split())
_STUDY_GATE = frozenset(
    """year semester term grade study studies studying studied majoring major doing bsc ba beng msc ma mba meng phd
    mphil bs ms llb llm md bachelor bachelor's master master's registered enrolled signed accepted home heading back
    place course programme program degree""".split()
)
_THING_WORDS = (
    _VEHICLE_GATE
    | _EXERCISE_GATE
    | _STUDY_GATE
    | frozenset(_INSTRUMENT_OF)
    | frozenset(
        """speak speaks spoke fluent learning native sold rid fan supporter switch switching switched change changed
        changing from no""".split()
    )
)


def things(s: Sentence, catalog: Catalog) -> Iterator[Found]:  # noqa: C901 — a cascade of rules read top to bottom; not yet split
    """Vehicles, languages, instruments, studies, classes taught, things sold, teams supported, switches and
    exercise in one sentence."""
    low = s.low
    words = words_of(low)
    if not words & _THING_WORDS:
        return
    if " fan" in low or "supporter" in low:
        for m in _FAN_RE.finditer(s.text, s.start, s.end):
            as_a = re.match(r"as\s", m.group(0), re.IGNORECASE) is not None
            ctx = speaker_ctx(s, m.start()) if as_a else ctx_at(s, m.start() + len(m.group(0).split()[0]))
            if ctx is None or ctx.negated or ctx.subject != s.speaker:
                continue
            team = m.group("team")
            if _SPORT_CUE_RE.search(s.text):
                yield replace(make(ctx, s, "supports_team", team, "fan.team", end=m.end()), span=(m.start(), m.end()))
            else:
                yield replace(make(ctx, s, "likes", team, "fan", end=m.end()), span=(m.start(), m.end()))
    if "from" in low and " to " in low:
        for m in _SWITCH_RE.finditer(s.text, s.start, s.end):
            ctx = ctx_at(s, m.start())
            if ctx is None or ctx.negated or ctx.subject != s.speaker:
                continue
            # "I'm switching from arquitectura to diseño gráfico": whatever the old value was, the new one
            # replaces it in the same slot (resolved when it is stored)
            yield make(
                ctx,
                s,
                "switched_to",
                f"{m.group('new').strip()} ⟵ {m.group('old').strip()}",
                "switch",
                end=m.end(),
                change=True,
            )
    for m in _EXERCISE_RE.finditer(s.text, s.start, s.end) if words & _EXERCISE_GATE else ():
        ctx = ctx_at(s, m.start())
        if ctx is None or ctx.negated or ctx.subject != s.speaker:
            continue
        verb = m.group("verb").casefold()
        what = m.group("what").strip()
        activity = {
            "swim": "swimming",
            "run": "running",
            "jog": "jogging",
            "cycle": "cycling",
            "ride": "cycling",
            "bike": "cycling",
            "row": "rowing",
            "climb": "climbing",
            "hike": "hiking",
            "lift": "weightlifting",
            "box": "boxing",
        }.get(verb, f"{verb} {what}".strip())
        yield replace(
            make(ctx, s, "exercises", f"{activity} {m.group('freq')}", "exercise", end=m.end()),
            span=(m.start(), m.end()),
        )
    if words & _VEHICLE_GATE:
        yield from _vehicles(s)
    if "sold" in low or "got rid of" in low:
        for m in _SOLD_THING_RE.finditer(s.text, s.start, s.end):
            thing = m.group("thing").strip()
            if _vehicle_like(thing):
                continue
            ctx = ctx_at(s, m.start(), time="past")
            if ctx is not None and not ctx.negated and ctx.subject == s.speaker:
                yield make(ctx, s, "sold", thing, "sold", end=m.end(), change=True, time="past")
    if "year" in low or "grade" in low:
        for m in _CLASS_RE.finditer(s.text, s.start, s.end):
            ctx = ctx_at(s, m.start())
            if ctx is None or ctx.subject != s.speaker:
                continue
            yield make(ctx, s, "teaches", m.group("cls") or m.group("cls2"), "teaches", end=m.end())
            other = re.compile(r"[^.;!?]{0,25}?,?\s*not\s+(?P<cls>(?:year|grade|class)\s+\d{1,2})", re.I).match(
                s.text, m.end(), s.end
            )
            if other is not None:
                yield make(
                    ctx, s, "teaches", other.group("cls"), "teaches.not", end=other.end(), negated=True, change=True
                )
    if any(w in low for w in ("speak", "fluent", "learning", "native language")):
        for m in _SPEAK_RE.finditer(s.text, s.start, s.end):
            yield from _languages(s, m)
    for m in _PLAYER_RE.finditer(s.text, s.start, s.end) if words & set(_INSTRUMENT_OF) else ():
        ctx = ctx_at(s, m.start())
        if (
            ctx is not None
            and not ctx.negated
            and re.search(r"\b(?:i['’]?m|im|i\s+am|i\s+was)\s*$", s.text[ctx.start : m.start()], re.I)
        ):
            yield make(
                ctx, s, "plays_instrument", _INSTRUMENT_OF[m.group("who").casefold()], "instrument.player", end=m.end()
            )
    if words & _STUDY_GATE:
        yield from _studies(s)


def _vehicles(s: Sentence) -> Iterator[Found]:
    text = s.text
    for m in _VEHICLE_RE.finditer(text, s.start, s.end):
        lead = m.group("lead").casefold().strip()
        car = m.group("car").strip().rstrip(".")
        if not _vehicle_like(car):
            continue
        if lead in ("my", "our", "the") and not re.search(
            r"\b(?:car|van|truck|drive|drove|driving|note|insurance|parked|tow)\b", text[s.start : s.end], re.I
        ):
            continue
        sold = lead.startswith(("sold", "selling")) or _SOLD_AFTER_RE.match(text, m.end(), s.end) is not None
        time: Time = "past" if sold or lead.startswith(("bought", "got", "picked", "drove")) else "present"
        possessive = lead.startswith(("our", "my", "the"))
        ctx = ctx_at(
            s,
            m.start() if possessive else m.end("lead") if lead.startswith(("we", "i", "now")) else m.start(),
            time=time,
        )
        if ctx is None and (lead == "is" or sold or possessive):
            ctx = speaker_ctx(s, m.start(), time)
        if ctx is None or ctx.irrealis or (ctx.person is not None and ctx.subject != s.speaker):
            continue
        if lead.startswith(("selling", "buying", "getting")) or ctx.planned:
            continue
        if lead == "is" and not re.search(
            r"\b(?:car|sorry|actually|is)\b", text[max(s.start, m.start() - 40) : m.start()], re.I
        ):
            continue
        ctx = replace(ctx, subject=s.speaker, person=None)
        end = m.end()
        if sold:
            yield _dated_by_next(make(ctx, s, "drives", car, "vehicle.sold", end=end, negated=True, change=True), s)
            continue
        change = bool(re.search(r"\b(?:now|bought|new|got|sold)\b", text[s.start : end], re.I))
        yield _dated_by_next(make(ctx, s, "drives", car, "vehicle", end=end, negated=False, change=change), s)
        wrong = _CORRECTION_RE.match(text, end, s.end)
        if wrong is not None and _vehicle_like(wrong.group("wrong")):
            yield make(
                ctx, s, "drives", wrong.group("wrong"), "vehicle.not", end=wrong.end(), negated=True, change=True
            )
    yield from _traded(s)
    for m in _SOLD_RE.finditer(text, s.start, s.end):
        car = m.group("car")
        if not _vehicle_like(car):
            continue
        ctx = speaker_ctx(s, m.start(), "past")
        if ctx is None or ctx.irrealis:
            continue
        yield make(
            replace(ctx, subject=s.speaker, person=None),
            s,
            "drives",
            car,
            "vehicle.sold",
            end=m.end(),
            negated=True,
            change=True,
        )
    for m in _NO_CAR_RE.finditer(text, s.start, s.end):
        ctx = ctx_at(s, m.start())
        if ctx is None or ctx.subject != s.speaker:
            continue
        yield make(replace(ctx, negated=False), s, "drives", "no car", "vehicle.none", end=m.end())


def _traded(s: Sentence) -> Iterator[Found]:
    """ "traded the f150 in for a 2021 silverado": the new vehicle replaces the old."""
    text = s.text
    for m in _TRADED_RE.finditer(text, s.start, s.end):
        ctx = speaker_ctx(s, m.start(), "past")
        if ctx is None or ctx.irrealis or ctx.negated:
            continue
        ctx = replace(ctx, subject=s.speaker, person=None)
        new = f"{(m.group('year') or '').strip()} {m.group('new')}".strip()
        yield make(ctx, s, "drives", m.group("old"), "vehicle.traded", end=m.end("old"), negated=True, change=True)
        yield _dated_by_next(make(ctx, s, "drives", new, "vehicle.traded-for", end=m.end(), change=True), s)


def _vehicle_like(car: str) -> bool:
    words = [w.casefold() for w in re.findall(r"[\w-]+", car)]
    return (
        bool(words)
        and any(w in VEHICLE_BRANDS or w in VEHICLE_MODELS for w in words)
        and not (
            len(words) == 1
            and words[0]
            in (
                "model",
                "leaf",
                "fit",
                "ram",
                "mini",
                "seat",
                "focus",
                "golf",
                "polo",
                "transit",
                "patrol",
                "ranger",
                "accord",
                "superb",
            )
            and not re.search(r"[A-Z]", car[:1])
        )
    )


def _dated_by_next(found: Found, s: Sentence) -> Found:
    """ "Bought a Ford E-Transit. Picked it up yesterday.": the next sentence dates it when it refers back."""
    nxt = re.compile(
        r"[\s.!]*(?:picked\s+it\s+up|got\s+it|collected\s+it|it\s+arrived)[^.!?\n]{0,30}", re.IGNORECASE
    ).match(s.text, s.end)
    if nxt is None or found.span is None:
        return found
    return replace(found, span=(found.span[0], nxt.end()), time="past")


def _languages(s: Sentence, m: re.Match[str]) -> Iterator[Found]:
    verb = m.group("verb").casefold()
    ctx = ctx_at(s, m.start())
    if ctx is None or ctx.negated:
        return
    predicate = (
        "learning"
        if verb.startswith("learn")
        else "native_language"
        if verb.startswith("native")
        else "speaks_language"
    )
    for part in re.split(r"\s*(?:,|\band\b|&)\s*", m.group("list")):
        lang = re.search(r"(?:" + _LANG_ALT + r")$", part, re.IGNORECASE)
        if lang is None:
            continue
        value = part.strip() if predicate == "speaks_language" else lang.group(0)
        yield make(ctx, s, predicate, value, "language", end=m.end())


def _school(text: str, pos: int, end: int, lower_ok: bool) -> tuple[str, int] | None:
    m = re.compile(r"\s*(?:the\s+)?").match(text, pos, end)
    start = m.end() if m else pos
    found = read_name(text, start, end, lowercase_ok=lower_ok, max_words=6)
    if found is None:
        return None
    if not _SCHOOL_WORD_RE.search(found[0]) and not re.fullmatch(r"[A-Z]{2,6}", found[0]):
        return None
    return found


def _studies(s: Sentence) -> Iterator[Found]:  # noqa: C901 — a cascade of rules read top to bottom; not yet split
    text = s.text
    lower_ok = lowercase_writer(text)
    for m in _YEAR_OF_RE.finditer(text, s.start, s.end):
        ctx = ctx_at(s, m.start())
        if ctx is None or ctx.negated:
            continue
        field = m.group("field").strip()
        yield make(ctx, s, "studies", field, "studies.year", end=m.end("field"))
        if m.group("org"):
            org = read_name(text, m.start("org"), m.end("org") + 1, lowercase_ok=lower_ok, max_words=6)
            if org is not None:
                yield make(ctx, s, "studies_at", org[0], "studies.year.at", end=org[1])
    for m in _PLACE_ON_RE.finditer(text, s.start, s.end):
        ctx = ctx_at(s, m.start(), time="past")
        if ctx is None or ctx.negated:
            continue
        course = m.group("course").strip()
        future = re.search(r"\bstart(?:ing|s)?\b", text[m.end() : s.end], re.I) is not None
        yield make(ctx, s, "studies", course, "studies.place", end=m.end(), time="future" if future else "past")
        if m.group("org"):
            yield make(
                ctx,
                s,
                "studies_at",
                m.group("org"),
                "studies.place.at",
                end=m.end(),
                time="future" if future else "past",
            )
    for m in _YEAR_AT_RE.finditer(text, s.start, s.end):
        if _YEAR_OF_RE.search(text, max(s.start, m.start() - 12), m.end()):
            continue
        ctx = ctx_at(s, m.start())
        if ctx is None or ctx.negated:
            continue
        yield make(ctx, s, "studies", m.group("field"), "studies.year-at", end=m.end("field"))
        yield make(ctx, s, "studies_at", m.group("org"), "studies.year-at.at", end=m.end())
    for m in _STUDY_RE.finditer(text, s.start, s.end):
        org = _school(text, m.end(), s.end, lower_ok)
        if org is None:
            continue
        verb = m.group("verb").casefold()
        ctx = ctx_at(s, m.start(), time="past" if verb == "studied" else "present")
        if ctx is None or ctx.negated:
            continue
        field = m.group("field").strip()
        predicate = "graduated_from" if verb == "studied" else "studies_at"
        yield make(ctx, s, predicate, f"{org[0]} ({field})", "studies", end=org[1])
    for m in _DEGREE_RE.finditer(text, s.start, s.end):
        org = _school(text, m.end(), s.end, lower_ok) or read_name(
            text, m.end(), s.end, lowercase_ok=False, max_words=5
        )
        if org is None:
            continue
        ctx = ctx_at(s, m.start())
        if ctx is None:
            continue
        degree = f"{m.group('deg')} {m.group('field')}".strip()
        future = bool(re.search(r"\bstart(?:ing|s)?\b", text[org[1] : s.end], re.I)) or ctx.planned
        if future:
            yield make(ctx, s, "plans_to", f"study {degree} at {org[0]}", "degree.plan", end=org[1], time="future")
        else:
            yield make(ctx, s, "has_degree", f"{degree} from {org[0]}", "degree", end=org[1])
    for m in _ENROLLED_RE.finditer(text, s.start, s.end):
        org = _school(text, m.end(), s.end, lower_ok)
        if org is None:
            continue
        ctx = ctx_at(s, m.start(), time="past")
        if ctx is None or ctx.negated:
            continue
        course = read_phrase(text, org[1] + 2, s.end, max_words=6) if text[org[1] : org[1] + 1] == "," else None
        value = f"{org[0]}, {course}" if course else org[0]
        yield make(ctx, s, "enrolled_in", value, "enrolled", end=org[1])
    for m in _HOME_FROM_RE.finditer(text, s.start, s.end):
        org = _school(text, m.end(), s.end, lower_ok)
        if org is None:
            continue
        ctx = ctx_at(s, m.start() + (1 if text[m.start()] in "'’" else 0))
        if ctx is None or ctx.negated:
            continue
        field = re.compile(r"[^.;!?]{0,30}?\bfor\s+(?P<f>[\w\s]{3,30}?)(?=[,.;!?]|$)").match(text, org[1], s.end)
        value = f"{org[0]} ({field.group('f').strip()})" if field else org[0]
        yield make(ctx, s, "studies_at", value, "studies.home-from", end=org[1])
