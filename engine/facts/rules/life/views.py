"""Views and what someone holds dear: the opinions people state about how things are, and what they say they
appreciate.

Most of what people say in a long conversation is not a fact about a place, a job or a person but a view: "little
acts of kindness can have a big effect", "it's important to stay positive", "your support means a lot".  They are
worth keeping — they are what a friend remembers about someone, and what "what does Maria think about …" asks —
but only when they are the speaker's own, general and stated, never a reaction to the other person ("it's amazing
how far you've come") or a question.  Four English shapes mark them, and they are the shapes linguists use for
generic statements, not lists of sentences:

- **Extraposed evaluation** — "It's important/rewarding/worth it to … / how … / when …": an evaluative adjective
  about a clause.  "It's important *to me* to …" is the same shape.
- **A generic subject** — a bare plural or mass noun, or a gerund, opening a present-tense clause: "Little acts
  of kindness can have a big effect", "Dance has the power to bring us together", "Being around people who share
  the same love creates a bond".  A determiner ("the weather", "this cake") makes it about a particular thing,
  not a view; a name makes it about a person, which the generic verb rules read.
- **Nothing like it** — "There's nothing like the energy in a stadium": the best of its kind, to the speaker.
- **Appreciation** — "I (really) appreciate X", "X means a lot/so much/the world (to me)", "X is greatly
  appreciated": the speaker values X.

Views are ``holds_view`` (multi-valued, low importance, moderate decay); appreciation is ``values``.  The value is
the clause as said (its first letter lower-cased), so the statement reads as it was said.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from engine.facts.catalog import Catalog
from engine.facts.rules.lexicon import ING_ADJECTIVES
from engine.facts.rules.life.common import make, speaker_ctx, words_of
from engine.facts.rules.life.words import COMMON_WORDS
from engine.facts.rules.model import Found, Sentence

#: Evaluative adjectives: what makes "it's X to …" or "Y is X" a view rather than a description.
_EVALUATIVE = frozenset(
    """important crucial essential vital key amazing great rewarding inspiring worth worthwhile special awesome
    incredible powerful satisfying refreshing calming comforting tough hard difficult fun cool nice good best
    better beautiful wonderful valuable helpful healing peaceful uplifting motivating energizing fulfilling
    meaningful necessary normal okay ok easy crazy funny wild sad scary exciting interesting fascinating
    therapeutic relaxing freeing empowering humbling cathartic priceless magical precious underrated overrated
    overwhelming stressful draining exhausting pointless useless harmful dangerous healthy unhealthy heartwarming
    challenging tricky beneficial invaluable relief blessing privilege gift joy pleasure honor honour comfort
    expressive graceful elegant soothing gorgeous stunning""".split()
)
#: Judgements that state a view about a kind of thing ("domestic abuse is horrible") but, after "it's", mostly
#: react to one particular event ("it's heartbreaking that he's gone").
_GENERIC_EVALUATIVE = _EVALUATIVE | frozenset(
    """horrible terrible awful heartbreaking devastating unacceptable unfair tragic""".split()
)
#: Words that open a clause but never a generic subject: determiners, pronouns, fillers, time words, greetings.
_NOT_GENERIC = frozenset(
    """the a an this that these those my your his her our their its it it's i i'm i've you you're he she they we
    there here what who which where when why how everything something someone everyone anything anyone nothing
    nobody one thanks thank sounds sound hey hi hello wow yeah yes yep no oh ah so but and or then now today
    tonight tomorrow yesterday week weekend month year morning night evening glad sorry congrats
    congratulations please let lets let's looks look seems seem both all some any each every many much more most
    few lot lots other another such same own well also just really still even only yay haha lol omg ok okay
    sure right great good nice cool awesome amazing love hope guess wish maybe perhaps keep stay take make have
    don't do does did can could would should will must time gonna gotta wanna need needs""".split()
)
#: Verbs (and verb groups) after a generic subject that state a view about it.
_GENERIC_VERB = (
    r"(?:(?:['’]s|has|have)\s+(?:really\s+|truly\s+|always\s+)?(?:allowed|helped|taught|shown|given|brought|made|"
    r"changed)|"
    r"is|are|['’]s|['’]re|can(?:\s+(?:really|truly|definitely|also|sometimes|all))?|could|"
    r"(?:really\s+|truly\s+|always\s+|often\s+|sometimes\s+)?"
    r"(?:makes?|helps?|gives?|brings?|keeps?|reminds?|teaches?|shows?|creates?|matters?|means?|changes?|"
    r"(?:does|do)\s+have|ha(?:s|ve)\s+(?:a|the)\s+(?:way|power)))"
)
_WORD = r"[A-Za-z][a-z'’-]*"
_EXTRAPOSED_RE = re.compile(
    r"(?P<it>it(?:\s+is|['’]s|\s+was|['’]s\s+been|\s+has\s+been|\s+can\s+be|\s+must\s+be|\s+feels|\s+felt))\s+"
    r"(?:(?:so|really|truly|just|super|pretty|very|always|definitely|incredibly|totally|quite|such\s+a|a)\s+)*"
    r"(?P<adj>[a-z]+)(?P<noun>\s+(?:feeling|thing|experience))?"
    r"(?P<tome>\s+(?:to|for)\s+me)?\s*,?\s+"
    r"(?P<what>(?:to|how|when|that|seeing|being|having|knowing|getting|finding|watching|doing|to\s+see|"
    r"(?P<gerund>[a-z]+ing)|(?<=important\s)(?:we|people|everyone|everybody))\b)",
    re.IGNORECASE,
)
#: "Appreciate our friendship!", "Really appreciate the support of those close to me": a dropped "I" — but not a
#: thanks to the listener ("Appreciate your help", "Appreciate the offer", "appreciate it").
_APPRECIATE_DROPPED_RE = re.compile(
    r"(?:(?:really|truly|so|just|also|genuinely|greatly|always)\s+)*appreciate\s+"
    r"(?=(?:our|my)\s|the\s+[a-z]+(?:\s+and\s+[a-z]+)?\s+of\s+(?!(?:you|your|yours)\b))(?P<obj>[^.!?;]+)",
    re.IGNORECASE,
)
_APPRECIATE_RE = re.compile(
    r"\b(?:i|we)\s+(?:(?:really|truly|so|just|also|genuinely|greatly|do|deeply|always)\s+)*"
    r"(?:appreciate|treasure|cherish)\s+(?P<obj>[^.!?;]+)",
    re.IGNORECASE,
)
_MEANS_RE = re.compile(
    r"(?P<np>(?:your|our|their|his|her|the|all\s+the|this)\s+[a-z][a-z'’-]*(?:\s+[a-z][a-z'’-]*){0,4}?)\s+"
    r"(?:really\s+|truly\s+|just\s+|always\s+)?(?:means?|meant)\s+(?:(?:so|such)\s+)?"
    r"(?:a\s+lot|so\s+much|the\s+world|everything|a\s+great\s+deal|a\s+ton|loads)\b|"
    r"(?P<np2>(?:your|our|their|his|her|the|all\s+the)\s+[a-z][a-z'’-]*(?:\s+[a-z][a-z'’-]*){0,4}?)\s+"
    r"(?:is|are|was)\s+(?:(?:greatly|really|much|truly|so|very\s+much)\s+)*appreciated\b",
    re.IGNORECASE,
)
#: Where a view's clause ends: sentence punctuation, a dash aside, a semicolon or a turn to the listener.
_VIEW_END_RE = re.compile(r"[.!?;:()\[\]]|\s[-–—]+\s|--|,\s*(?:but|so|and\s+i|i\b)", re.IGNORECASE)
_TAG_TAIL_RE = re.compile(r",?\s+(?:huh|right|eh|yeah|no|don['’]t\s+you\s+think|isn['’]t\s+it)\W*$", re.IGNORECASE)
_SECOND_PERSON_RE = re.compile(r"\b(?:you|your|you['’]re|you['’]ve|you['’]ll|ya|u|ur|yours)\b", re.IGNORECASE)
_POSSESSIVE_RE = re.compile(r"^(?:your|our|their|his|her|the|all\s+the|this|that|my)\s+", re.IGNORECASE)
_NOUN_SUFFIXES = ("ness", "tion", "sion", "ment", "ity", "ing", "ship", "ance", "ence", "ism", "hood", "dom")
_GATE = _GENERIC_EVALUATIVE | frozenset(
    """can could make makes help helps give gives bring brings keep keeps remind reminds teach teaches show shows
        create creates matter matters mean means appreciate appreciated treasure cherish power way nothing allowed
        helped taught shown given brought changed difference""".split()
)
_MAX_WORDS = 24
_POINTERS = frozenset("i you it them this that these those him her here there one".split())
_NOTHING_LIKE_RE = re.compile(
    r"\bthere(?:['’]s|\s+is)\s+(?:just\s+|really\s+|honestly\s+)?nothing\s+(?:quite\s+)?(?:like|better\s+than|"
    r"more\s+\w+\s+than)\s+\S",
    re.IGNORECASE,
)
#: What may come right before a generic subject inside a sentence: a strong break or a conjunction.
#: After a generic subject and "is": how or why things happen for everyone ("pushing boundaries is how we grow").
_HOW_WE_RE = re.compile(r"(?:(?:exactly|just|really)\s+)?(?:how|why)\s+(?:we|people|everyone|you|one|life)\b")
_OPENS_CLAUSE_RE = re.compile(r"(?:[;:]|\s[-–—]+|\b(?:but|because|so|and|that|plus))\s*$", re.IGNORECASE)


