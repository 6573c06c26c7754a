"""What things and people do for the speaker: what calms or cheers them, what drives them on, who stands by them.

People say what they hold dear less often with "I like X" than by saying what X does to them: "Blue calms me",
"Horses always put a smile on my face", "Their inclusivity really spoke to me", "My kids motivate me", "The people
around me gave me renewed energy", "My family has always been there for me".  The shape is a noun phrase (a thing,
an activity, a gerund, the speaker's own people) followed by a verb of effect whose object is the speaker:

- **Comfort and joy** — calms, relaxes, soothes, comforts, refreshes, grounds, cheers me (up), brightens my day,
  brings me joy, puts a smile on my face, speaks to me, keeps me sane → ``likes`` the thing (present tense: "the walk
  calmed me down" is one walk, not a liking).
- **Drive** — motivates, inspires, encourages me, keeps me going, gives me hope / strength / purpose, fills me with
  hope → ``inspired_by`` the thing (past tense too: what inspired someone stays a source of inspiration).
- **Support** — has been there for me, has my back, is my rock → ``values`` the people named.

Nothing is read when the subject only points elsewhere ("it", "this", "they", "you", "your …"), is a clause about
the listener, is negated ("music doesn't calm me") or unreal ("maybe yoga would calm me").
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from engine.facts.catalog import Catalog
from engine.facts.rules.life.common import make, speaker_ctx, words_of
from engine.facts.rules.life.context import Time
from engine.facts.rules.life.views import view_end, view_value
from engine.facts.rules.life.words import COMMON_WORDS
from engine.facts.rules.model import Found, Sentence
from engine.facts.rules.text import clean_object, extract_object

_COMFORT_VERBS = (
    r"(?:calms?|relax(?:es)?|sooth(?:es?)?|comforts?|refresh(?:es)?|brightens?|grounds?|heals?|recharges?|"
    r"uplifts?|lifts?|energi[sz]es?|rejuvenates?|cheers?|centers?|centres?|de-?stresses?)"
)
_MINE = r"(?:me|us|my\s+(?:soul|mind|spirit|spirits|day|days|mood|heart|week)|our\s+(?:souls|spirits|days))"
_JOY = r"(?:joy|peace|happiness|comfort|calm|calmness|serenity|solace|peace\s+of\s+mind)"
_DRIVE = r"(?:hope|strength|energy|purpose|motivation|courage|drive|oomph|push|inspiration|confidence|determination)"
_AMOUNT = r"(?:(?:so\s+much|such|a\s+lot\s+of|lots\s+of|great|real|renewed|new|the|a|an|some|more)\s+)*"

#: The verb group of an effect on the speaker, after its subject; ``kind`` picks the predicate.
#: Adverbs and auxiliaries between a subject and its verb of effect, read backwards from the verb.
_ADVERBS_BEFORE_RE = re.compile(
    r"(?:\s+(?:really|always|truly|just|also|definitely|totally|honestly|genuinely|seriously|still|sure|often|usually|"
    r"instantly|somehow|never|not|has|have|had|does|do|did|n['’]t|doesn['’]t|don['’]t|didn['’]t|can|will|would|"
    r"could|might|may|won['’]t|can['’]t))+\s*$",
    re.IGNORECASE,
)
_EFFECT_RE = re.compile(
    # (the first letters of every branch, looked ahead first: the scan skips most positions at once)
    r"(?=[abcdefghiklmprsuwABCDEFGHIKLMPRSUW'’])\b(?:"
    # comfort and joy
    r"(?P<comfort>" + _COMFORT_VERBS + r"\s+" + _MINE + r"(?:\s+(?:up|down))?|"
    r"(?:brings?|brought|gives?|has\s+brought|have\s+brought)\s+(?:me|us)\s+" + _AMOUNT + _JOY + r"|"
    r"(?:brings?|has\s+brought|have\s+brought)\s+" + _AMOUNT + _JOY + r"\s+(?:to|into)\s+(?:my|our)\s+(?:life|lives)|"
    r"(?:fills?|filled)\s+(?:me|us)\s+with\s+" + _AMOUNT + r"(?:joy|peace|happiness|gratitude|calm)|"
    r"puts?\s+a\s+(?:big\s+|huge\s+)?smile\s+on\s+(?:my|our)\s+faces?|"
    r"makes?\s+my\s+day|"
    r"keeps?\s+(?:me|us)\s+(?:sane|grounded|calm|balanced|centered|centred|happy)|"
    r"(?:helps?|has\s+helped)\s+(?:me|us)\s+(?:to\s+)?(?:relax|unwind|de-?stress|calm\s+down|stay\s+calm|recharge|"
    r"switch\s+off|find\s+(?:peace|balance))|"
    r"(?:speaks?|spoke|has\s+spoken|resonates?|resonated)\s+(?:to|with)\s+(?:me|us))"
    r"|"
    # drive
    r"(?P<drive>(?:motivates?|motivated|inspires?|inspired|encourages?|encouraged|pushe[sd]|push|drives?|drove)"
    r"\s+(?:me|us)(?=\s+(?:to|forward|on|every|each)\b|\s*[,.;!]|\s*$|\s+(?:and|so|more)\b)|"
    r"(?:keeps?|kept)\s+(?:me|us)\s+(?:going|motivated|inspired|positive|focused|pushing|moving\s+forward)|"
    r"(?:helps?|has\s+helped)\s+(?:me|us)\s+(?:to\s+)?(?:stay|keep|remain)\s+(?:motivated|focused|inspired|positive|"
    r"going|on\s+track)|"
    r"(?:gives?|gave|has\s+given|have\s+given)\s+(?:me|us)\s+" + _AMOUNT + _DRIVE + r"|"
    r"(?:fills?|filled)\s+(?:me|us)\s+with\s+" + _AMOUNT + r"(?:hope|determination|energy|motivation|purpose)|"
    r"(?:made|has\s+made|makes?)\s+me\s+(?:who|what)\s+I\s+am)"
    r"|"
    # support
    r"(?P<support>(?:has|have|had|['’]s|['’]ve)\s+(?:always\s+|really\s+|truly\s+)?been\s+there\s+for\s+(?:me|us)|"
    r"(?:helped|has\s+helped|have\s+helped)\s+(?:me|us)\s+(?:out|through|get\s+through|cope|heal|pull\s+through)\b|"
    r"(?:has|have|had|['’]ve\s+got|got)\s+(?:always\s+)?(?:my|our)\s+backs?|"
    r"(?:is|are|was|were|['’]s|['’]re|has\s+been|have\s+been)\s+(?:always\s+|really\s+|truly\s+)?(?:my|our)\s+"
    r"(?:rock|rocks|anchor|support\s+system|biggest\s+(?:supporters?|fans?|cheerleaders?)|safe\s+place))"
    r")\b",
    re.IGNORECASE,
)
_EFFECT_LOW_RE = re.compile(_EFFECT_RE.pattern.replace(r"\s+I\s+am", r"\s+i\s+am"))
#: Words that make a sentence worth the regex at all: the verbs of comfort and drive and the people who stand by the
#: speaker; the common verbs ("brings", "gives", "keeps", "helps") only count with the speaker as their object.
_GATE = frozenset(
    """calm calms relax relaxes soothe soothes comfort comforts refresh refreshes brighten brightens ground grounds
    heal heals recharge recharges uplift uplifts lift lifts energize energizes energise energises rejuvenate
    rejuvenates cheer cheers center centers centre centres de-stress destress destresses de-stresses smile speaks
    speak spoke spoken resonates resonate resonated motivates motivate motivated inspires inspire inspired encourages
    encourage encouraged pushes push pushed drives drive drove rock rocks anchor supporters fans cheerleaders""".split()
)
#: Phrases that carry an effect without any of those words (matched on the lower-case sentence; plain literals so
#: the scan is cheap), and the words one of them needs.
_GATE_PHRASES_RE = re.compile(
    r"brings? (?:me|us)\b|brought (?:me|us)\b|gives? (?:me|us)\b|gave (?:me|us)\b|given (?:me|us)\b|"
    r"keeps? (?:me|us)\b|kept (?:me|us)\b|helps? (?:me|us)\b|helped (?:me|us)\b|fills? (?:me|us)\b|"
    r"filled (?:me|us)\b|puts? a |made me wh|makes me wh|been there for|my back|our back|my day|my life|our lives|"
    r"me out|me through|us through"
)
_PHRASE_WORDS = frozenset(
    """bring brings brought give gives gave given keep keeps kept help helps helped fill fills filled put puts made
    makes there back day life lives out through""".split()
)
#: First words of a subject that only point elsewhere or are about the listener.
_POINTING = frozenset(
    """it it's its this that that's these those they they're them he he's she she's you you're your yours u ur ya
    i i'm i've we we're what which who whom whose there here everything something anything nothing someone
    everyone anyone somebody everybody anybody one ones all both each either neither such so and but or if when
    because since while though although then than as just only even also really thanks thank please let let's
    yeah yes yep no not never maybe perhaps seeing knowing hearing""".split()
)
#: Words that cannot be inside such a subject: a pronoun, the listener, or a clause of its own.
_NOT_INSIDE = frozenset(
    """i i'm i've i'd i'll you you're your yours u ur ya it it's they they're he she him his her them this that these
    those""".split()
)
_LEADING_RE = re.compile(
    r"(?:(?:yeah|yes|yep|yup|and|but|so|plus|also|honestly|oh|well|wow|definitely|totally|absolutely|truly|"
    r"really|sure|true|agreed|exactly|now|lately|these\s+days|nowadays|somehow|ok|okay|haha|lol)\b[\s,!]*)+",
    re.IGNORECASE,
)
_POSSESSIVE_RE = re.compile(r"^(?:his|her|their)\s+", re.IGNORECASE)
#: A trailing phrase that only points back ("being a role model for them"): the rest names the thing.
_POINTING_TAIL_RE = re.compile(r"\s+(?:for|with|to|of|around)\s+(?:them|him|her|it|this|that)$", re.IGNORECASE)
_LIKE_THIS_RE = re.compile(r"\s+like\s+(?:this|that|these|those)$", re.IGNORECASE)
_ARTICLE_RE = re.compile(r"^(?:(?:all\s+)?the|an?|some)\s+", re.IGNORECASE)
_WORD_RE = re.compile(r"[\w'’-]+")
_DANGLING = frozenset("and or but to of with for in on at by from as".split())
_OURS_RE = re.compile(r"\b(?:us|our)\b", re.IGNORECASE)
_PAST_RE = re.compile(
    r"(?:gave|spoke|resonated|motivated|inspired|encouraged|pushed|drove|kept|filled|had|helped|made)\b"
)
_MAX_SUBJECT_WORDS = 12


#: "Being a role model is something I enjoy", "Baking is one of the things I love": what the speaker holds dear,
#: said of its subject.
_SOMETHING_RE = re.compile(
    r"(?P<adv>(?:(?:really|definitely|truly|just|always|also|not|never)\s+)*)"
    r"(?:is|are|['’]s|has\s+(?:always\s+)?been|have\s+(?:always\s+)?been)\s+"
    r"(?:(?:really|definitely|truly|just|always|also|not|never)\s+)*"
    r"(?:something|one\s+(?:thing|of\s+the\s+things))\s+(?:that\s+)?(?:I|we)\s+"
    r"(?:(?:really|truly|genuinely|absolutely|always|also|do)\s+)*"
    r"(?P<how>enjoy|love|like|cherish|treasure|value|look\s+forward\s+to|care\s+(?:deeply\s+)?about|"
    r"(?:am|['’]m)\s+(?:really\s+|so\s+)?passionate\s+about)\b",
    re.IGNORECASE,
)
#: "Those moments make me love basketball so much": what the speaker loves, whatever made them love it.
_MAKES_ME_RE = re.compile(
    r"\b(?:makes?|made|has\s+made)\s+(?:me|us)\s+(?:(?:really|even|so|just|truly|only)\s+)?"
    r"(?P<how>love|like|appreciate|enjoy|value|cherish)\s+",
    re.IGNORECASE,
)
#: "There's a quote by J.K. Rowling that I really like: …": what the speaker likes, named before a relative clause
#: that ends with the verb.
_THING_I_LIKE_RE = re.compile(
    r"\b(?:a|an|the|some)\s+(?P<np>(?-i:[\w'’.-]+)(?:\s+[\w'’.-]+){0,5}?)\s+(?:that\s+|which\s+)?(?:I|we)\s+"
    r"(?:(?:really|absolutely|truly|just|also|still|totally)\s+)*(?P<how>like|love|enjoy|adore|cherish|treasure)"
    r"(?=\s*(?:[.!:;,]|$|\s+(?:a\s+lot|so\s+much|the\s+most|most|too|as\s+well)\b))",
    re.IGNORECASE,
)
#: "It's a yoga studio I go to often": a place the speaker goes to regularly.
_PLACE_I_GO_RE = re.compile(
    r"\b(?:a|an|the)\s+(?P<np>[\w'’-]+(?:\s+[\w'’-]+){0,3}?)\s+(?:that\s+)?(?:I|we)\s+(?:(?:usually|always|still)\s+)?"
    r"(?P<verb>go\s+to|visit|attend)\s+(?P<often>often|regularly|a\s+lot|all\s+the\s+time|every\s+(?:day|week|weekend|"
    r"morning|evening|month|\w+day)|(?:once|twice|\w+\s+times)\s+a\s+(?:week|month))\b",
    re.IGNORECASE,
)
#: "I'll never forget the day my youngest took her first steps": a memory the speaker holds dear.
_NEVER_FORGET_RE = re.compile(r"\b(?:I|we)(?:['’]ll|\s+will|\s+can|\s+could)?\s+never\s+forget\s+", re.IGNORECASE)
#: "My art is about expressing my trans experience", "my new novel is about grief": what the speaker makes, and
#: what it is about.
_ABOUT_RE = re.compile(
    r"\bmy\s+(?:own\s+|new\s+|latest\s+)?(?P<what>(?P<form>art|artwork|music|writing|poetry|paintings|photography|"
    r"songwriting|dancing|choreography)|book|novel|screenplay|script|album|film|documentary|blog|podcast|play|poem|"
    r"song|series)\s+(?:is|are|was)\s+(?:all\s+|mostly\s+|really\s+)?about\s+",
    re.IGNORECASE,
)
#: "Japan is on my bucket list", "skydiving is definitely on my list": what the speaker wants to do or see.
_BUCKET_LIST_RE = re.compile(
    r"(?:is|are|['’]s)\s+(?:(?:definitely|totally|high|still|also|now|firmly|officially)\s+)*(?:on|at\s+the\s+top\s+of)\s+"
    r"my\s+(?:bucket|wish|travel|to-do|must-see|must-do)\s+list\b",
    re.IGNORECASE,
)
_HOW_PREDICATE = {
    "enjoy": "likes",
    "like": "likes",
    "look": "likes",
    "love": "loves",
    "cherish": "values",
    "treasure": "values",
    "value": "values",
    "appreciate": "values",
    "care": "values",
    "adore": "loves",
}


def effects(s: Sentence, catalog: Catalog) -> Iterator[Found]:  # noqa: C901 — a cascade of rules read top to bottom; not yet split
    """What the sentence says things and people do for the speaker."""
    words = words_of(s.low)
    if ("something" in words or "things" in words) and s.has(" i ", " we "):
        yield from _something_i(s)
    if s.has("make me ", "makes me ", "made me ", "make us ", "makes us ", "made us "):
        yield from _makes_me(s)
    if not words.isdisjoint(_LIKE_WORDS) and _LIKED_LAST_RE.search(s.low) is not None:
        yield from _thing_i_like(s)
    if not words.isdisjoint(_GO_WORDS) and _OFTEN_AFTER_RE.search(s.low) is not None:
        yield from _place_i_go(s)
    if "forget" in words:
        yield from _never_forget(s)
    if "list" in words and "my" in words:
        yield from _bucket_list(s)
    if "about" in words and "my" in words and s.has(" is about", " are about", " was about"):
        yield from _my_work_about(s)
    if words.isdisjoint(_GATE) and (words.isdisjoint(_PHRASE_WORDS) or _GATE_PHRASES_RE.search(s.low) is None):
        return
    if not s.has(" me", " us", "my ", "our "):
        return
    # the lower-case copy is read without IGNORECASE (much cheaper) when its offsets are the text's
    same = len(s.low) == s.end - s.start
    offset = s.start if same else 0
    for m in _EFFECT_LOW_RE.finditer(s.low) if same else _EFFECT_RE.finditer(s.text, s.start, s.end):
        kind = "comfort" if m.group("comfort") else "drive" if m.group("drive") else "support"
        m_start, m_end = m.start() + offset, m.end() + offset
        verb_at, adverbs = _adverbs_before(s, m_start)
        if _UNASSERTED_RE.search(adverbs):
            continue  # "music doesn't calm me", "a walk would calm me": nothing is asserted
        verb = m.group(kind).casefold()
        if kind == "comfort" and re.match(r"(?:brought|filled)\b", verb) and not re.search(r"\bha(?:s|ve)\b", adverbs):
            continue  # "the walk brought me peace": one occasion, not what the speaker likes
        subject = _subject(s, verb_at)
        if subject is None:
            continue
        value, at = subject
        ctx = speaker_ctx(s, at)
        if ctx is None or ctx.negated:
            continue
        time: Time = "past" if _PAST_RE.match(verb) else "present"
        if _OURS_RE.search(verb):
            # "animals bring us peace", "our loved ones give us strength": a view of how things are for everyone
            end = view_end(s, m_end)
            view = view_value(s, at, end)
            if view is not None and time == "present":
                yield make(ctx, s, "holds_view", view, f"effect.{kind}.view", end=end, negated=False)
            continue
        predicate = {"comfort": "likes", "drive": "inspired_by", "support": "values"}[kind]
        yield make(ctx, s, predicate, value, f"effect.{kind}", end=m_end, negated=False, time=time)


_UNASSERTED_RE = re.compile(r"\b(?:never|not|will|would|could|might|may|can)\b|n['’]t\b", re.IGNORECASE)


def _adverbs_before(s: Sentence, at: int) -> tuple[int, str]:
    """Where the verb group ending at ``at`` starts (before its adverbs and auxiliaries), and those words."""
    m = _ADVERBS_BEFORE_RE.search(s.text, max(s.start, at - 60), at)
    if m is None:
        return at, ""
    return m.start(), m.group().casefold()


def _something_i(s: Sentence) -> Iterator[Found]:
    for m in _SOMETHING_RE.finditer(s.text, s.start, s.end):
        if re.search(r"\b(?:not|never)\b", m.group(0), re.IGNORECASE):
            continue
        subject = _subject(s, m.start())
        if subject is None:
            continue
        value, at = subject
        ctx = speaker_ctx(s, at)
        if ctx is None or ctx.negated:
            continue
        how = m.group("how").casefold()
        predicate = "passionate_about" if "passionate" in how else _HOW_PREDICATE[how.split()[0]]
        yield make(ctx, s, predicate, value, "effect.something-i", end=m.end(), negated=False)


_LIKE_WORDS = frozenset("like love enjoy adore cherish treasure".split())
#: Cheap pre-checks: a verb of liking that ends its clause ("… that I really like:"), a place gone to often.
_LIKED_LAST_RE = re.compile(
    r"(?:like|love|enjoy|adore|cherish|treasure)(?=\s*(?:[.!:;,]|$)|\s+(?:a\s+lot|so\s+much|the\s+most|most|too|as\s+well)\b)"
)
_OFTEN_AFTER_RE = re.compile(
    r"(?:go\s+to|visit|attend)\s+(?:often|regularly|a\s+lot|all\s+the\s+time|every|once|twice|\w+\s+times)\b"
)
_NOT_LIKED = frozenset("one ones thing things way lot bit part stuff idea".split())


def _thing_i_like(s: Sentence) -> Iterator[Found]:
    for m in _THING_I_LIKE_RE.finditer(s.text, s.start, s.end):
        np = clean_object(s.text[m.start() : m.end("np")], "np")
        if np is None:
            continue
        words = np.casefold().split()
        if len(words) < 2 or words[-1] in _NOT_LIKED or _POINTING & set(words) or any(w in _NOT_INSIDE for w in words):
            continue  # "the one I like", "a book I love": nothing named well enough
        ctx = speaker_ctx(s, m.start())
        if ctx is None or ctx.negated:
            continue
        predicate = _HOW_PREDICATE[m.group("how").casefold()]
        yield make(ctx, s, predicate, np, "effect.thing-i-like", end=m.end(), negated=False)


_GO_WORDS = frozenset("go visit attend".split())


def _place_i_go(s: Sentence) -> Iterator[Found]:
    for m in _PLACE_I_GO_RE.finditer(s.text, s.start, s.end):
        np = clean_object(m.group("np"), "np")
        if np is None or _POINTING & set(np.casefold().split()):
            continue
        ctx = speaker_ctx(s, m.start())
        if ctx is None or ctx.negated:
            continue
        verb = re.sub(r"\s+", " ", m.group("verb").casefold())
        place = s.text[m.start() : m.end("np")] if np.casefold() in m.group("np").casefold() else np
        yield make(ctx, s, "does_regularly", f"{verb} {place}", "effect.place-i-go", end=m.end(), negated=False)


def _bucket_list(s: Sentence) -> Iterator[Found]:
    for m in _BUCKET_LIST_RE.finditer(s.text, s.start, s.end):
        subject = _subject(s, m.start())
        if subject is None:
            continue
        value, at = subject
        ctx = speaker_ctx(s, at)
        if ctx is None or ctx.negated:
            continue
        names = [w for w in value.split() if w.casefold() not in ("of", "the", "de")]
        first = names[0].casefold() if names else ""
        place = all(w[:1].isupper() for w in names) and not first.endswith("ing") and first not in COMMON_WORDS
        predicate = "plans_to_visit" if place else "wants"
        yield make(ctx, s, predicate, value, "effect.bucket-list", end=m.end(), negated=False)


def _never_forget(s: Sentence) -> Iterator[Found]:
    for m in _NEVER_FORGET_RE.finditer(s.text, s.start, s.end):
        value = extract_object(s.text, m.end(), s.end, "phrase")
        ctx = speaker_ctx(s, m.start())
        if value is None or ctx is None or _POINTING & {value.split()[0].casefold()}:
            continue
        yield make(ctx, s, "values", value, "effect.never-forget", end=m.end() + len(value), negated=False)


def _my_work_about(s: Sentence) -> Iterator[Found]:
    for m in _ABOUT_RE.finditer(s.text, s.start, s.end):
        topic = extract_object(s.text, m.end(), s.end, "phrase")
        ctx = speaker_ctx(s, m.start())
        if topic is None or ctx is None or ctx.negated:
            continue
        predicate = "creates_art" if m.group("form") else "created"
        value = f"{m.group('what')} about {topic}"
        yield make(ctx, s, predicate, value, "effect.my-work-about", end=m.end() + len(topic), negated=False)


def _makes_me(s: Sentence) -> Iterator[Found]:
    for m in _MAKES_ME_RE.finditer(s.text, s.start, s.end):
        if _UNASSERTED_RE.search(_adverbs_before(s, m.start())[1]):
            continue
        value = extract_object(s.text, m.end(), s.end, "np")
        if value is None:
            continue
        ctx = speaker_ctx(s, m.start())
        if ctx is None or ctx.negated:
            continue
        predicate = _HOW_PREDICATE[m.group("how").casefold()]
        yield make(ctx, s, predicate, value, "effect.makes-me", end=m.end() + len(value), negated=False)


_LIST_HEAD_RE = re.compile(r"(?:my|our)\s+[\w'’-]+(?:\s+[\w'’-]+)?", re.IGNORECASE)
#: Where the subject of an effect starts: after a clause break, but not at "and" ("their patience and support").
_SUBJECT_BREAK_RE = re.compile(
    r"[;:!?()\[\]]|\.(?=\s|$)|\s[-–—]+\s|[-–—]{2}|,|"
    r"\s(?:but|so|because|bc|cause|while|although|though|whereas|then|plus|which|who|when|since|after|before|"
    r"until|till|if|unless|that)\s",
    re.IGNORECASE,
)
#: A clause inside the subject: it is not one noun phrase ("knowing there's people who … means a lot and helps").
_CLAUSE_INSIDE = frozenset(
    """is are was were am be been has have had 's ’s means meant help helps helped make makes made keep keeps
    give gives bring brings seem seems seemed does do did can could will would should remind reminds feel
    feels""".split()
)


def _subject(s: Sentence, verb_at: int) -> tuple[str, int] | None:
    """The noun phrase before the verb group, as said, with where it starts; None when it names nothing."""
    start = s.start
    breaks = list(_SUBJECT_BREAK_RE.finditer(s.text, s.start, verb_at))
    if breaks:
        start = breaks[-1].end()
        # "My friends, family and mentors are my rocks": a list of the speaker's people runs across its commas
        while breaks and breaks[-1].group() == ",":
            before = breaks[-2].end() if len(breaks) > 1 else s.start
            if not _LIST_HEAD_RE.fullmatch(s.text[before : breaks[-1].start()].strip()):
                break
            start = before
            breaks.pop()
    while start < verb_at and s.text[start].isspace():
        start += 1
    lead = _LEADING_RE.match(s.text, start, verb_at)
    if lead is not None:
        start = lead.end()
    said = s.text[start:verb_at].strip()
    gift = _YOUR_GIFT_RE.fullmatch(said)
    if gift is not None:
        return gift.group("what"), start  # "your encouragement motivates me": what the speaker draws on
    raw = _POINTING_TAIL_RE.sub("", _LIKE_THIS_RE.sub("", said))
    if not raw or re.search(r"[\"“”()]", raw):
        return None
    words = _WORD_RE.findall(raw.casefold())
    if not words or len(words) > _MAX_SUBJECT_WORDS or words[0] in _POINTING or words[-1] in _DANGLING:
        return None
    if any(w in _NOT_INSIDE or w in _CLAUSE_INSIDE for w in words) or "'s" in raw or "’s" in raw:
        return None
    if _before_is_verb(s, start):
        return None  # "I find music calms me" reads as its own clause only when nothing governs it
    value = _ARTICLE_RE.sub("", _POSSESSIVE_RE.sub("", raw)).strip(" ,'’\"")
    kept = _WORD_RE.findall(value.casefold())
    if not any(len(w) > 2 and w.isalpha() for w in kept):
        return None
    if len(kept) == 1 and kept[0].endswith("ing") and raw != said:
        return None  # "being with them" names nothing once its pointer is gone
    return value, start


#: What the listener gives the speaker ("your encouragement", "your words of support"): the speaker's own source of
#: drive or comfort, as "your support means a lot to me" is a value.  Not what the listener has or is ("your success").
_YOUR_GIFT_RE = re.compile(
    r"your\s+(?:(?:kind|sweet|constant|endless|continued|unwavering)\s+)?(?P<what>encouragement|support|"
    r"words\s+of\s+(?:encouragement|support|wisdom)|kind\s+words|kindness|faith\s+in\s+me|belief\s+in\s+me|"
    r"advice|feedback|friendship|positivity|messages|encouraging\s+words)",
    re.IGNORECASE,
)
_GOVERNING_RE = re.compile(
    r"\b(?:think|thought|find|found|guess|hope|wish|feel|felt|know|knew|say|said|says|if|whether|that)\s*$",
    re.IGNORECASE,
)


def _before_is_verb(s: Sentence, start: int) -> bool:
    """True when the subject follows a verb of thinking or saying ("I think music calms me", "she says yoga …")."""
    return _GOVERNING_RE.search(s.text, max(s.start, start - 12), start) is not None
