"""Health, diet and habits: conditions, allergies, medication, diets, and what someone does or does not consume.

"I have asthma", "I was diagnosed with hypothyroidism", "Got tinnitus", "I'm lactose intolerant", "my
mother-in-law … is diabetic", "I'm allergic to cats", "it is me who is allergic to penicillin, not Youssef", "I'm
on 50 mcg of thyroxine", "Doctor gave me rosuvastatin", "Went vegan on 1 January", "I don't smoke", "non-smoker
since 1998", "I quit smoking", "quit coffee 3 weeks ago, matcha only now", "I ate way too much picanha",
"Friday night shisha with friends".

What someone consumes (``consumes``) and what they abstain from (``avoids``) or gave up (``quit``) are kept as
separate facts; whether two of them — or a diet and a dish — contradict each other is decided when they are
stored (:mod:`engine.facts.compat`), so "I don't drink alcohol" and "Friday wine o'clock" become a conflict for the
user to settle.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from engine.facts.catalog import Catalog
from engine.facts.rules.life.common import LATER_START_RE, ctx_at, make, read_phrase, speaker_ctx, words_of
from engine.facts.rules.life.context import Context
from engine.facts.rules.life.words import (
    ALCOHOL_WORDS,
    CONDITION_PHRASES,
    CONDITION_WORDS,
    DIET_WORDS,
    FISH_WORDS,
    MEAT_WORDS,
    MEDICATION_SUFFIXES,
    MEDICATION_WORDS,
    SMOKING_WORDS,
)
from engine.facts.rules.model import Found, Sentence

_COND_ALT = "|".join(
    sorted((re.escape(w).replace(r"\ ", r"\s+") for w in (*CONDITION_WORDS, *CONDITION_PHRASES)), key=len, reverse=True)
)
_CONDITION_RE = re.compile(
    r"\b(?P<verb>have|has|had|having|got|get|gets|suffer\s+from|suffers\s+from|diagnosed\s+with|living\s+with|"
    r"struggle\s+with|struggling\s+with|developed)\s+(?:(?:a|an|the|some|mild|severe|chronic|bad|"
    r"really\s+bad|bit\s+of|[a-z]+-[a-z]+)\s+)*(?P<cond>(?:high\s+|low\s+|type\s+[12]\s+)?(?:"
    + _COND_ALT
    + r")(?:\s+with\s+aura)?)\b",
    re.IGNORECASE,
)
#: "im 44 w gout in my big toe", "I'm a 50-year-old with sleep apnea"; "the doctor said iron-deficiency anemia"
_WITH_CONDITION_RE = re.compile(
    r"\b(?:i['’]?m|im|i\s+am)\s+(?:an?\s+)?(?:\d+(?:[- ]?(?:year|yr)s?[- ]old)?\s+)?(?:w/?|with)\s+"
    r"(?:(?:a|an|mild|severe|chronic|bad)\s+)*"
    r"(?P<cond>(?:type\s+[12]\s+)?(?:" + _COND_ALT + r"))\b"
    r"|\b(?:doctor|doc|gp|dr|specialist|neurologist|cardiologist)\s+(?:\w+\s+)?(?:said|says|thinks|confirmed|found|find|finds|diagnosed)\s+"
    r"(?:(?:it['’]?s|it\s+is|i\s+have|i['’]ve\s+got|that\s+i\s+have)\s+)?(?:(?:an?|mild|severe|chronic|bad|early|"
    r"moderate)\s+)*(?:[a-z]+-[a-z]+\s+)?"
    r"(?P<said>(?:type\s+[12]\s+)?(?:" + _COND_ALT + r"))\b",
    re.IGNORECASE,
)
_ADJ_CONDITION_RE = re.compile(
    r"\b(?P<be>i['’]?m|im|i\s+am|is|are|['’]s|was)\s+(?:also\s+|now\s+|a\s+bit\s+)?(?P<cond>(?:type\s+[12]\s+)?diabetic|asthmatic|epileptic|"
    r"lactose[- ]intolerant|gluten[- ]intolerant|coeliac|celiac|anaemic|anemic|hypertensive|pre-?diabetic|"
    r"dyslexic|autistic|colou?r[- ]?blind|deaf|blind)\b",
    re.IGNORECASE,
)
_INJURY_RE = re.compile(
    r"\b(?:tore|torn|broke|broken|sprained|twisted|fractured|dislocated|injured|hurt)\s+(?:my|his|her)\s+"
    r"(?P<part>(?:left\s+|right\s+)?[\w-]+)",
    re.IGNORECASE,
)
_ALLERGY_RE = re.compile(r"\ballergic\s+to\s+", re.IGNORECASE)
_CLEFT_RE = re.compile(
    r"\b(?:it\s+is|it['’]s)\s+(?:me|my\s+(?P<rel>\w+)(?:\s+(?P<name>[A-Z][\w'’-]+))?|(?P<other>[A-Z][\w'’-]+))\s+who\s+",
    re.IGNORECASE,
)
_NOT_X_RE = re.compile(r",?\s*not\s+(?:my\s+\w+\s+)?(?P<name>[A-Z][\w'’-]+)\b")
_MED_RE = re.compile(
    r"\b(?P<verb>i['’]?m\s+on|im\s+on|i\s+am\s+on|been\s+on|i['’]ve\s+been\s+on|take|takes|taking|took|"
    r"gave\s+me|give\s+me|gives\s+me|prescribed(?:\s+me)?|put\s+me\s+on|started\s+(?:on|taking)|using)\s+"
    r"(?:(?:\d+(?:[.,]\d+)?\s*(?:mg|mcg|µg|ml|g|iu)\s+(?:of\s+)?)|(?:a|an|my|the|some)\s+)?",
    re.IGNORECASE,
)
_FOR_CONDITION_RE = re.compile(
    r"(?:\s+(?!for\b|and\b|but\b)[\w-]+){0,4}?\s+(?:for|against)\s+(?:my|his|her|the|their)\s+(?:[\w-]+\s+)?"
    r"(?:(?P<cond>" + _COND_ALT + r")|sugar|heart|"
    r"blood\s+pressure|pain|thyroid|cholesterol|nerves|sleep)\b",
    re.IGNORECASE,
)
_PAREN_MEDS_RE = re.compile(r"\((?P<inner>[^()]{3,80})\)")
_DIET_RE = re.compile(
    r"\b(?P<lead>i['’]?m|im|i\s+am|we['’]re|we\s+are|i\s+was|we\s+were|(?:she|he)['’]?s|(?:she|he)\s+is|is|are|"
    r"went|gone|going|go|turned|became|become|been|was)\s+(?:(?:now|also|strictly|fully|mostly|still|a|an|"
    r"full|totally|basically)\s+)*(?P<diet>" + "|".join(sorted(DIET_WORDS, key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)
_AVOID_RE = re.compile(
    r"\b(?P<neg>don['’]?t|do\s+not|never|no\s+longer|doesn['’]?t|does\s+not)\s+(?:really\s+|even\s+|ever\s+)?"
    r"(?P<verb>smoke|drink|eat|touch|do)\b(?P<rest>[^,.;!?]{0,40})",
    re.IGNORECASE,
)
_NONSMOKER_RE = re.compile(
    r"\b(?:(?:a|an)\s+)?(?P<what>non-?smoker|non-?drinker|teetotal(?:ler)?|sober|smoke-?free)\b(?P<rest>[^,.;!?—–]{0,30})",
    re.IGNORECASE,
)
_QUIT_RE = re.compile(
    r"\b(?P<verb>quit|quitting|stopped|stop|gave\s+up|give\s+up|giving\s+up|cut\s+out|kicked)\s+"
    r"(?P<what>smoking|drinking(?:\s+alcohol)?|alcohol|coffee|caffeine|sugar|meat|vaping|cigarettes|booze|the\s+booze|"
    r"eating\s+(?:meat|pork|beef|fish|dairy|sugar|red\s+meat|gluten)|singing|running|dairy|gluten|social\s+media)\b"
    r"(?P<rest>[^,.;!?]{0,60})",
    re.IGNORECASE,
)
_CONSUME_RE = re.compile(
    r"\b(?P<verb>ate|eat|eats|eating|had|have|having|drink|drinks|drank|drinking|smoke|smokes|smoked|"
    r"allow\s+myself|enjoy|enjoyed|love|celebrated\s+with|ordered|grabbed|devoured|only|crushed|downed|sank|chugged|"
    r"knocked\s+back|polished\s+off|necked)\s+",
    re.IGNORECASE,
)
_CONSUMABLES = (
    MEAT_WORDS
    | FISH_WORDS
    | ALCOHOL_WORDS
    | (SMOKING_WORDS - {"smoke", "smoking", "smoker", "joint"})
    | {
        "coffee",
        "espresso",
        "matcha",
        "tea",
    }
)
_ITEM_RE = re.compile(
    r"\b(?P<item>" + "|".join(sorted((re.escape(w) for w in _CONSUMABLES), key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)
_ONLY_NOW_RE = re.compile(
    r"\b(?P<item>"
    + "|".join(sorted((re.escape(w) for w in _CONSUMABLES), key=len, reverse=True))
    + r")\s+only\s+now\b",
    re.IGNORECASE,
)
_SACRED_RE = re.compile(
    r"(?P<np>[^,.;!?—]{2,60}?)\s*,?\s+(?:is|are)\s+(?:sacred|my\s+(?:fav(?:ou?rite)?|favorite|thing|time\s+for\s+\w+|ritual))",
    re.IGNORECASE,
)


_CONDITION_GATE = CONDITION_WORDS | frozenset(
    """diabetic asthmatic epileptic anaemic anemic hypertensive prediabetic pre-diabetic dyslexic autistic deaf blind
    colourblind colorblind tore torn broke broken sprained twisted fractured dislocated injured hurt disc stones
    apnea apnoea blood fasciitis tunnel deficiency covid sclerosis fatigue fibrillation""".split()
)
_HEALTH_WORDS = (
    _CONDITION_GATE
    | DIET_WORDS
    | MEDICATION_WORDS
    | frozenset(_CONSUMABLES)
    | frozenset(
        """allergic allergy problem switched fodmap slimming weight diet atkins noom smoke smoking smoker non-smoker
        nonsmoker smoke-free drink drinking drinker non-drinker teetotal teetotaller sober eat eating quit quitting
        stopped stop gave give giving cut kicked""".split()
    )
)


def health(s: Sentence, catalog: Catalog) -> Iterator[Found]:  # noqa: C901 — a cascade of rules read top to bottom; not yet split
    """Conditions, allergies, medication, diet and consumption in one sentence."""
    text, low = s.text, s.low
    words = words_of(low)
    if not words & _HEALTH_WORDS and not any(len(w) >= 6 and w.endswith(MEDICATION_SUFFIXES) for w in words):
        return
    if words & _CONDITION_GATE:
        yield from _conditions(s)
    if "allergic" in low:
        for m in _ALLERGY_RE.finditer(text, s.start, s.end):
            yield from _allergy(s, m)
    if "allergy" in low:
        yield from _whose_allergy(s)
    if " problem is " in low and "allerg" in text.casefold():
        for m in _MY_PROBLEM_RE.finditer(text, s.start, s.end):
            ctx = speaker_ctx(s, m.start())
            if ctx is not None and not ctx.negated:
                # "the peanut allergy is Njeri, not me … MY problem is shellfish"
                yield make(ctx, s, "has_allergy", m.group("what"), "allergy.my-problem", end=m.end())
    if any(w in low for w in (" on ", "take", "took", "gave me", "give me", "prescribed", "put me", "using")):
        for m in _MED_RE.finditer(text, s.start, s.end):
            yield from _medication(s, m)
    if "switch" in low or "changed" in low or "moved me" in low:
        for m in _MED_SWITCH_RE.finditer(text, s.start, s.end):
            old, new = m.group("old"), m.group("new")
            if not (_is_medication(old) or _is_medication(new)):
                continue
            ctx = speaker_ctx(s, m.start(), "past")
            if ctx is None or ctx.negated:
                continue
            # "doc switched me from adderall to vyvanse last week": the new one replaces the old
            yield make(
                ctx, s, "takes_medication", old, "medication.switched-from", end=m.end(), negated=True, change=True
            )
            yield make(ctx, s, "takes_medication", new, "medication.switched-to", end=m.end(), change=True)
    if "(" in low:
        yield from _paren_meds(s)
    if any(w in low for w in DIET_WORDS):
        for m in _DIET_RE.finditer(text, s.start, s.end):
            yield from _diet(s, m)
    if any(
        w in low
        for w in (
            "fodmap",
            "slimming",
            "weight watchers",
            "keto",
            "paleo",
            "whole30",
            "fasting",
            "carb",
            "gluten-free",
            "gluten free",
            "atkins",
            "noom",
            "diet",
        )
    ):
        yield from _diet_plans(s)
    if "n't" in low or "nt " in low or " not " in low or "never" in low or "no longer" in low:
        for m in _AVOID_RE.finditer(text, s.start, s.end):
            yield from _avoid(s, m)
    if any(w in low for w in ("smoker", "drinker", "teetotal", "sober", "smoke-free", "smoke free")):
        for m in _NONSMOKER_RE.finditer(text, s.start, s.end):
            ctx = ctx_at(s, m.start())
            if ctx is not None and not ctx.negated:
                what = m.group("what").casefold()
                thing = "smoke" if "smok" in what else "drink alcohol"
                value = f"{thing} ({m.group('what')}{m.group('rest').rstrip()})"
                yield make(ctx, s, "avoids", value, "avoids.label", end=m.end())
    if any(w in low for w in ("quit", "stop", "gave up", "give up", "giving up", "cut out", "kicked")):
        for m in _QUIT_RE.finditer(text, s.start, s.end):
            ctx = ctx_at(s, m.start(), time="past")
            if ctx is None or ctx.negated:
                continue
            rest = m.group("rest")
            value = f"{m.group('what')}{rest.rstrip()}" if re.match(r"\s+(?:with|at|in)\b", rest) else m.group("what")
            verb = m.group("verb").casefold()
            stopped = (
                "stopped" if verb in ("stop", "stopped") else "gave up" if "give" in verb or "gave" in verb else "quit"
            )
            yield make(
                ctx,
                s,
                "stopped",
                f"{value} ({stopped})" if stopped != "stopped" else value,
                "stopped",
                end=m.end(),
                change=True,
                time="past",
            )
            eating = re.match(r"eating\s+(.+)", m.group("what"), re.IGNORECASE)
            if eating is not None:  # "I stopped eating meat": they do not eat it now
                yield make(
                    ctx, s, "avoids", f"eat {eating.group(1).casefold()}", "stopped.avoids", end=m.end(), change=True
                )
    if _ITEM_RE.search(text, s.start, s.end):
        yield from _consumption(s)


def _conditions(s: Sentence) -> Iterator[Found]:
    text = s.text
    for m in _CONDITION_RE.finditer(text, s.start, s.end):
        verb = m.group("verb").casefold()
        ctx = ctx_at(s, m.start(), time="past" if verb in ("had", "developed") else "present")
        if ctx is None or (ctx.person is not None and ctx.person.is_pet):
            continue
        cond = re.sub(r"\s+", " ", m.group("cond"))
        yield make(ctx, s, "has_condition", cond, "condition", end=m.end())
        if ctx.negated:
            yield from _attributed(s, ctx, "has_condition", cond, m.end())
    for m in _WITH_CONDITION_RE.finditer(text, s.start, s.end):
        ctx = speaker_ctx(s, m.start())
        if ctx is None or ctx.negated:
            continue
        cond = re.sub(r"\s+", " ", m.group("cond") or m.group("said"))
        yield make(ctx, s, "has_condition", cond, "condition.with", end=m.end())
    for m in _ADJ_CONDITION_RE.finditer(text, s.start, s.end):
        ctx = ctx_at(s, m.start("cond"))
        if ctx is None or (ctx.person is not None and ctx.person.is_pet):
            continue
        cond = m.group("cond").casefold()
        cond = (
            cond.replace("diabetic", "diabetes") if "type" in cond else cond.replace("diabetic", "diabetes (diabetic)")
        )
        yield make(ctx, s, "has_condition", cond, "condition.adj", end=m.end())
    for m in _INJURY_RE.finditer(text, s.start, s.end):
        ctx = ctx_at(s, m.start(), time="past")
        if ctx is None or ctx.negated:
            continue
        yield make(ctx, s, "has_injury", m.group(0), "injury", end=m.end())


def _allergy(s: Sentence, m: re.Match[str]) -> Iterator[Found]:
    text = s.text
    value = read_phrase(text, m.end(), s.end, max_words=3, stops=frozenset({"so", "and", "but", "not", "which"}))
    if value is None:
        return
    end = m.end() + len(value)
    cleft = None
    for c in _CLEFT_RE.finditer(text, s.start, m.start()):
        cleft = c
    if cleft is not None:
        # "it is me who is allergic to penicillin, not Youssef" / "It is my wife Shirin who …"
        who = (
            s.speaker
            if cleft.group(0).casefold().rstrip().endswith("me who")
            else (cleft.group("name") or cleft.group("other"))
        )
        ctx = ctx_at(s, cleft.end())
        if ctx is None or who is None:
            return
        yield make(replace(ctx, subject=who, negated=False), s, "has_allergy", value, "allergy.cleft", end=end)
        wrong = _NOT_X_RE.match(text, end, s.end)
        if wrong is not None:
            yield make(
                replace(ctx, subject=wrong.group("name"), negated=True),
                s,
                "has_allergy",
                value,
                "allergy.not",
                end=wrong.end(),
                change=True,
            )
        return
    ctx = ctx_at(s, m.start())
    if ctx is None:
        return
    yield make(ctx, s, "has_allergy", value, "allergy", end=end)
    if ctx.negated:
        yield from _attributed(s, ctx, "has_allergy", value, end)


_THAT_WAS_RE = re.compile(
    r"[^.;!?]{0,20}?[,;—–-]\s*(?:that|it)\s*(?:was|is|['’]s)\s+(?:actually\s+)?(?:my\s+(?P<rel>[\w-]+)(?:\s+(?P<name>(?-i:[A-Z])[\w'’-]+))?"
    r"|(?P<other>(?-i:[A-Z])[\w'’-]+))",
    re.IGNORECASE,
)


#: "The walnuts allergy is Matteo's, my partner, not mine", "the nut allergy is my brother's"
_WHOSE_ALLERGY_RE = re.compile(
    r"\b(?:the|that|this)\s+(?P<what>[\w-]+(?:\s+[\w-]+)?)\s+allergy\s+(?:is|was)\s+(?:actually\s+|really\s+)?"
    r"(?:(?P<name>(?-i:[A-Z][\w-]+))|my\s+(?P<rel>[a-z]+)(?:\s+(?P<relname>(?-i:[A-Z][\w-]+)))?)"
    r"(?:['’]s\b|(?=\s*,?\s*not\s+(?:me|mine)\b))",
    re.IGNORECASE,
)


_MED_SWITCH_RE = re.compile(
    r"\b(?:switched|changed|moved)\s+me\s+(?:over\s+)?from\s+(?P<old>[\w-]+)\s+(?:to|onto)\s+(?P<new>[\w-]+)",
    re.IGNORECASE,
)
_MY_PROBLEM_RE = re.compile(
    r"\bmy\s+(?:(?:only|real|actual)\s+)?problem\s+is\s+(?:only\s+|just\s+)?(?P<what>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)"
    r"(?=\s*(?:[,.;!?]|$|\s+(?:so|and|but)\b))",
    re.IGNORECASE,
)


def _whose_allergy(s: Sentence) -> Iterator[Found]:
    """An allergy given to its owner: "The walnuts allergy is Matteo's, my partner, not mine" — Matteo's, and (when
    the sentence says "not mine") no longer the speaker's."""
    for m in _WHOSE_ALLERGY_RE.finditer(s.text, s.start, s.end):
        ctx = speaker_ctx(s, m.start())
        if ctx is None:
            continue
        what = m.group("what")
        who = m.group("name") or m.group("relname") or f"user's {m.group('rel').casefold()}"
        yield make(replace(ctx, subject=who, person=None), s, "has_allergy", what, "allergy.whose", end=m.end())
        if re.search(r"\bnot\s+(?:mine|me|my\s+own)\b", s.text[m.end() : s.end], re.IGNORECASE):
            yield make(ctx, s, "has_allergy", what, "allergy.not-mine", end=m.end(), negated=True, change=True)


