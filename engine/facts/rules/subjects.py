"""Who a clause is about: "I", "we", "my wife and I", "my sister Anna", "Caroline", or nobody said.

Chat drops "I" ("Started hitting the gym last week", "Been painting a lot", "Gonna explore more"),
and a coordinated clause shares the previous one's subject ("Caroline adopted a dog and went …").
These functions read the subject at a clause start, the dropped subject a bare verb form implies,
and the shared subject a coordinated past-tense verb inherits — and refuse when the words are more
likely a noun ("Training will push dancers") or a fragment about the listener ("Taking in kids in
need - you're so kind").
"""

from __future__ import annotations

import re

from engine.facts.rules.lexicon import (
    COMMON_NOUNS,
    EMOTIONS,
    NOT_NAMES,
    NOT_PAST_ED,
    PAST_FORMS_TEXT,
    RELATIONS,
    word_set,
)
from engine.facts.rules.model import Person

_REL_WORDS = "|".join(sorted((re.escape(w) for w in RELATIONS), key=len, reverse=True))
_NAME = r"[A-Z][a-zà-ỹ]+(?:[-'][A-Z][a-zà-ỹ]+)?"
_I_RE = re.compile(r"(?P<i>[Ii])(?=['’]|\s)|(?P<im>[Ii]m)\s|(?P<ive>[Ii]ve)\s")
_WE_RE = re.compile(r"[Ww]e(?=['’]|\s)")
_COMPOUND_RE = re.compile(
    r"(?:(?:my|our|the)\s+(?:\w+\s+){0,2}?\w+|" + _NAME + r"|[Mm]e)\s+and\s+(?:I|me|i)(?=['’]|\s)"
    r"|(?:[Mm]e|I)\s+and\s+(?:my|our|the)\s+(?:\w+\s+){0,2}?\w+(?=\s)",
)
_RELATIVE_RE = re.compile(
    r"(?:[Mm]y|[Oo]ur)\s+(?:(?:little|big|older|younger|oldest|youngest|eldest|baby|twin|best|new|"
    r"dear|"
    r"lovely|sweet|amazing|awesome|close|good|old)\s+)*(?P<rel>" + _REL_WORDS + r"),?\s+"
    r"(?P<name>" + _NAME + r"(?:\s" + _NAME + r")?)(?:,(?=\s))?(?=\s)",
)
_NAMED_RE = re.compile(r"(?P<name>" + _NAME + r"(?:\s" + _NAME + r")?)(?=\s+[a-z])")


Subject = tuple[str, Person, int, tuple[str, str] | None, str]


def subject(text: str, p: int, end: int, speaker: str) -> Subject | None:
    """The subject written at ``p`` ("I", "we", "my wife and I", "my sister Anna", "Caroline") as (name, person,
    end, relation, implied verb); None when there is none the rules can attribute."""
    m = _I_RE.match(text, p, end)
    if m:
        if m.group("im"):
            return speaker, "first", m.end("im"), None, "am"  # "im" written for "I'm"
        if m.group("ive"):
            return speaker, "first", m.end("ive"), None, "have"
        return speaker, "first", m.end(), None, ""
    m = _COMPOUND_RE.match(text, p, end)
    if m:
        return speaker, "we", m.end(), None, ""
    m = _WE_RE.match(text, p, end)
    if m:
        return speaker, "we", m.end(), None, ""
    m = _RELATIVE_RE.match(text, p, end)
    if m:
        name = m.group("name")
        if name.split()[0] in NOT_NAMES:
            return None
        return name, "third", m.end(), (RELATIONS[m.group("rel").casefold()], name), ""
    m = _NAMED_RE.match(text, p, end)
    if m and not _DROP_RE.match(text, p, end):
        words = m.group("name").split()
        if words[0] in NOT_NAMES or words[0].endswith("ing"):
            return None
        if len(words) > 1 and words[1] in NOT_NAMES:
            words = words[:1]
        name = " ".join(words)
        if not _is_name(text, p + len(name), end, words):
            return None
        return name, "third", p + len(name), None, ""
    return None


