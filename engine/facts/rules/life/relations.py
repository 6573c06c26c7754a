"""People and pets: "my sister Noa", "my gf keisha", "Husband David", "my kids Omar (10) and Salma (7)", "twins of 4
years, Inès and Adam", "Bramble is my Border terrier", "we have a cat (Pixel, 9 yrs old)", "Jess is my girlfriend,
not my boyfriend", and the status of the speaker's relationship: engaged, married, divorced, widowed, broken up.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from engine.facts.catalog import Catalog
from engine.facts.rules.life.common import ctx_at, lowercase_writer, make, read_name, speaker_ctx, words_of
from engine.facts.rules.life.people import Person, mentions, owner_of, resolve_pronoun
from engine.facts.rules.life.words import NOT_NAMES_LIFE, PET_WORDS, RELATION_PREDICATES
from engine.facts.rules.model import Found, Sentence

_PLURAL = frozenset(
    """kids children sons daughters boys girls twins grandchildren grandkids siblings brothers sisters cats dogs
    pets""".split()
)
_LIST_NAME_RE = re.compile(
    r"\s*(?:\(\s*\d{1,2}\s*\)\s*)?(?:,\s*)?(?:and|&|,)\s+(?P<name>[A-Z][a-zà-öø-ÿ'’-]+)(?![\w'’])"
)
_AGE_AFTER_RE = re.compile(
    r"\s*(?:\(\s*(?:(?:he|she)['’]?s\s+)?(?P<a1>\d{1,2})\s*(?:yrs?|years?)?[^)]{0,30}\)|,\s*(?P<a2>\d{1,2}),|"
    r",?\s*who\s+is\s+(?P<a3>\w+)(?=[,.;]))"
)
_HAVE_PETS_RE = re.compile(
    r"\b(?:have|has|got|adopted|get)\s+(?:an?|two|three|our|my)\s+(?:[\w-]+\s+){0,2}?(?P<kind>"
    + "|".join(sorted((re.escape(w) for w in PET_WORDS), key=len, reverse=True))
    + r")\b\s*(?:\(\s*|,\s*|\s+(?:called|named)\s+)(?P<name>(?-i:[A-Z])[a-zà-öø-ÿ'’-]+)"
    r"(?P<more>(?:\s*(?:,|and|&)\s*(?-i:[A-Z])[a-zà-öø-ÿ'’-]+)*)",
    re.IGNORECASE,
)
_X_IS_MY_RE = re.compile(
    r"(?P<name>[A-Z][a-zà-öø-ÿ'’-]+)\s+is\s+(?:my|our)\s+(?P<mods>(?:[\w-]+\s+){0,2}?)(?P<rel>"
    + "|".join(sorted((re.escape(w) for w in (*RELATION_PREDICATES, *PET_WORDS)), key=len, reverse=True))
    + r")\b(?:,?\s+not\s+(?:my|our|a|an)\s+(?P<wrong>[\w-]+))?",
    re.IGNORECASE,
)
_HAVE_KIDS_RE = re.compile(
    r"\b(?:i|we)\s+have\s+(?:(?:two|three|four|\d)\s+)?(?P<rel>twins|kids|children|sons|daughters|grandchildren)"
    r"(?:\s+of\s+\d+\s*(?:years?|yrs?))?\s*,?\s*(?P<names>[A-Z][\w'’-]+(?:\s*(?:,|and|&)\s*[A-Z][\w'’-]+)+)",
    re.IGNORECASE,
)
_PARENT_OF_RE = re.compile(
    r"\b(?:a\s+)?(?:single\s+|proud\s+|stay-at-home\s+|working\s+)?(?:mom|mum|mother|dad|father|parent|mama|papa)\s*"
    r"(?:[^\w\s]+\s*)?\s(?:to|of)\s+(?P<name>(?-i:[A-Z])[\w'’-]+)",
    re.IGNORECASE,
)
_SCHOOL_NAME = r"(?P<school>(?-i:[A-Z])[\w'’&-]*(?:\s+(?-i:[A-Z])[\w'’&-]*){0,3})"
_CHILD_SCHOOL_RE = re.compile(
    r"\b(?:keep|keeping|kept|send|sending|sent|enrol|enroll|enrolled|enrolling)\s+(?P<who>(?-i:[A-Z])[\w'’-]+|him|her)\s+"
    r"(?:at|to|in)\s+"
    + _SCHOOL_NAME
    + r"|\b(?P<whose>his|her|(?-i:[A-Z])[\w'’-]+['’]s)\s+class\s+at\s+"
    + _SCHOOL_NAME.replace("school", "school2"),
    re.IGNORECASE,
)
#: "Our one-year-old is so cute, his name is Kyle!", "we got a puppy last week, her name is Luna": a child or a pet
#: named by a pronoun after it was mentioned in the same sentence.
_PET_ALT = "|".join(sorted((re.escape(w) for w in PET_WORDS), key=len, reverse=True))
_NAMED_AFTER_RE = re.compile(
    r"\b(?:(?P<det>a|an)|my|our)\s+(?:new\s+|little\s+|baby\s+|rescue\s+)?"
    r"(?P<who>(?P<child>\w+[- ](?:year|month|week)[- ]old|youngest|oldest|eldest|baby|newborn|little\s+one|firstborn)|"
    r"(?P<pet>" + _PET_ALT + r"))\b"
    r"[^.!?]{0,60}?\b(?:his|her|its)\s+name\s+is\s+(?P<name>(?-i:[A-Z])[a-zà-öø-ÿ'’-]+)",
    re.IGNORECASE,
)
_ACQUIRED_RE = re.compile(r"\b(?:have|has|got|adopted|bought|rescued|had|welcomed|brought\s+home)\s+$", re.IGNORECASE)
_STATUS_RE = re.compile(
    r"\b(?P<what>divorced|separated|widowed|a\s+widow(?:er)?|single|engaged|married|broke\s+up|split\s+up|"
    r"got\s+engaged|got\s+married|getting\s+married|proposed|passed\s+away|died|"
    r"(?:called|broke|breaking|calling)\s+off\s+(?:the|our|my)\s+(?:engagement|wedding)|"
    r"ended\s+(?:the|our|my)\s+engagement)\b",
    re.IGNORECASE,
)


_RELATION_WORDS = frozenset(
    """name have has got adopted my our divorced separated widowed widow widower single engaged married broke split
    proposed passed died off ended mom mum mother dad father parent mama papa keep keeping kept send sending sent enrol
    enroll
    enrolled enrolling class""".split()
)


#: "Kiara turned 14 this week", "I just turned 40": an age that changed
_TURNED_RE = re.compile(
    r"(?:^|(?<=[\s,(]))(?P<who>[A-Za-zà-öø-ÿ'’-]+)\s+(?:just\s+|finally\s+|officially\s+)?turned\s+(?P<n>\d{1,3})"
    r"(?!\s*(?:%|percent|degrees|km|miles|pounds|kg|lbs|grand|k)\b)",
)
#: "got my kids this weekend … kiara is 13 n thinks everything is boring, dj is 9": ages of the children the message
#: is about
_KIDS_RE = re.compile(r"\b(?:my|our)\s+(?:kids|children|boys|girls|sons|daughters|twins|little\s+ones)\b", re.I)
_NAME_IS_AGE_RE = re.compile(
    r"(?:^|(?<=[\s,(]))(?P<who>[A-Za-zà-öø-ÿ'’-]{2,})\s+(?:is|['’]s)\s+(?P<n>\d{1,2})(?:\s*(?:yrs?|years?)(?:\s+old)?)?"
    r"(?=\s*(?:$|[,.;!?)]|\s(?:n|and|&|but|now|so|who|going|turning)\b))",
)
_NOT_A_NAME = frozenset(
    """i he she it they we you this that there here who what which everyone someone somebody everybody mine yours
    hers his theirs ours one each both she's he's it's time age size score rate price temp temperature number
    count total result answer weight height level grade year month day week tomorrow today""".split()
)
#: Where a relative named in passing is: "my sister danielle in akron", "Dalia, who's doing her master's in Montreal"
_THEIR_TOWN_RE = re.compile(
    r"(?:\s+(?:now\s+)?|,?\s+who(?:\s+is\s+|['’]s\s+|\s+)(?:now\s+|still\s+)?(?:works|working|studies|studying|"
    r"doing\s+(?:a|an|her|his|their)\s+[\w'’-]+(?:\s+degree)?)\s+(?:[\w'’-]+\s+){0,3}?)(?:in|over\s+in|out\s+in)\s+"
    r"(?=\w)",
    re.IGNORECASE,
)
_NOT_TOWNS = frozenset("law laws the a an my our his her their town hospital school bed person charge".split())


#: "I am left-handed", "as an only child, I …", "I'm an only child"
_BORN_TRAIT_RE = re.compile(
    r"\b(?:(?:i['’]?m|im|i\s+am|i\s+was|being|as)\s+(?:also\s+|actually\s+|totally\s+)?(?:an?\s+)?)"
    r"(?P<trait>(?:left|right)[- ]handed|ambidextrous|only\s+child)\b",
    re.IGNORECASE,
)


_PET_ALT = "|".join(sorted((re.escape(w) for w in PET_WORDS), key=len, reverse=True))
#: "we adopt a dog from shelter yesterday … name is Dubu": a pet got in this message, named later in it
_GOT_PET_RE = re.compile(
    r"\b(?:adopt|adopted|adopting|got|get|bought|rescued|brought\s+home)\s+(?:an?|our|my|this|the)\s+(?:[\w-]+\s+){0,2}?"
    r"(?P<kind>" + _PET_ALT + r")\b",
    re.IGNORECASE,
)
_NAME_IS_RE = re.compile(
    r"\b(?:(?:his|her|its|the|their)\s+)?name\s+is\s+(?P<name>(?-i:[A-Z])[\w'’-]+)|\b(?:named|called)\s+(?:him|her|it)\s+"
    r"(?P<name2>(?-i:[A-Z])[\w'’-]+)",
    re.IGNORECASE,
)
#: "Pickles our parakeet has been pulling at his feathers"
_NAME_OUR_PET_RE = re.compile(
    r"(?P<name>(?-i:[A-Z])[\w'’-]+),?\s+(?:our|my)\s+(?:(?:little|old|new|sweet|crazy)\s+)?(?P<kind>"
    + _PET_ALT
    + r")\b",
    re.IGNORECASE,
)


def _pets_named(s: Sentence) -> Iterator[Found]:
    """Pets named apart from the words that say they are the speaker's: "we adopt a dog … name is Dubu", "Pickles
    our parakeet"."""
    text = s.text
    got = _GOT_PET_RE.search(text)  # anywhere in the message: the name often comes a sentence later
    if got is not None:
        for m in _NAME_IS_RE.finditer(text, s.start, s.end):
            name = m.group("name") or m.group("name2")
            ctx = speaker_ctx(s, m.start())
            if m.start() < got.start() or name.casefold() in NOT_NAMES_LIFE or ctx is None or ctx.negated:
                continue
            yield make(ctx, s, "has_pet", name, "pet.named-later", end=m.end(), subject=s.speaker)
            yield make(
                ctx, s, "pet_breed", got.group("kind").casefold(), "pet.named-later.kind", end=m.end(), subject=name
            )
    for m in _NAME_OUR_PET_RE.finditer(text, s.start, s.end):
        if m.group("name").casefold() in NOT_NAMES_LIFE:
            continue
        ctx = speaker_ctx(s, m.start())
        if ctx is None or ctx.negated:
            continue
        yield make(ctx, s, "has_pet", m.group("name"), "pet.apposition", end=m.end(), subject=s.speaker)
        yield make(
            ctx, s, "pet_breed", m.group("kind").casefold(), "pet.apposition.kind", end=m.end(), subject=m.group("name")
        )