def views(s: Sentence, catalog: Catalog) -> Iterator[Found]:
    """The speaker's stated views and what they say they appreciate, in one sentence."""
    words = words_of(s.low)
    if words.isdisjoint(_GATE) and not (
        ("how" in words or "why" in words) and s.has(" is how", " is why", "s how", "s why")
    ):
        return
    taken: list[tuple[int, int]] = []
    for found in (*_appreciated(s, words), *_extraposed(s), *_made_a_difference(s), *_nothing_like(s), *_generic(s)):
        span = found.span or (0, 0)
        if any(a < span[1] and span[0] < b for a, b in taken):
            continue
        taken.append(span)
        yield found


def view_end(s: Sentence, pos: int) -> int:
    """Where the view starting at ``pos`` ends: at the first sentence break, bracket, dash or clause such as
    ", but", else at the sentence's end."""
    m = _VIEW_END_RE.search(s.text, pos, s.end)
    return m.start() if m else s.end


def view_value(s: Sentence, start: int, end: int) -> str | None:
    """The clause as said, when it is a view worth keeping: general (no "you"), short, and saying something."""
    value = s.text[start:end].strip(" ,'’\"")
    value = re.sub(r",\s*(?-i:[A-Z][a-z]+)$", "", value)  # "…, Jon": the listener's name is not part of the view
    value = _TAG_TAIL_RE.sub("", value)  # "…, huh": a tag asks for agreement, it is not part of the view
    n = len(value.split())
    if n < 4 or n > _MAX_WORDS or _SECOND_PERSON_RE.search(value):
        return None
    if value[:1].isupper() and value[1:2].islower():
        value = value[0].lower() + value[1:]  # "Little acts of …" reads "User thinks little acts of …"
    return value