def _attributed(s: Sentence, ctx: Context, predicate: str, value: str, end: int) -> Iterator[Found]:
    """ "I'm not allergic to peanuts, that was my brother": the denied fact belongs to whoever is named."""
    m = _THAT_WAS_RE.match(s.text, end, s.end)
    if m is None:
        return
    who = m.group("name") or m.group("other") or (f"user's {m.group('rel').casefold()}" if m.group("rel") else None)
    if who is None:
        return
    yield make(replace(ctx, subject=who, negated=False, person=None), s, predicate, value, "attributed", end=m.end())


def _is_medication(word: str) -> bool:
    low = word.casefold().strip(".,")
    if low in MEDICATION_WORDS:
        return True
    return len(low) >= 6 and low.isalpha() and low.endswith(MEDICATION_SUFFIXES) and low not in _NOT_MEDS


_NOT_MEDS = frozenset(
    """someone everyone anyone phone alone done gone none stone bone tone zone iphone headphone microphone
    outside inside aside decide beside provide guide ride side wide bride pride slide divide online offline
    timeline deadline airline baseline headline routine machine engine magazine medicine vaccine""".split()
)


def _medication(s: Sentence, m: re.Match[str]) -> Iterator[Found]:
    text = s.text
    word = re.compile(r"\s*(?P<w>[\w-]+)(?P<dose>\s*,?\s*\d+(?:[.,]\d+)?\s*(?:mg|mcg|µg|ml|iu)\b)?", re.I).match(
        text, m.end(), s.end
    )
    if word is None:
        return
    # "I take Eliquis for my atrial fibrillation": a name taken for a condition is a medicine
    treated = _FOR_CONDITION_RE.match(text, word.end(), s.end)
    named = treated is not None and (word.group("w")[:1].isupper() or treated.group("cond") is not None)
    if not _is_medication(word.group("w")) and not named:
        return
    verb = m.group("verb").casefold()
    ctx = ctx_at(s, m.end(), time="past" if verb.startswith(("took", "gave")) else "present")
    if ctx is None:
        return
    if ctx.person is not None and ctx.person.is_pet:
        return
    value = word.group("w") + (word.group("dose") or "")
    yield make(ctx, s, "takes_medication", value.strip(" ,"), "medication", end=word.end())
    if treated is not None and treated.group("cond") and not ctx.negated:
        cond = re.sub(r"\s+", " ", treated.group("cond"))
        yield make(ctx, s, "has_condition", cond, "medication.for", end=treated.end())