_REL_IN_BRACKETS_RE = re.compile(
    r"(?P<name>[A-Za-zà-öø-ÿ'’-]{2,})\s*\(\s*(?:my\s+)?(?P<rel>gf|bf|wife|husband|partner|girlfriend|boyfriend|fianc[ée]e?|"
    r"sister|brother|son|daughter|mum|mom|dad|cousin|roommate|flatmate|bestie|best\s+friend)\s*\)",
    re.IGNORECASE,
)
#: "2 kids (maisie 6, reggie 3)", "my boys (Tom, 8 and Sam, 5)"
_KIDS_IN_BRACKETS_RE = re.compile(
    r"\b(?:kids|children|boys|girls|sons|daughters|twins)\s*\((?P<list>[^()]{3,80})\)", re.IGNORECASE
)
_NAME_AGE_RE = re.compile(r"(?P<name>[A-Za-zà-öø-ÿ'’-]{2,})\s*,?\s*(?:is\s+|aged\s+)?(?P<age>\d{1,2})\b")


def _in_brackets(s: Sentence) -> Iterator[Found]:
    """Relations said in brackets: "shanice (gf) wants …", "got a wife and 2 kids (maisie 6, reggie 3)"."""
    text, lower_ok = s.text, lowercase_writer(s.text)
    for m in _REL_IN_BRACKETS_RE.finditer(text, s.start, s.end):
        name = m.group("name")
        if name.casefold() in _NOT_A_NAME or (not name[:1].isupper() and not lower_ok):
            continue
        rel = m.group("rel").casefold()
        predicate = RELATION_PREDICATES.get(rel) or RELATION_PREDICATES.get(rel.replace(" ", ""))
        ctx = speaker_ctx(s, m.start())
        if predicate is None or ctx is None or ctx.negated:
            continue
        yield make(ctx, s, predicate, name, "relative.bracket", end=m.end(), subject=s.speaker)
    for m in _KIDS_IN_BRACKETS_RE.finditer(text, s.start, s.end):
        ctx = speaker_ctx(s, m.start())
        if ctx is None or ctx.negated or ctx.subject != s.speaker:
            continue
        for kid in _NAME_AGE_RE.finditer(m.group("list")):
            name = kid.group("name")
            if name.casefold() in _NOT_A_NAME or name.casefold() in ("and", "age", "yrs", "years"):
                continue
            if not name[:1].isupper() and not lower_ok:
                continue
            yield make(ctx, s, "has_child", name, "kids.bracket", end=m.end(), subject=s.speaker)
            yield make(ctx, s, "has_age", kid.group("age"), "kids.bracket.age", end=m.end(), subject=name)