def _extraposed(s: Sentence) -> Iterator[Found]:
    if not (s.has("it") and words_of(s.low) & _EVALUATIVE):
        return
    for pos in s.starts:
        m = _EXTRAPOSED_RE.match(s.text, _after_fillers(s, pos), s.end)
        if m is None or m.group("adj").casefold() not in _EVALUATIVE:
            continue
        if m.group("noun") and not re.search(r"\ba\s", m.group(0)[: m.start("adj") - m.start()], re.IGNORECASE):
            continue  # "it's great experience …": only "a great feeling to …" names the feeling
        if m.group("gerund") and not _gerund_view(s, m):
            continue
        ctx = speaker_ctx(s, m.start())
        if ctx is None or ctx.negated or _negated_at(s.text, m.start(), m.start("adj")):
            continue
        end = view_end(s, m.start("what"))
        value = view_value(s, m.start(), end)
        if value is not None:
            rule = "view.important-to-me" if m.group("tome") else "view.evaluation"
            yield make(ctx, s, "holds_view", value, rule, end=end, negated=False)


#: "-ing" words after "it's <adjective>" that are no gerund of a clause about doing something.
_NOT_GERUNDS = ING_ADJECTIVES | frozenset(
    """thing nothing something everything anything morning evening wedding building meeting feeling going chatting
    talking catching hearing reading""".split()
)