def _paren_meds(s: Sentence) -> Iterator[Found]:
    """ "I have asthma (well controled, ventolin + seretide)": medicines listed in an aside."""
    for m in _PAREN_MEDS_RE.finditer(s.text, s.start, s.end):
        meds = [
            w
            for w in re.findall(r"[\w-]+", m.group("inner"))
            if _is_medication(w) and w.casefold() not in ("pill", "pills", "tablets")
        ]
        if not meds:
            continue
        ctx = ctx_at(s, m.start())
        if ctx is None or ctx.negated:
            continue
        for med in meds:
            yield make(ctx, s, "takes_medication", med, "medication.aside", end=m.end())


#: A named eating plan someone is on: "my huisarts wants me to try low FODMAP", "gemma's got me on slimming world"
_DIET_PLAN_RE = re.compile(
    r"\b(?P<lead>(?:got|put|wants?|told|asked)\s+me\s+(?:on|to\s+try|to\s+do|to\s+start|to\s+go)|i['’]?m\s+on|im\s+on|"
    r"i\s+am\s+on|(?:i|we)\s+(?:started|start|tried|try|am\s+trying|do|did)|doing|following|trying)\s+(?:the\s+|a\s+)?"
    r"(?P<diet>low[- ]fodmap|slimming\s+world|weight\s+watchers|whole\s*30|intermittent\s+fasting|low[- ]carb|"
    r"gluten[- ]free|atkins|noom|keto|paleo|mediterranean)(?:\s+diet)?\b",
    re.IGNORECASE,
)