def _born_traits(s: Sentence) -> Iterator[Found]:
    """Traits one is born with and keeps: which hand, being an only child — each clashes with its opposite
    (:mod:`engine.facts.compat`), so saying both is a conflict to settle, never two truths."""
    for m in _BORN_TRAIT_RE.finditer(s.text, s.start, s.end):
        aside = m.group(0).casefold().startswith(("as ", "being "))  # "as an only child, I should …"
        ctx = speaker_ctx(s, m.start()) if aside else ctx_at(s, m.start())
        if ctx is None or ctx.negated or ctx.subject != s.speaker:
            continue
        trait = re.sub(r"[\s-]+", "-" if "hand" in m.group("trait").casefold() else " ", m.group("trait").casefold())
        yield make(ctx, s, "has_trait", trait, "trait.born", end=m.end())


def _ages(s: Sentence) -> Iterator[Found]:
    """Ages said in passing: "Kiara turned 14 this week" (the age changed), and in a message about the speaker's
    children, "kiara is 13 … dj is 9" (each a child of the speaker, of that age)."""
    text, lower_ok = s.text, lowercase_writer(s.text)

    def person(word: str) -> str | None:
        if word.casefold() in _NOT_A_NAME or word.casefold() in NOT_NAMES_LIFE:
            return None
        if word[:1].isupper() or (lower_ok and word.isalpha() and word.islower()):
            return word
        return None

    for m in _TURNED_RE.finditer(text, s.start, s.end):
        who = m.group("who")
        n = int(m.group("n"))
        ctx = ctx_at(s, m.start(), time="past")
        if ctx is None or ctx.negated or not 0 < n < 120:
            continue
        subject = s.speaker if who.casefold() == "i" else person(who)
        if subject is None:
            continue
        yield make(ctx, s, "has_age", str(n), "age.turned", end=m.end(), subject=subject, change=True, time="present")
    if _KIDS_RE.search(text) is None:
        return
    for m in _NAME_IS_AGE_RE.finditer(text, s.start, s.end):
        name = person(m.group("who"))
        if name is None or not 0 < int(m.group("n")) < 25:
            continue
        ctx = ctx_at(s, m.start())
        if ctx is None or ctx.negated:
            continue
        yield make(ctx, s, "has_child", name, "kids.age", end=m.end(), subject=s.speaker)
        yield make(ctx, s, "has_age", m.group("n"), "kids.age", end=m.end(), subject=name)