def _gerund_view(s: Sentence, m: re.Match[str]) -> bool:
    """ "It's so peaceful waking up to birdsong": a view of what doing something is like — said in the present (not
    one afternoon: "it was great picking toppings"), with no article before the adjective ("a tough learning
    experience" is a noun phrase), and not the chat itself ("it was great chatting")."""
    gerund = m.group("gerund").casefold()
    if gerund in _NOT_GERUNDS or gerund in _EVALUATIVE:
        return False
    head = m.group(0)[: m.start("adj") - m.start()].casefold()
    if re.search(r"\b(?:was|must|a)\b", head):
        return False
    return len(re.findall(r"[a-z]+", s.text[m.end("gerund") : view_end(s, m.end("gerund"))])) >= 2


_DIFFERENCE_RE = re.compile(
    r"\bit(?:['’]s|\s+has|\s+really|\s+can|\s+does)?\s+(?:really\s+|truly\s+)?(?:made|makes?|make)\s+"
    r"(?:a|such\s+a|all\s+the)\s+(?:(?:huge|big|real|great|massive|world\s+of)\s+)?difference\s+"
    r"(?P<what>to\s+\w|having|being|knowing|seeing|finding|when)",
    re.IGNORECASE,
)


def _made_a_difference(s: Sentence) -> Iterator[Found]:
    """ "It's made a huge difference to have people who get what I'm going through": what helps, as a view."""
    if "difference" not in s.low:
        return
    for m in _DIFFERENCE_RE.finditer(s.text, s.start, s.end):
        ctx = speaker_ctx(s, m.start())
        if ctx is None or ctx.negated or _negated_at(s.text, m.start(), m.start("what")):
            continue
        end = view_end(s, m.start("what"))
        value = view_value(s, m.start(), end)
        if value is not None:
            yield make(ctx, s, "holds_view", value, "view.difference", end=end, negated=False)


def _nothing_like(s: Sentence) -> Iterator[Found]:
    """ "There's nothing like the energy in a stadium": the speaker's view that it is the best of its kind."""
    if "nothing" not in s.low:
        return
    for m in _NOTHING_LIKE_RE.finditer(s.text, s.start, s.end):
        ctx = speaker_ctx(s, m.start())
        if ctx is None or ctx.negated:
            continue
        end = view_end(s, m.end())
        value = view_value(s, m.start(), end)
        if value is not None:
            yield make(ctx, s, "holds_view", value, "view.nothing-like", end=end, negated=False)


def _generic(s: Sentence) -> Iterator[Found]:
    stated = (
        tuple(m.end() for m in _STATED_RE.finditer(s.text, s.start, s.end))
        if s.has("seem", "think", "feel", "believe")
        else ()
    )
    for pos in (*s.starts, *stated):
        if pos > s.start and pos not in stated and not _OPENS_CLAUSE_RE.search(s.text, max(s.start, pos - 12), pos):
            continue  # after a bare comma: more likely the next item of a list ("growth, improvement, and …")
        start = _after_fillers(s, pos)
        first = _FIRST_WORD_RE.match(s.text, start, s.end)
        if first is None or re.split(r"['’]", first.group().casefold())[0] in _NOT_GENERIC:
            continue  # "I …", "you …", "it's …", "the …": no generic subject here
        for at in _verb_positions(s, start):
            m = _VERB_AT_RE.match(s.text, at, s.end)
            if m is None or not _generic_subject(s.text[start:at].strip(), at_sentence_start=start == s.start):
                continue
            verb = m.group("verb").casefold()
            end = view_end(s, m.start("rest"))
            rest = s.text[m.start("rest") : end].casefold()
            copula = verb in ("is", "are", "'s", "’s", "'re", "’re")
            if copula and not (set(re.findall(r"[a-z]+", rest)) & _GENERIC_EVALUATIVE) and not _HOW_WE_RE.match(rest):
                continue  # "Dogs are mammals", "Work is busy": a description, not a view
            if re.match(r"(?:not|n['’]t|never)\b", rest):
                break
            ctx = speaker_ctx(s, start)
            value = view_value(s, start, end) if ctx is not None else None
            if ctx is not None and value is not None:
                yield make(ctx, s, "holds_view", value, "view.generic", end=end, negated=False)
            break