def _diet_plans(s: Sentence) -> Iterator[Found]:
    """A named eating plan: "wants me to try low FODMAP for 6 weeks. I start on Monday", "got me on slimming world
    since new year" (the speaker's, whoever put them on it)."""
    for m in _DIET_PLAN_RE.finditer(s.text, s.start, s.end):
        lead = m.group("lead").casefold()
        ctx = speaker_ctx(s, m.start()) if " me " in f" {lead} " else ctx_at(s, m.start())
        if ctx is None or ctx.negated:
            continue
        diet = re.sub(r"[\s-]+", " ", m.group("diet").casefold()).replace("low ", "low-")
        change = any(w in lead for w in ("got", "put", "start", "tried", "try"))
        found = make(ctx, s, "diet", diet, "diet.plan", end=m.end(), change=change)
        later = LATER_START_RE.search(s.text, s.end, min(len(s.text), s.end + 120)) if change or "try" in lead else None
        # "wants me to try low FODMAP for 6 weeks. I start on Monday": the start dates the plan
        yield found if later is None else replace(found, span=(later.start(), later.end()), time="future")


def _diet(s: Sentence, m: re.Match[str]) -> Iterator[Found]:
    lead = m.group("lead").casefold()
    changed = lead in ("went", "gone", "going", "go", "turned", "became", "become")
    past = lead in ("i was", "we were", "was") or (
        lead == "been" and re.search(r"\bhad\s+(?:\w+\s+)?been\s*$", s.text[: m.start("lead") + 4], re.I) is not None
    )
    ctx = ctx_at(s, m.start("diet"), time="past" if changed or past else "present")
    if ctx is None or (ctx.person is not None and ctx.person.is_pet):
        return
    if past and not changed:
        return  # "Was vegetarian for 6 years before": what it was, not what it is
    if lead == "going" and ctx.time != "past":
        return  # "I'm going vegan next month": a plan
    diet = m.group("diet").casefold().replace("pescetarian", "pescatarian")
    yield make(ctx, s, "diet", diet, "diet", end=m.end(), change=changed)