def relations(s: Sentence, catalog: Catalog) -> Iterator[Found]:  # noqa: C901 — a cascade of rules read top to bottom; not yet split
    """The speaker's people and pets, people's people, and relationship status, in one sentence."""
    text = s.text
    for person in mentions(text):
        if not (s.start <= person.start < s.end) or person.relation is None:
            continue
        yield from _mention(s, person)
    low = s.low
    if "turned" in low or ((" is " in low or "'s " in low or "’s " in low) and _KIDS_RE.search(text)):
        yield from _ages(s)
    if "handed" in low or "only child" in low:
        yield from _born_traits(s)
    if "(" in text:
        yield from _in_brackets(s)
    if "name is" in low or "our " in low or "my " in low:
        yield from _pets_named(s)
    if not words_of(low) & _RELATION_WORDS:
        return
    if any(w in low for w in ("have", "has", "got", "adopted")):
        for m in _HAVE_PETS_RE.finditer(text, s.start, s.end):
            ctx = ctx_at(s, m.start())
            if ctx is None or ctx.negated:
                continue
            kind = m.group("kind").lower()
            kind = kind[:-1] if kind.endswith("s") and kind[:-1] in PET_WORDS else kind
            for name in [m.group("name"), *re.findall(r"(?-i:[A-Z])[a-zà-öø-ÿ'’-]+", m.group("more") or "")]:
                yield make(ctx, s, "has_pet", name, "pet.named", end=m.end())
                yield make(ctx, s, "pet_breed", kind, "pet.named.kind", end=m.end(), subject=name)
        for m in _HAVE_KIDS_RE.finditer(text, s.start, s.end):
            ctx = ctx_at(s, m.start())
            if ctx is None or ctx.negated or ctx.subject != s.speaker:
                continue
            for name in re.split(r"\s*(?:,|\band\b|&)\s*", m.group("names")):
                if name:
                    yield make(ctx, s, "has_child", name, "kids.named", end=m.end())
    if " name is " in low:
        for m in _NAMED_AFTER_RE.finditer(text, s.start, s.end):
            ctx = ctx_at(s, m.start())
            if ctx is None or ctx.negated or ctx.subject != s.speaker or m.group("name") in NOT_NAMES_LIFE:
                continue
            if m.group("det") and not _ACQUIRED_RE.search(text, max(s.start, m.start() - 16), m.start()):
                continue  # "I met a dog at the park, his name is Max": not the speaker's
            predicate = "has_child" if m.group("child") else "has_pet"
            yield make(ctx, s, predicate, m.group("name"), "named-after", end=m.end())
            if m.group("pet"):
                yield make(
                    ctx,
                    s,
                    "pet_breed",
                    m.group("pet").casefold(),
                    "named-after.kind",
                    end=m.end(),
                    subject=m.group("name"),
                )
    if " is my " in low or " is our " in low:
        for m in _X_IS_MY_RE.finditer(text, s.start, s.end):
            yield from _is_my(s, m)
    for m in _STATUS_RE.finditer(text, s.start, s.end):
        yield from _status(s, m)
    if " to " in low or " of " in low:
        for m in _PARENT_OF_RE.finditer(text, s.start, s.end):
            ctx = ctx_at(s, m.start())
            if ctx is not None and ctx.subject == s.speaker and not ctx.negated:
                yield make(ctx, s, "has_child", m.group("name"), "parent-of", end=m.end())
    if any(w in low for w in ("keep", "send", "moving", "enrol", "class at", "school")):
        for m in _CHILD_SCHOOL_RE.finditer(text, s.start, s.end):
            yield from _child_school(s, m)