#: What introduces a view as the speaker's: "it seems like nature has a way of …", "I think having someone … is".
_STATED_RE = re.compile(
    r"\b(?:it\s+)?(?:seems|seemed)\s+(?:like|that)\s+|\bI\s+(?:really\s+|truly\s+|honestly\s+)?"
    r"(?:think|believe|feel\s+like)\s+(?:that\s+)?(?:just\s+)?",
    re.IGNORECASE,
)
_VERB_AT_RE = re.compile(rf"\s*(?P<verb>{_GENERIC_VERB})\b\s+(?P<rest>\S)")
_MAX_SUBJECT_TOKENS = 12


#: Where a verb group of _GENERIC_VERB may start after a subject: before one of its first words, or at the "'s" of
#: "Nature's" (which may be "is").  Only there is a subject worth trying.
_VERB_START_RE = re.compile(
    r"[ \t]+(?=(?:is|are|has|have|can|could|really|truly|always|often|sometimes|makes?|helps?|gives?|brings?|keeps?|"
    r"reminds?|teach(?:es)?|shows?|creates?|matters?|means?|changes?|does|do)\b)|(?<=[a-z])['’](?=(?:s|re)\b)",
    re.IGNORECASE,
)
_FIRST_WORD_RE = re.compile(r"[A-Za-z][\w'’-]*")
#: A subject never runs past punctuation or a dash.
_SUBJECT_STOP_RE = re.compile(r"[^\w\s'’-]|\s[-–—]")


def _verb_positions(s: Sentence, start: int) -> Iterator[int]:
    """Where a generic subject of one to twelve words, starting at ``start``, may end: before a verb of
    _GENERIC_VERB, up to the first punctuation."""
    stop = _SUBJECT_STOP_RE.search(s.text, start, s.end)
    limit = stop.start() if stop else s.end
    for m in _VERB_START_RE.finditer(s.text, start, limit):
        if m.start() > start:
            if s.text.count(" ", start, m.start()) >= _MAX_SUBJECT_TOKENS:
                return
            yield m.start()


def _generic_subject(np: str, *, at_sentence_start: bool) -> bool:
    """A bare plural, mass noun or gerund phrase: a kind of thing, not a particular one or a person."""
    words = np.split()
    first = words[0].casefold()
    base = re.split(r"['’]", first)[0]
    if base in _NOT_GENERIC or base in ("next", "last") or first.endswith(("n't", "n’t")):
        return False  # "We'll …", "That's what …", "Everything's …", "Next month I'm …"
    if base != first and base not in COMMON_WORDS and base not in _GENERIC_NOUNS:
        return False  # "LeBron's moments …": someone's, not a kind of thing ("Nature's beauty" is)
    if len(first) > 4 and first.endswith("ed") and len(words) > 1 and words[1].casefold() in _OBJECT_PRONOUNS:
        return False  # "(It …) reminded me of how music brings …": a verb, not a subject
    if words[-1].casefold() in _DANGLING_END or any(w.casefold() in _CLAUSE_IN_SUBJECT for w in words[1:]):
        return False  # "hoping to … start conversations to (create …)", "everything's exciting but it's …"
    if first in _NOT_GENERIC or any(w.casefold() in _POINTERS for w in words):
        return False  # "Walking them reminds me …": about something said before, not a kind of thing
    if any(w[:1].isupper() for w in words[1:]) and all(w[:1].isupper() for w in words):
        return False  # "Grand Canyon Trip": a name
    head = words[-1].casefold().strip("'’")
    if len(words) == 1:
        if words[0][:1].isupper() and not at_sentence_start:
            return False  # a name in the middle of a sentence
        return (
            first in COMMON_WORDS
            or first in _GENERIC_NOUNS
            or first.endswith(_NOUN_SUFFIXES)
            or (first.endswith("s") and not first.endswith(("ss", "us", "is")) and len(first) > 4)
        )
    if words[0][:1].isupper() and not at_sentence_start:
        return False
    return head.replace("-", "").isalpha() and head not in _NOT_HEAD