#: A third-person statement about someone is "<Name> <finite verb>"; what follows a capitalised
#: sentence opener that is not a verb ("Way to go", "Pets bring …", "Appreciate your offer") shows
#: it is no name.
_FINITE_RE = re.compile(
    r"\s+(?:(?:really|also|just|recently|finally|actually|still|now|always|never|totally|even)\s+)*"
    r"(?:is|was|has|had|does|did|will|can|could|would|should|may|might|must|isn['’]t|wasn['’]t|"
    r"hasn['’]t|"
    r"doesn['’]t|didn['’]t|won['’]t|can['’]t|[a-z]+(?<!s)s|[a-z]+ed|"
    + "|".join(sorted(PAST_FORMS_TEXT.split()))
    + r")\b"
)


def _is_name(text: str, p: int, end: int, words: list[str]) -> bool:
    """True when capitalised words at a clause start read as a name followed by its verb."""
    if any(w.casefold() in COMMON_NOUNS for w in words):
        return False
    return _FINITE_RE.match(text, p, end) is not None


_GERUND_START_RE = re.compile(r"(?:(?:just|also|still|now|currently|recently|finally)\s+)*(?P<word>[A-Za-z]+ing)\b")
_AFTER_COMMA_RE = re.compile(r"[,–—-]\s*$")
_LEADING_ADVERB_RE = re.compile(r"(?:just|also|still|now|currently|recently|finally)\b", re.IGNORECASE)
_DROP_RE = re.compile(
    r"(?:(?:just|finally|also|recently|actually|really|totally|already|still|officially)\s+)*"
    r"(?P<word>been|gonna|gotta|can['’]?t|didn['’]?t(?=\s+(?!(?:you|he|she|it|they|we|i|that|this)\b)[a-z])|was(?=\s+(?!(?:it|that|this|there|he|she|you|they|we|i)\b)[a-z])|"
    r"going\s+to(?=\s+(?!the\b|a\b|an\b|my\b|our\b|see\b)"
    r"[a-z]+\b)|"
    r"started|finished|went|took|got|visited|attended|joined|signed|bought|adopted|tried|made|"
    r"painted|wrote|"
    r"moved|won|spent|volunteered|learned|learnt|baked|cooked|met|ran|hiked|watched|organized|"
    r"organised|"
    r"hosted|applied|submitted|completed|picked|checked|had|loved|enrolled|graduated|celebrated|"
    r"planning|thinking|heading|headed|working|trying|hoping|finishing|looking|getting|taking|"
    r"learning|reading|writing|painting|training|saving|studying|preparing|considering|busy)\b",
    re.IGNORECASE,
)


#: A finite verb after a gerund phrase ("Taking care of yourself helps …", "Writing brings joy")
#: makes the gerund the subject, not a verb of a dropped "I".
_NOUN_GERUND_RE = re.compile(
    r"(?:,?\s+[\w'’-]+){0,14}?(?:,?\s+(?:is|was|will|would|has|had|can|could|should|must|might|may|"
    r"helps|helped|"
    r"makes|made|keeps|"
    r"gives|gave|brought|taught|showed|changed|are|were|takes|means|brings|lets|feels|seems|sounds|"
    r"looks|matters|becomes|reminds|reminded|inspires|inspired|motivates|fascinates|calms|relaxes|"
    r"gets|puts|allows|requires|needs|costs|isn['’]t|"
    r"wasn['’]t|doesn['’]t|"
    r"that)|['’]s)\b",
    re.IGNORECASE,
)
_OTHER_SUBJECT_RE = re.compile(
    r"(?:(?:and|but|so|also|plus|well|oh|yeah|yes)[\s,]+)*(?:you|you['’](?:re|ll|ve|d)|he|she|they|"
    r"it|it['’]s|this|"
    r"that|that['’]s|there|there['’]s|let['’]s|people|everyone)\b",
    re.IGNORECASE,
)


def other_subject(text: str, pos: int, end: int) -> bool:
    """True when the clause at ``pos`` has a subject other than the speaker ("you …", "it …", "let's
    …").
    """
    return _OTHER_SUBJECT_RE.match(text, pos, end) is not None