def _mention(s: Sentence, person: Person) -> Iterator[Found]:
    text = s.text
    rel = (person.relation or "").casefold()
    ctx = ctx_at(s, person.start)
    if ctx is not None and ctx.negated and ctx.subject == s.speaker:
        return  # "I don't have a brother"
    if person.owner is not None:
        owner = owner_of(text, person)
        predicate = RELATION_PREDICATES.get(rel)
        if owner is not None and person.name and predicate is not None:
            yield _plain(s, owner.subject, predicate, person.name, "relative.of", person)
        return
    predicate = person.predicate
    if predicate is None:
        return
    if predicate == "has_pet":
        if person.name:
            yield _plain(s, s.speaker, "has_pet", person.name, "pet", person)
            if rel not in ("pet", "pets"):
                yield _plain(s, person.name, "pet_breed", rel, "pet.breed", person)
        return
    if person.name:
        yield _plain(s, s.speaker, predicate, person.name, "relative", person)
        if rel not in _PLURAL:
            yield from _their_town(s, person, person.name)
        age = _AGE_AFTER_RE.match(text, person.end, s.end)
        if age is not None:
            years = age.group("a1") or age.group("a2") or _word_number(age.group("a3") or "")
            if years:
                yield _plain(s, person.name, "has_age", str(years), "relative.age", person, end=age.end())
        if rel in _PLURAL:
            pos = person.end
            while True:
                more = _LIST_NAME_RE.match(text, pos, s.end)
                if more is None:
                    break
                yield _plain(s, s.speaker, predicate, more.group("name"), "relative.list", person, end=more.end())
                pos = more.end()