#: Words that never end a generic subject's noun phrase (its head): the openers, minus the nouns among them.
_NOT_HEAD = _NOT_GENERIC - frozenset("love time week weekend month year morning night evening hope lot lots".split())
_OBJECT_PRONOUNS = frozenset("me us him her them it you".split())
_DANGLING_END = frozenset("to and or of the a an for with in on at by from as but".split())
_CLAUSE_IN_SUBJECT = frozenset("but because i it you".split())
#: Mass and abstract nouns that name a kind of thing on their own ("Art's awesome for …", "Nature does have a way").
_GENERIC_NOUNS = frozenset(
    """life love art dance music nature travel food coffee tea exercise work success change family friendship
    kindness patience honesty health sleep money time teamwork reading writing painting cooking sport sports
    fitness education learning practice hope faith community support encouragement laughter comedy
    running yoga meditation hiking gardening photography parenting marriage school college science history
    technology""".split()
)


def _after_fillers(s: Sentence, pos: int) -> int:
    """Skip openers that carry nothing ("Yeah, ", "And ", "Honestly, ") before a clause's subject."""
    m = _FILLERS_RE.match(s.text, pos, s.end)
    return m.end() if m else pos


_FILLERS_RE = re.compile(
    r"(?:(?:yeah|yes|yep|yup|and|but|so|honestly|really|plus|also|well|oh|totally|definitely|agreed|exactly|true|"
    r"absolutely|sure|wow)\b[,!]?\s+)+"
    # "Yep Jon, …", "Yeah, Maria, …": the listener's name after the filler
    r"(?:(?-i:[A-Z][a-z]+),\s+)?",
    re.IGNORECASE,
)


def _negated_at(text: str, lo: int, hi: int) -> bool:
    return re.search(r"\b(?:not|never)\b|n['’]t\b", text[lo:hi], re.IGNORECASE) is not None


def _appreciated(s: Sentence, words: frozenset[str]) -> Iterator[Found]:
    if words & {"appreciate", "treasure", "cherish"}:
        dropped = _APPRECIATE_DROPPED_RE.match(s.text, _after_fillers(s, s.start), s.end)
        for m in (*_APPRECIATE_RE.finditer(s.text, s.start, s.end), *((dropped,) if dropped else ())):
            ctx = speaker_ctx(s, m.start())
            if ctx is None or ctx.negated:
                continue
            end = view_end(s, m.start("obj"))
            held = _held(s.text[m.start("obj") : end])
            if held is not None:
                yield make(ctx, s, "values", held, "view.appreciate", end=end, negated=False)
    if words & {"means", "meant", "mean", "appreciated"}:
        for m in _MEANS_RE.finditer(s.text, s.start, s.end):
            group = "np" if m.group("np") else "np2"
            ctx = speaker_ctx(s, m.start())
            if ctx is None or ctx.negated:
                continue
            held = _held(m.group(group))
            if held is not None:
                yield make(ctx, s, "values", held, "view.means-a-lot", end=m.end(), negated=False)


def _held(phrase: str) -> str | None:
    """What is appreciated, without the listener's possessive ("your support" → "support"); None for a bare
    pronoun, a thanks-for ("it", "you for coming") or a long clause."""
    phrase = re.split(r"\s+(?:and\s+i|but|so|because|,)\s*", phrase.strip(), maxsplit=1)[0]
    phrase = re.sub(r"[\s,]+(?:too|so\s+much|a\s+lot|though|man|buddy|\w+!)$", "", phrase.strip(" ,'’\""))
    phrase = re.sub(r",\s*[A-Z][a-z]+$", "", phrase)  # "our friendship too, Caroline"
    phrase = re.sub(r"\s+too$", "", phrase)
    phrase = _POSSESSIVE_RE.sub("", phrase).strip()
    words = phrase.split()
    if not words or len(words) > 8:
        return None
    first = words[0].casefold()
    if first in ("it", "that", "this", "you", "u", "everything", "them", "him", "her", "all", "what", "how", "the"):
        return None
    if not words[-1].strip("'’").isalpha():
        return None
    if phrase.casefold() in _THANKS_ONLY:
        return None  # "Your words mean a lot": thanks for what was just said, nothing the speaker values
    return phrase


#: What a listener just said or sent: valuing it is thanks for the moment, not a lasting view.
_THANKS_ONLY = frozenset(["words", "kind words", "message", "reply", "comment", "comments", "note", "response"])
