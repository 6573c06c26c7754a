"""Possessive shapes: "my X is Y", favourites, named relatives, and what someone holds dear.

"My favourite food is pho", "Pho is my favourite", "My wife's name is Hana", "my sister Anna",
"Family means everything to me".  The shape "my X is Y" maps X through the catalog (so plugin
predicates with cues take part) and then checks that Y is the kind of value that predicate holds —
"my job is a nightmare" is not an occupation.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from engine.facts.catalog import Catalog
from engine.facts.rules import classify as c
from engine.facts.rules.lexicon import (
    LANGUAGES,
    MENTION_RELATIONS,
    NOT_NAMES,
    OCCUPATIONS,
    PETS,
    RELATIONS,
    pet_compound,
    word_set,
)
from engine.facts.rules.model import Found, Sentence
from engine.facts.rules.text import clean_object, extract_object

NAME = r"[A-Z][a-zà-ỹ]+(?:[-'][A-Z][a-zà-ỹ]+)?(?:\s[A-Z][a-zà-ỹ]+)?"
_RELS = "|".join(sorted((re.escape(w) for w in set(RELATIONS) | PETS), key=len, reverse=True))
_ADJ = (
    r"(?:(?:little|big|older|younger|oldest|youngest|eldest|baby|twin|best|new|dear|lovely|sweet|"
    r"amazing|"
    r"awesome|close|good|old|two|three|four|beautiful|wonderful|adorable|furry|rescue|golden)\s+)*"
)
_POSSESSIVE_RE = re.compile(
    r"(?:(?P<mine>[Mm]y|[Oo]ur)|(?P<owner>" + NAME + r")['’]s)\s+(?P<noun>(?:[\w'’-]+\s+){0,3}?[\w'’-]+?)\s+"
    r"(?:is|are|was|were|['’]s)\s+(?:(?:actually|definitely|probably|still|now|currently|"
    r"officially|called|"
    r"named|just|also|gonna\s+be|going\s+to\s+be|will\s+be|would\s+be)\s+)*"
)
_FAVORITE_RE = re.compile(
    r"(?P<whose>[Mm]y|[Oo]ur|(?P<owner>" + NAME + r")['’]s)\s+(?:all[- ]time\s+|absolute\s+|new\s+|current\s+)?"
    r"(?:favou?rite|fav|fave)\s+(?:(?P<cat>(?:[\w'-]+\s+){0,3}?[\w'-]+?)\s+)?(?:is|are|was|"
    r"has\s+to\s+be|"
    r"would\s+be|['’]s)\s+(?:(?:definitely|probably|still|now|currently|always|honestly)\s+)*"
)
_REVERSE_RE = re.compile(
    r"(?P<val>[^,;:.!?]{1,60}?)(?:['’]s(?:\s+(?:always\s+)?been)?|\s+(?:is|are|was|"
    r"has\s+always\s+been|"
    r"have\s+always\s+been|will\s+always\s+be))\s+(?:definitely\s+|probably\s+|still\s+|now\s+|"
    r"really\s+|"
    r"totally\s+|honestly\s+|mostly\s+|always\s+|just\s+)?(?:my|our)\s+(?:(?:all[- ]time|absolute|"
    r"new|current|biggest|greatest|true|main|"
    r"number\s+one|top|real|favorite|favourite|fav|first|only|lifelong|long-time)\s+)*"
    r"(?P<noun>[\w'-]+(?:\s+[\w'-]+)?)(?=\s*(?:[,.!;]|$|\s+(?:and|but|because|for|since|too|"
    r"as\s+well|now)\b))"
)
_DEICTIC_RE = re.compile(r"(?:this|that|these|those)\s+(?=\w+\s+\w)", re.IGNORECASE)
_ONE_OF_RE = re.compile(
    r"(?P<val>[^,;:.!?]{2,60}?)\s+(?:is|are|was|has\s+always\s+been)\s+(?:definitely\s+|"
    r"probably\s+|still\s+)?"
    r"(?:one\s+of|among)\s+my\s+(?:all[- ]time\s+)?(?:favou?rites|faves|"
    r"favou?rite\s+(?P<cat>[\w-]+))\b"
)
_FAVORITE_WORD_RE = re.compile(r"\b(?:favou?rite|fav|fave)\b")
_VALUES_RE = re.compile(
    r"(?P<val>[^,;:.!?]{2,60}?)\s+(?:(?:is|are|has\s+always\s+been|have\s+always\s+been)"
    r"\s+(?:so\s+|really\s+|"
    r"very\s+|super\s+|incredibly\s+|extremely\s+|truly\s+)?(?:important|precious|dear|everything|"
    r"special|"
    r"meaningful|sacred)\s+to\s+"
    r"(?:me|us)|(?:means?|meant)\s+(?:a\s+lot|so\s+much|the\s+world|everything|a\s+great\s+deal)"
    r"\s+to\s+"
    r"(?:me|us)|matters?\s+(?:so\s+much\s+|a\s+lot\s+|the\s+most\s+)?to\s+(?:me|us))\b"
)
#: Words that make a would-be noun phrase a clause ("… where I'm accepted … has really meant …").
_CLAUSE_WORDS_RE = re.compile(r"\b(?:I|I'm|I've|we|has|have|had|is|are|was|were|where|when|that|who)\b")
_KEY_RE = re.compile(
    r"(?P<val>[^,;:.!?]{2,80}?)(?:,\s+(?:especially|particularly|in\s+particular|for\s+me|to\s+me|"
    r"honestly|I\s+think|I\s+believe)\b[^,;:.!?]{0,40},)?"
    r"\s+(?:is|are)\s+(?:so\s+|really\s+|super\s+|very\s+|absolutely\s+|"
    r"truly\s+|"
    r"definitely\s+|always\s+)?(?:key|essential|crucial|vital|everything|a\s+must(?!-)|"
    r"what\s+matters|"
    r"important(?!\s+to\b))\b"
)
_REMINDS_RE = re.compile(
    r"\b(?:remind(?:s|ed)?\s+me\s+(?:of\s+)?how\s+(?:important|valuable|precious|special)|"
    r"made\s+me\s+realize\s+"
    r"(?:how\s+important|the\s+importance\s+of))\s+(?P<val>[^,;:.!?]{2,50}?)(?:\s+(?:is|are|was|"
    r"were|can\s+be)\b|"
    r"\s*(?=[,;:.!?]|$))"
)
_PRAISE_RE = re.compile(
    r"(?P<val>[^,;:.!?]{2,80}?)\s+(?:is|are|can\s+be)\s+(?:so\s+|really\s+|super\s+|very\s+|"
    r"truly\s+|always\s+|"
    r"such\s+a\s+|incredibly\s+|totally\s+)?(?P<how>rewarding|fulfilling|empowering|therapeutic|"
    r"worth\s+it|amazing|"
    r"awesome|fun|relaxing|healing|inspiring|meaningful|calming|freeing|liberating|my\s+thing)\b"
)
_MAKES_DIFFERENCE_RE = re.compile(
    r"(?P<val>[^,;:.!?]{2,80}?)\s+(?:will\s+|can\s+|could\s+)?(?:really\s+|truly\s+|always\s+|"
    r"definitely\s+)?"
    r"(?:helps?\s+)?(?:makes?\s+(?:a|such\s+a)\s+"
    r"(?:huge|big|real|great)\s+difference|keeps?\s+(?:me|us)\s+(?:going|motivated|sane|grounded|"
    r"inspired)|"
    r"brings?\s+(?:me\s+|us\s+)?(?:so\s+much\s+)?(?:joy|peace|happiness|comfort))\b"
)
#: Subjects of praise that point at something unnamed or at the listener ("The movie is great",
#: "Your work …").
_POINTED_SUBJECT_RE = re.compile(
    r"(?:the|this|that|these|those|your|his|her|their|it|they|he|she|you|and|but|or|so|plus|glad|"
    r"sure|hope|wow|"
    r"yeah|yes)\b|[^,;:.!?]*['’]s\b",
    re.IGNORECASE,
)
_DATE_LEAD_RE = re.compile(r"(?:on|in|at|by)\s+", re.IGNORECASE)
_LIST_TAIL_RE = re.compile(r"(?:,|\band|\bor)\s*$")
_INSPIRES_RE = re.compile(
    r"(?P<val>[^,;:.!?]{2,50}?)\s+(?:really\s+|truly\s+|always\s+|totally\s+)?(?:inspires|inspired)"
    r"\s+me\b"
)
_RELATION_RE = re.compile(
    r"\b(?:[Mm]y|[Oo]ur)\s+" + _ADJ + r"(?P<rel>" + _RELS + r")\b(?!['’-])"
    r"(?:,?\s+(?P<name>" + NAME + r")(?![\w'’]))?"
)

#: "Dance is my escape": nouns that make the subject something the speaker turns to.
_OUTLETS = frozenset(
    [
        "escape", "outlet", "therapy", "sanctuary", "haven", "comfort", "refuge", "stress-buster",
        "stress buster", "stress fix", "stress relief", "happy place", "safe space",
    ]
)  # fmt: skip
#: What kind of value "my <cue> is <value>" must have for each predicate.
_VALUE_KIND: dict[str, str] = {
    "is_named": "name",
    "has_nickname": "name",
    "has_pronouns": "pronouns",
    "has_birthday": "date",
    "has_deadline": "date",
    "has_age": "number",
    "works_as": "job",
    "goal": "infinitive",
    "plans_to": "infinitive",
    "wants": "infinitive",
    "native_language": "language",
    "speaks_language": "language",
    **dict.fromkeys(
        [
            "is_from",
            "lives_in",
            "studies_at",
            "works_at",
            "has_nationality",
            "primary_language",
            "studies",
            "works_in_field",
            "career_goal",
            "passionate_about",
            "has_hobby",
            "prefers_framework",
            "uses_technology",
            "diet",
            "favorite_food",
            "favorite_color",
            "favorite_book",
            "favorite_movie",
            "favorite_music",
            "has_allergy",
        ],
        "np",
    ),
}
#: Built-in predicates that "my <cue> is <value>" does not state ("my friend is great", "my mood is
#: …"). Plugin predicates are not listed: their cues map, and the value is read as a noun phrase.
_NOT_POSSESSIVE = word_set(
    "has_spouse has_partner has_child has_parent has_sibling has_pet has_friend has_colleague has_manager "
    "has_relative feels likes loves dislikes prefers values believes fears inspired_by "
    "experienced attended visited achieved started finished did_activity currently_doing "
    "reported_issue owns member_of met created has_trait identifies_as relationship_status "
    "has_skill reads watches listens_to has_event plays_sport plays_game plays_instrument "
    "does_regularly exercises learning collects volunteers_at organized applied_to enrolled_in "
    "participated_in moved_to lived_in worked_at has_injury has_condition takes_medication "
    "has_degree graduated_from runs_business working_on uses_tool advocates_for interested_in "
    "has_favorite"
)


def _continues_list(text: str, sentence_start: int, pos: int) -> bool:
    """True when a clause start only continues a list ("their growth, improvement, and confidence is
    …"): the subject of what follows is the whole list, not its last item.
    """
    return _LIST_TAIL_RE.search(text, sentence_start, pos) is not None


def _value(text: str, start: int, end: int, kind: str) -> str | None:
    """A possessive's value of the given kind, or None when the words are not such a value."""
    if kind == "name":
        obj = extract_object(text, start, end, "name")
        return obj if obj and obj.split()[0] not in NOT_NAMES else None
    if kind == "date":
        lead = _DATE_LEAD_RE.match(text, start, end)  # "my birthday is on March 3"
        obj = extract_object(text, lead.end() if lead else start, end, "event")
        return obj if obj and c.looks_like_date(obj) else None
    if kind in ("number", "pronouns"):
        pattern = r"\d{1,3}\b" if kind == "number" else r"[A-Za-z]+/[A-Za-z]+(?:/[A-Za-z]+)?"
        m = re.compile(pattern).match(text, start, end)
        return m.group() if m else None
    if kind == "infinitive":
        m = re.compile(r"to\s+|(?=[a-z]+ing\b)").match(text, start, end)
        return extract_object(text, m.end(), end, "phrase") if m else None
    obj = extract_object(text, start, end, "np")
    if obj is None:
        return None
    if kind == "job":
        return obj if c.head_noun(obj) in OCCUPATIONS else None
    if kind == "language":
        return obj if c.words(obj)[0] in LANGUAGES else None
    return obj


def possessives(s: Sentence, catalog: Catalog) -> Iterator[Found]:
    """ "my X is Y" / "Anna's X is Y": X mapped through the catalog, Y checked against it."""
    if not s.has("my ", "our ", "'s ", "’s "):
        return
    for m in s.clause_matches(_POSSESSIVE_RE):
        owner = m.group("owner")
        if owner and owner.split()[0] in NOT_NAMES:
            continue
        noun = m.group("noun").casefold().replace("’", "'")
        if noun.split()[0] in ("favorite", "favourite", "fav", "fave", "all-time"):
            continue  # favourites have their own shape
        found = _possessive(s.text, m.end(), s.end, owner or s.speaker, noun, catalog)
        if found is not None:
            yield found


def _possessive(text: str, start: int, end: int, subject: str, noun: str, catalog: Catalog) -> Found | None:
    words = noun.split()
    if len(words) == 2 and words[1] == "name" and words[0].endswith("'s"):
        relative = words[0][:-2]
        predicate = "has_pet" if relative in PETS else RELATIONS.get(relative)
        name = _value(text, start, end, "name") if predicate else None
        return Found(subject, predicate, name, "poss.relative-name") if predicate and name else None
    if len(words) == 1 and (noun in RELATIONS or noun in PETS):
        name = _value(text, start, end, "name")
        predicate = "has_pet" if noun in PETS else RELATIONS[noun]
        return Found(subject, predicate, name, "poss.relative") if name else None
    if "'" in noun or len(words) > 3 or {"and", "or", "of", "with"} & set(words):
        return None  # "my son's school is …" is about someone else; "my wife and I were …" too
    matched = catalog.match(noun)
    if matched is None or matched[0] in _NOT_POSSESSIVE:
        return None
    predicate = matched[0]
    value = _value(text, start, end, _VALUE_KIND.get(predicate, "np"))
    if value is None:
        return None
    return Found(subject, predicate, value, f"poss.{matched[1]}")


def favorites(s: Sentence, catalog: Catalog) -> Iterator[Found]:  # noqa: C901 — a cascade of rules read top to bottom; not yet split
    """ "my favourite X is Y" → favorite_<X> (or has_favorite "X: Y"); "Y is my favourite X"
    likewise."""
    if not s.has("my ", "our "):
        return
    for m in s.clause_matches(_FAVORITE_RE):
        skip = _DEICTIC_RE.match(s.text, m.end(), s.end)  # "my favourite treat is this chocolate tart"
        value = extract_object(s.text, skip.end() if skip else m.end(), s.end, "np")
        found = _favorite(m.group("owner") or s.speaker, m.group("cat") or "", value, catalog, "fav.possessive")
        if found is not None:
            yield found
    for m in s.clause_matches(_ONE_OF_RE):
        value = clean_object(m.group("val"), "np")
        found = _favorite(s.speaker, _singular(m.group("cat") or ""), value, catalog, "fav.one-of")
        if found is not None:
            yield found
    for m in s.clause_matches(_REVERSE_RE):
        noun = m.group("noun").casefold()
        value = clean_object(m.group("val"), "np")
        if value is None:
            continue
        if _FAVORITE_WORD_RE.search(m.group(0).casefold()) or noun in ("pick", "choice", "go-to"):
            category = "" if noun in ("favorite", "favourite", "fav", "fave", "pick", "choice", "go-to") else noun
            found = _favorite(s.speaker, category, value, catalog, "fav.reverse")
            if found is not None:
                yield found
        elif noun in ("passion", "passions"):
            yield Found(s.speaker, "passionate_about", value, "rev.passion")
        elif noun in ("hobby", "hobbies"):
            yield Found(s.speaker, "has_hobby", value, "rev.hobby")
        elif noun in ("motivation", "inspiration", "hero", "role model", "muse"):
            yield Found(s.speaker, "inspired_by", value, "rev.inspiration")
        elif noun in (
            "rock",
            "everything",
            "world",
            "strength",
            "anchor",
            "priority",
            "top priority",
        ):
            yield Found(s.speaker, "values", value, "rev.values")
        elif noun in ("jam", "thing"):
            yield Found(s.speaker, "loves", value, "rev.jam")
        elif noun in _OUTLETS:
            predicate = "has_hobby" if c.is_activity(value) else "values"
            yield Found(s.speaker, predicate, value, "rev.outlet")
        elif noun in RELATIONS and c.is_proper(value) and value.split()[0] not in NOT_NAMES:
            yield Found(s.speaker, RELATIONS[noun], value, "rev.relative")


def _singular(word: str) -> str:
    """ "cities" → "city", "books" → "book": the category of "one of my favourite books"."""
    if word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _favorite(subject: str, category: str, value: str | None, catalog: Catalog, rule: str) -> Found | None:
    if value is None:
        return None
    category = category.strip()
    if category and not c.favorite_category(category):
        return None
    matched = catalog.match(f"favorite {category}") if category else None
    predicate = matched[0] if matched else "has_favorite"
    if predicate == "has_favorite":
        return Found(subject, "has_favorite", f"{category}: {value}" if category else value, rule)
    return Found(subject, predicate, value, rule)


def relatives(s: Sentence, catalog: Catalog) -> Iterator[Found]:
    """ "my sister Anna" → has_sibling Anna; "my kids" → has_child kids (close family and pets
    only)."""
    if not s.has("my ", "our "):
        return
    for m in _RELATION_RE.finditer(s.text, s.start, s.end):
        rel = m.group("rel").casefold()
        predicate = "has_pet" if rel in PETS else RELATIONS[rel]
        name = m.group("name")
        if name and name.split()[0] not in NOT_NAMES:
            parts = name.split()
            yield Found(s.speaker, predicate, parts[0] if parts[-1] in NOT_NAMES else name, "relative.named")
        elif rel in MENTION_RELATIONS or rel in PETS:
            yield Found(s.speaker, predicate, pet_compound(s.text, m.group("rel"), m.end("rel")), "relative.mention")


def values(s: Sentence, catalog: Catalog) -> Iterator[Found]:  # noqa: C901 — a cascade of rules read top to bottom; not yet split
    """ "Family is everything to me"; "Nature inspires me".  "Your support means a lot" is about the
    listener.
    """
    if s.has(" to me", " to us"):  # "means a lot to me", "matters to me", "is important to me"
        for m in s.clause_matches(_VALUES_RE):
            if _continues_list(s.text, s.start, m.start()):
                continue
            value = clean_object(m.group("val"), "phrase")
            if value is not None and not _CLAUSE_WORDS_RE.search(value):
                yield Found(s.speaker, "values", value, "values")
    if s.has(" key", "essential", "crucial", "vital", "everything", "a must", "what matters", "important"):
        for m in s.clause_matches(_KEY_RE):
            if _continues_list(s.text, s.start, m.start()):
                continue
            value = clean_object(m.group("val"), "phrase")
            if value is not None and not _CLAUSE_WORDS_RE.search(value):
                yield Found(s.speaker, "values", value, "is-key")
    if not s.has("you", "congrat") and s.has(
        "rewarding",
        "fulfilling",
        "empowering",
        "therapeutic",
        "worth it",
        "amazing",
        "awesome",
        "fun",
        "relaxing",
        "healing",
        "inspiring",
        "meaningful",
        "calming",
        "freeing",
        "liberating",
        "my thing",
    ):
        for m in s.clause_matches(_PRAISE_RE):
            if _continues_list(s.text, s.start, m.start()):
                continue
            value = clean_object(m.group("val"), "phrase")
            if value and not _POINTED_SUBJECT_RE.match(m.group("val")) and not _CLAUSE_WORDS_RE.search(value):
                predicate = "likes" if c.is_activity(value) or m.group("how") == "my thing" else "values"
                yield Found(s.speaker, predicate, value, "praise")
    if s.has("difference", "keep", "bring"):
        for m in s.clause_matches(_MAKES_DIFFERENCE_RE):
            if _continues_list(s.text, s.start, m.start()):
                continue
            value = clean_object(m.group("val"), "phrase")
            if value and not _POINTED_SUBJECT_RE.match(m.group("val")):
                yield Found(s.speaker, "values", value, "makes-a-difference")
    if s.has("remind", "realize"):
        for m in _REMINDS_RE.finditer(s.text, s.start, s.end):
            value = clean_object(m.group("val"), "phrase")
            if value is not None:
                yield Found(s.speaker, "values", value, "reminds-me")
    if s.has("inspire"):
        for m in s.clause_matches(_INSPIRES_RE):
            value = clean_object(m.group("val"), "np")
            if value is not None:
                yield Found(s.speaker, "inspired_by", value, "inspires-me")