def _their_town(s: Sentence, person: Person, name: str) -> Iterator[Found]:
    """Where a relative named in passing is: "my sister danielle in akron", "my best friend Dalia, who's doing her
    master's in Montreal"."""
    where = _THEIR_TOWN_RE.match(s.text, person.end, s.end)
    if where is None:
        return
    town = read_name(s.text, where.end(), s.end, lowercase_ok=lowercase_writer(s.text), max_words=3)
    if town is not None and town[0].casefold() not in _NOT_TOWNS:
        yield _plain(s, name, "located_in", town[0], "relative.town", person, end=town[1])


def _plain(
    s: Sentence, subject: str, predicate: str, obj: str, rule: str, person: Person, *, end: int | None = None
) -> Found:
    return Found(
        subject=subject,
        predicate=predicate,
        object=obj,
        rule=f"life.{rule}",
        span=(person.start, end or person.end),
        time="present",
    )


def _word_number(word: str) -> str | None:
    numbers = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
    table = {w: str(i + 1) for i, w in enumerate(numbers.split())}
    return table.get(word.casefold())


def _is_my(s: Sentence, m: re.Match[str]) -> Iterator[Found]:
    """ "Bramble is my Border terrier", "Jess is my girlfriend, not my boyfriend"."""
    rel = m.group("rel").casefold()
    name = m.group("name")
    if name in ("It", "This", "That", "He", "She", "There", "What", "Who"):
        return
    ctx = ctx_at(s, m.start("rel"))
    if ctx is None or ctx.negated:
        return
    if rel in PET_WORDS:
        breed = (m.group("mods") + m.group("rel")).strip()
        yield make(ctx, s, "has_pet", name, "pet.is-my", end=m.end(), subject=s.speaker)
        yield make(ctx, s, "pet_breed", breed, "pet.breed", end=m.end(), subject=name)
        return
    predicate = RELATION_PREDICATES.get(rel)
    if predicate is None:
        return
    yield make(ctx, s, predicate, name, "relative.is-my", end=m.end(), subject=s.speaker)


def _ended(what: str) -> tuple[str, str]:
    """``(what, said)``: "called off the engagement" is a break-up, said as what was ended ("" for anything else)."""
    if not what.endswith(("engagement", "wedding")):
        return what, ""
    said = re.sub(r"\b(?:our|my)\b", "the", what).replace("calling", "called").replace("breaking", "broke")
    return "broke up", said