def _avoid(s: Sentence, m: re.Match[str]) -> Iterator[Found]:
    verb = m.group("verb").casefold()
    rest = m.group("rest")
    ctx = ctx_at(s, m.start())
    if ctx is None:
        return
    if verb == "smoke":
        value = "smoke"
    elif verb == "drink":
        item = re.match(r"\s+(?:any\s+|much\s+)?(alcohol|booze|beer|wine|coffee|caffeine|soda)\b", rest, re.I)
        if item is None and rest.strip():
            return
        value = f"drink {item.group(1).casefold()}" if item else "drink alcohol"
    elif verb in ("eat", "touch"):
        item = re.match(r"\s+(?:any\s+|much\s+)?([\w-]+)", rest)
        if item is None or item.group(1).casefold() not in (
            MEAT_WORDS | FISH_WORDS | {"meat", "pork", "dairy", "gluten", "sugar", "fish", "eggs"}
        ):
            return
        value = f"eat {item.group(1).casefold()}"
    else:
        return
    yield make(
        replace(ctx, negated=False),
        s,
        "avoids",
        value,
        "avoids",
        end=m.end(),
        change="longer" in m.group("neg").casefold() or "anymore" in rest.casefold(),
    )


def _to_the_item(obj: str) -> str:
    """ "like 12 beers watchin the playoffs last" → "12 beers": a phrase read up to its last consumable, when a
    gerund or "while" follows it, without a hedge in front."""
    items = list(_ITEM_RE.finditer(obj))
    last = items[-1] if items else None
    if last is not None and re.match(
        r"\s+(?:\w+(?:ing|in['’]?)|while|during|at|on|last|yesterday)\b", obj[last.end() :]
    ):
        obj = obj[: last.end()]
    return re.sub(r"^(?:like|about|around|maybe|probably)\s+", "", obj, flags=re.IGNORECASE)