#: "Taking in kids in need - you're so kind": a fragment about the listener, not a dropped "I".
#: -ing words that open a sentence without being an activity of a dropped "I": prepositions
#: ("During the holidays, …"), pronouns and nouns ("Nothing beats …", "Morning runs …") and
#: reactions ("Stunning photo!").
_NOT_VERB_ING = word_set(
    """
    during according including regarding concerning following excluding nothing something anything
    everything morning evening thing king ring spring string wedding building ceiling sibling
    darling pudding amazing stunning interesting exciting inspiring touching charming boring
    outstanding fascinating refreshing heartwarming heartbreaking breathtaking relaxing rewarding
    satisfying surprising annoying frustrating depressing uplifting encouraging disappointing
    terrifying embarrassing overwhelming promising thrilling astonishing loving caring willing
    """
)
_TO_LISTENER_RE = re.compile(r"\byou(?:['’]re|['’]ve|\s+are|\s+have)?\b", re.IGNORECASE)


def dropped_subject(text: str, p: int, end: int, implicit: tuple[str, Person], chained: bool) -> Subject | None:
    """A clause that starts with a verb form only a dropped "I" explains ("Been busy", "Went
    hiking")."""
    m = _DROP_RE.match(text, p, end) or _GERUND_START_RE.match(text, p, end)
    if not m:
        return None
    word = m.group("word").casefold().replace("’", "'")
    at = m.start("word")
    subject, person = implicit
    if word.startswith("going") and _NOUN_GERUND_RE.match(text, m.end("word"), end):
        return None  # "Going to community meetings … has given me …": a gerund subject
    if word in ("gonna", "gotta", "can't", "cant", "didn't", "didnt") or word.startswith("going"):
        implied = {"can't": "can't", "cant": "can't", "didnt": "didn't"}.get(
            word, "going to" if word.startswith("going") else word
        )
        return subject, person, m.end("word"), None, implied
    if word == "been":
        return subject, person, at, None, "have"
    if word == "was":
        # "Was super nervous last week": only a sentence may open so; after "and" the subject is the clause's own
        return (subject, person, m.end("word"), None, "was") if not chained else None
    if word == "busy":
        return subject, person, at, None, "am"  # "Busy with studies but …"
    if word.endswith("ing"):
        # After "and", an -ing word is as often an adjective or a noun ("a safe and loving home");
        # only an adverb ("…, just learning the piano") or the start of the sentence makes it a verb
        # with a dropped "I".
        led = m.start("word") > p
        if (
            (chained and not led)
            or _NOUN_GERUND_RE.match(text, m.end("word"), end)
            or _TO_LISTENER_RE.search(text, m.end("word"), end)
            or word in ("growing", "speaking", "talking", "thinking", "looking", "considering", "given")
            or word in _NOT_VERB_ING
        ):
            return None  # "… and training will push you": the gerund is a noun subject here
        return subject, person, at, None, "am"
    return subject, person, at, None, ""


_PAST_VERB_RE = re.compile(r"(?P<word>[a-z]+ed|" + "|".join(sorted(PAST_FORMS_TEXT.split())) + r")\b")


def shared_subject(text: str, p: int, end: int, implicit: tuple[str, Person]) -> Subject | None:
    """A coordinated past-tense verb shares the previous clause's subject ("we chilled …, played
    games").
    """
    m = _PAST_VERB_RE.match(text, p, end)
    if not m or m.group("word") in NOT_PAST_ED or m.group("word") in EMOTIONS:
        return None  # "excited and scared to …": an adjective, not a verb sharing the subject
    subject, person = implicit
    return subject, person, p, None, ""


def led_by_adverb_or_comma(text: str, clause_start: int, p: int) -> bool:
    """True when a clause opens with an adverb ("…, just learning the piano") or follows a comma
    or dash: then a bare "-ing" form is a verb sharing the subject, not an adjective ("safe and
    loving")."""
    return (
        _LEADING_ADVERB_RE.match(text, clause_start, p) is not None
        or _AFTER_COMMA_RE.search(text, 0, clause_start) is not None
    )