def _status(s: Sentence, m: re.Match[str]) -> Iterator[Found]:
    """The speaker's relationship status: "Divorced since 2015", "keisha and i broke up", "WE GOT MARRIED",
    "my husband Geoffrey passed away", "conner proposed"."""
    text = s.text
    what, said = _ended(re.sub(r"\s+", " ", m.group("what").casefold()))
    ctx = ctx_at(
        s,
        m.start(),
        time="past"
        if what in ("broke up", "split up", "got engaged", "got married", "proposed", "passed away", "died")
        else "present",
    )
    if ctx is None:
        return
    partner = ctx.person
    if what in ("passed away", "died"):
        if partner is None or (partner.relation or "").casefold() not in ("husband", "wife", "partner", "spouse"):
            return
        yield make(
            ctx,
            s,
            "relationship_status",
            f"widowed: {partner.relation} {partner.name or ''} passed away".strip(),
            "status.widowed",
            end=m.end(),
            subject=s.speaker,
            change=True,
            negated=False,
        )
        if partner.name:
            yield make(
                ctx,
                s,
                "has_spouse",
                partner.name,
                "status.widowed.spouse",
                end=m.end(),
                subject=s.speaker,
                negated=True,
                change=True,
            )
        return
    if what == "proposed":
        if (
            partner is None
            or partner.name is None
            or (partner.relation or "").casefold() not in ("boyfriend", "girlfriend", "bf", "gf", "partner")
        ):
            return
        yield make(
            ctx,
            s,
            "relationship_status",
            f"engaged to {partner.name}",
            "status.engaged",
            end=m.end(),
            subject=s.speaker,
            change=True,
        )
        return
    if ctx.subject != s.speaker or ctx.negated:
        return
    if what in ("broke up", "split up"):
        other = re.search(
            r"(?:(?P<name>[\w'’-]+)\s+and\s+(?:i|me)\b|\b(?:i|me)\s+and\s+(?:my\s+\w+\s+)?(?P<name2>[\w'’-]+))",
            text[s.start : m.start()],
            re.I,
        )
        with_whom = re.compile(r"\s+with\s+(?:my\s+\w+\s+)?(?P<name>[\w'’-]+)", re.I).match(text, m.end(), s.end)
        name = None
        if other is not None:
            name = other.group("name") or other.group("name2")
        elif with_whom is not None:
            name = with_whom.group("name")
        value = f"{said or 'broke up'} with {name}" if name else (said or "broke up")
        yield make(ctx, s, "relationship_status", value, "status.broke-up", end=m.end(), change=True, time="past")
        if name:
            yield make(
                ctx,
                s,
                "has_partner",
                name,
                "status.broke-up.partner",
                end=m.end(),
                negated=True,
                change=True,
                time="past",
            )
        return
    if what == "getting married":
        yield make(ctx, s, "plans_to", "get married", "status.wedding-plan", end=m.end(), time="future")
        return
    value = {"a widow": "widowed", "a widower": "widowed", "got engaged": "engaged", "got married": "married"}.get(
        what, what
    )
    if value == "married" and ctx.planned:
        return
    spouse = re.compile(r"\s+to\s+(?P<name>(?-i:[A-Z])[\w'’-]+(?:\s+(?-i:[A-Z])[\w'’-]+)?)").match(text, m.end(), s.end)
    if spouse is not None and value in ("married", "engaged"):
        predicate = "has_spouse" if value == "married" else "has_partner"
        yield make(ctx, s, predicate, spouse.group("name"), f"status.{value}.to", end=spouse.end())
    yield make(
        ctx,
        s,
        "relationship_status",
        value,
        f"status.{value}",
        end=m.end(),
        change=what.startswith("got") or value in ("divorced", "separated", "widowed"),
    )


def _child_school(s: Sentence, m: re.Match[str]) -> Iterator[Found]:
    """ "we've decided to keep Vihaan at Vibgyor", "children from his class at Vibgyor High": a child's school."""
    text = s.text
    who = m.group("who") or m.group("whose")
    school = m.group("school") or m.group("school2")
    if who is None or school is None:
        return
    word = re.sub(r"['’]s$", "", who)
    if word.casefold() in ("him", "her", "his"):
        person = resolve_pronoun(text, m.start(), "f" if word.casefold() == "her" else "m")
        if person is None or person.name is None:
            return
        word = person.name
    ctx = ctx_at(s, m.start())
    if ctx is None or ctx.negated or (ctx.planned and not re.search(r"\bkeep", m.group(0), re.I)):
        return
    yield make(ctx, s, "studies_at", school, "child.school", end=m.end(), subject=word)