def _consumption(s: Sentence) -> Iterator[Found]:
    """What the speaker eats, drinks or smokes, said as a fact about themselves ("I ate way too much picanha", "I
    had the chicken biryani", "after dinner I allow myself one cigarette", "Friday wine o'clock with the girls is
    sacred")."""
    text = s.text
    for m in _CONSUME_RE.finditer(text, s.start, s.end):
        verb = m.group("verb").casefold()
        obj = read_phrase(
            text, m.end(), s.end, max_words=7, stops=frozenset({"and", "but", "so", "with", "because", "—"})
        )
        if obj is None or not _ITEM_RE.search(obj):
            continue
        obj = _to_the_item(obj)
        if verb.startswith("smok") and _food(obj):
            continue  # "smoking a brisket": cooking
        if re.search(
            r"\b(?:stop(?:ped)?|quit|gave\s+up|give\s+up|no\s+longer|not|never|don['’]?t|won['’]?t|can['’]?t)\s+$",
            text[max(s.start, m.start() - 20) : m.start()],
            re.I,
        ):
            continue  # "I stopped eating meat": the opposite of eating it
        if verb in ("love", "enjoy", "enjoyed") and not _ITEM_RE.match(obj.split()[0] if obj.split() else ""):
            continue
        past = verb.endswith(("ate", "had", "drank", "smoked", "ed", "sank", "back", "off"))
        ctx = ctx_at(s, m.start(), time="past" if past else "present")
        if ctx is None or ctx.negated or ctx.subject != s.speaker or ctx.planned:
            continue
        if verb == "only":
            continue
        yield make(ctx, s, "consumes", obj, "consumes", end=m.end() + len(obj))
    for m in _SACRED_RE.finditer(text, s.start, s.end):
        np = m.group("np").strip()
        if not _ITEM_RE.search(np) or re.search(r"\b(?:you|your)\b", np, re.I):
            continue
        np = re.sub(r"^(?:also|and|but|so|plus|now)\s+", "", np, flags=re.I)
        ctx = ctx_at(s, m.start("np"))
        if ctx is None or ctx.negated:
            continue
        yield make(replace(ctx, subject=s.speaker, person=None), s, "consumes", np, "consumes.ritual", end=m.end())
    for m in _ONLY_NOW_RE.finditer(text, s.start, s.end):
        ctx = ctx_at(s, m.start())
        if ctx is not None and not ctx.negated:
            yield make(ctx, s, "consumes", f"{m.group('item')} only now", "consumes.now", end=m.end(), change=True)


def _food(obj: str) -> bool:
    return any(w.casefold() in MEAT_WORDS | FISH_WORDS for w in re.findall(r"[\w-]+", obj))
