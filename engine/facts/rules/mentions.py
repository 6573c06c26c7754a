"""Facts stated in passing, outside "I + verb": deadlines, broken things, feelings caused,
activities as subjects.

"The report is due next Friday", "My laptop keeps crashing", "It made me feel accepted", "Dancing
helps me de-stress", "Losing my job was a bummer", "my online store", "my passion for dance", "a
trip to Rome".
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from engine.facts.catalog import Catalog
from engine.facts.rules import classify as c, describe as d
from engine.facts.rules.lexicon import (
    CHAT_VERBS,
    FUTURE_RE,
    HOBBY_ACTIVITIES,
    NOT_NAMES,
    PETS,
    PLAN_RE,
    RELATIONS,
    word_set,
)
from engine.facts.rules.life.common import words_of
from engine.facts.rules.model import Found, Sentence
from engine.facts.rules.possessive import NAME
from engine.facts.rules.text import clean_object, extract_object

_FEEL_RE = re.compile(
    r"\b(?:makes?|made|making)\s+me\s+(?:feel\s+)?(?:so\s+|really\s+|very\s+|super\s+|truly\s+|"
    r"more\s+)*(?=[a-z])"
)
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)\w*"
_WHEN = (
    r"(?P<when>(?:(?:next|this|the\s+end\s+of(?:\s+the)?|end\s+of(?:\s+the)?)\s+\w+|"
    r"tomorrow(?:\s+(?:morning|"
    r"night|evening|afternoon))?|tonight|today|(?:on\s+)?(?:monday|tuesday|wednesday|thursday|"
    r"friday|saturday|"
    r"sunday)(?:\s+(?:morning|night|evening|afternoon))?|(?:on\s+)?(?:the\s+)?\d{1,2}(?:st|nd|rd|"
    r"th)?(?:\s+of)?"
    r"\s+" + _MONTH + r"(?:\s+\d{4})?|(?:on\s+)?" + _MONTH + r"\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?|"
    r"\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?|noon|midnight|in\s+(?:a|an|two|three|\d+)"
    r"\s+(?:days?|"
    r"weeks?|months?)))\b"
)
_DEADLINES = (
    (
        re.compile(
            r"\b(?:my|our|the)\s+(?P<task>(?:[\w'-]+\s+){0,4}?[\w'-]+)\s+(?:is|are|was)"
            r"\s+due\s+(?:on\s+|by\s+)?" + _WHEN,
            re.IGNORECASE,
        ),
        "deadline.due",
        "{task} due {when}",
    ),
    (
        re.compile(
            r"\b(?:my|our|the)\s+deadline\s+(?:for\s+(?P<task>[^,;.!?]{2,40}?)\s+)?(?:is|was|['’]s)"
            r"\s+(?:on\s+)?" + _WHEN,
            re.IGNORECASE,
        ),
        "deadline.is",
        "{task} by {when}",
    ),
    (
        re.compile(
            r"\b(?:I|we)\s*(?:need|have|has|['’]ve\s+got|got|gotta|must)\s+(?:to\s+)"
            r"?(?P<task>[^,;.!?]{3,60}?)\s+"
            r"(?:by|before)\s+" + _WHEN,
            re.IGNORECASE,
        ),
        "deadline.by",
        "{task} by {when}",
    ),
)
_BROKEN_RE = re.compile(
    r"\b(?:[Mm]y|[Oo]ur|[Tt]he)\s+(?P<issue>(?P<thing>[\w.+#'-]+(?:\s+[\w.+#'-]+){0,3}?)"
    r"\s+(?:(?:keeps|kept|"
    r"has\s+been|have\s+been|is|was|are)\s+(?:constantly\s+|randomly\s+|still\s+)?(?:crashing|"
    r"failing|freezing|"
    r"breaking|hanging|timing\s+out|disconnecting|rebooting|restarting|lagging|broken|"
    r"not\s+working|acting\s+up|"
    r"glitching)|(?:doesn['’]t|does\s+not|won['’]t|will\s+not|isn['’]t|stopped|can['’]t)"
    r"\s+(?:work(?:ing)?|"
    r"start(?:ing)?|load(?:ing)?|connect(?:ing)?|build(?:ing)?|compile|boot(?:ing)?|turn\s+on|"
    r"sync(?:ing)?)))\b"
)
_ISSUE_WORDS = (
    *word_set("crash fail freez brok hang timing disconnect reboot restart lagg n't n’t stopped glitch acting"),
    "not ",
)
_NICKNAME_RE = re.compile(
    r"\b(?i:everyone|everybody|people|my\s+friends|friends|they|most\s+people)\s+(?:usually\s+|"
    r"just\s+)?"
    r"calls?\s+me\s+(?P<name>" + NAME + r")"
)
_OWN_BUSINESS_RE = re.compile(
    r"\b(?:my|our)\s+(?:own\s+|new\s+|little\s+)*(?P<what>(?:[\w-]+\s+){0,2}?(?:business|biz|store|"
    r"shop|startup|"
    r"bakery|boutique|brand|clothing\s+line|youtube\s+channel|channel|podcast|blog|(?:dance|yoga|"
    r"fitness|pilates|"
    r"recording|tattoo)\s+studio|restaurant|cafe|café|salon|agency))\b(?!['’])(?!\s+(?:project|"
    r"plan|plans|idea|"
    r"ideas|partner|trip|card|class|course|school|degree|meeting|account|owner|owners|hours|skills)"
    r"\b)",
    re.IGNORECASE,
)
#: "starting my own business" is a plan; the business is not run yet.
_PLANNED_BUSINESS_RE = re.compile(r"\b(?:start|starting|open|opening|launch|launching|build|building|dream\s+of)\s+$")
#: "my ideal dance studio", "my dream shop" are wishes, not businesses that exist.
_IMAGINED_RE = re.compile(r"(?:ideal|dream|future|imaginary|perfect)\b", re.IGNORECASE)
_MY_WORK_RE = re.compile(
    r"\b(?:my|our)\s+(?:own\s+|new\s+|latest\s+|first\s+|recent\s+|next\s+)*(?P<what>(?:[\w-]+\s+)"
    r"?(?:screenplay|"
    r"screenplays|script|scripts|novel|album|mural|sculpture|sculptures|painting|paintings|poem|"
    r"poems|artwork|"
    r"drawings|podcast|blog|short\s+film|documentary|comic|webcomic|memoir|songs|choreography))"
    r"\b(?!['’])",
    re.IGNORECASE,
)
_PASSION_RE = re.compile(
    r"\b(?:[Mm]y|[Oo]ur)\s+(?:biggest\s+|real\s+|true\s+|deep\s+|huge\s+)?(?P<what>passion|love)"
    r"\s+(?:for|to|of|is)\s+"
)
_MADE_BY_ME_RE = re.compile(
    r"\b(?:[Tt]he|[Tt]his|[Tt]hese|[Aa]n?|[Mm]y|[Ss]ome)\s+(?P<what>(?:[\w'-]+\s+){0,3}?[\w'-]+)"
    r"\s+(?:that\s+)?"
    r"I(?:['’]ve)?\s+(?:just\s+|recently\s+|finally\s+)?(?P<verb>made|painted|baked|cooked|wrote|"
    r"built|knitted|drew|designed|"
    r"crafted|sewed|created|composed|sculpted|bought|adopted)\b"
)
_MEMBERSHIP_RE = re.compile(
    r"\b(?:my|our)\s+(?:new\s+|local\s+)?(?P<what>(?:[\w-]+\s+){0,2}?(?:club|team|band|choir|"
    r"league|crew|squad|"
    r"troupe|orchestra|congregation|(?<!my\s)(?<!our\s)(?<!age\s)(?<!blood\s)(?<!target\s)(?<!friend\s)group))"
    r"\b(?!['’])",
    re.IGNORECASE,
)
_EXPERIENCE_SUBJECT_RE = re.compile(
    r"(?P<what>[A-Z]?[a-z]+ing\b[^,;:.!?]{3,60}?)\s+(?:was|has\s+been)\s+(?:such\s+)?(?:(?:a|an)"
    r"\s+)?"
    r"(?:(?:so|really|super|truly|absolutely|pretty)\s+)?(?:awesome|amazing|great|incredible|"
    r"fantastic|fun|"
    r"rewarding|fulfilling|unforgettable|wonderful|special|memorable|eye-opening|life-changing|"
    r"tough|hard|"
    r"challenging|surreal|humbling|nerve-wracking|blast)\b(?:\s+(?:experience|time|moment|day|"
    r"adventure))?"
)
_FUN_RE = re.compile(
    r"\b(?:it['’]?s|it\s+is|it\s+was|it['’]s\s+been)\s+(?:always\s+|so\s+|really\s+|super\s+|"
    r"such\s+)?"
    r"(?:fun|relaxing|therapeutic|calming|enjoyable)\s+(?:(?:for\s+me\s+)?to\s+)?(?=[a-z])"
)
_DREAM_RE = re.compile(
    r"\b(?:it['’]?s|it\s+has|it\s+was|that['’]s|this\s+is)\s+(?:been\s+)?(?:a|my|our)"
    r"\s+(?:lifelong\s+|long-time\s+|"
    r"big\s+|real\s+)?dream\s+(?:of\s+mine\s+)?to\s+(?=[a-z])"
)
_IMPORTANT_RE = re.compile(
    r"\b(?:it['’]?s|it\s+is)\s+(?:so\s+|really\s+|very\s+|super\s+)?important\s+(?:to\s+me\s+)"
    r"?to\s+(?=[a-z])"
)
_TRIP_MENTION_RE = re.compile(
    r"\b(?:my|our|a|the)\s+(?:[\w-]+\s+)?(?:vacation|trip|holiday|honeymoon|getaway|visit)\s+(?:to|"
    r"in)\s+"
    r"(?P<place>[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+){0,2})"
)
_HOMELAND_RE = re.compile(
    r"\bmy\s+(?:home\s+country|hometown|home\s+town|birthplace|home\s+state)\s*,?\s+(?:of\s+|is\s+|"
    r"was\s+)?"
    r"(?P<place>[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+){0,2})"
)
_GOOD_DAY_RE = re.compile(
    r"\b(?:it\s+was|we\s+had|I\s+had|my|our)\s+(?:such\s+)?(?:an?\s+)?(?!(?:last|first)\s+day\b)(?:[\w-]+\s+){0,2}?(?:day|"
    r"time|night|weekend|evening|"
    r"afternoon|morning)\s+(?:at|in)\s+(?=\w)",
    re.IGNORECASE,
)
_AS_A_RE = re.compile(r"(?:[Aa]s\s+(?:a|an)\s+)(?P<what>(?:[\w-]+\s+){0,2}?[\w-]+)\s*,")
_CANT_HAVE_RE = re.compile(
    r"\bI\s+(?:(?:can['’]?t|cannot|can\s+not)\s+(?:really\s+)?(?:have|eat|drink|tolerate)|(?:don['’]?t|do\s+not)\s+"
    r"(?:really\s+)?(?:eat|drink))\s+(?!(?:any|a|an|the|my|much|that|this|it|them|anything)\b)"
    r"(?P<what>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\b(?=\s*(?:[,.;!]|$|\s+(?:so|because|anymore|and|since)\b))"
)
_TRIP_TAKEN_RE = re.compile(
    r"\b(?:a|the|that|this|our|my)\s+(?P<what>(?:[\w-]+\s+){0,2}?(?:trip|vacation|holiday|hike|"
    r"cruise|getaway|"
    r"adventure|tour|road\s+trip))\s+(?:that\s+)?(?:I|we)\s+(?:took|went\s+on|did|had)\b"
)
_INTERESTING_RE = re.compile(
    r"(?P<val>[^,;:.!?]{2,60}?)\s+(?:is|are)\s+(?:so\s+|really\s+|particularly\s+|super\s+|very\s+)"
    r"?"
    r"(?:interesting|fascinating)\s+to\s+me\b"
)
_COLLECTION_RE = re.compile(r"\bmy\s+(?!own\b)(?P<what>[\w-]+(?:\s+[\w-]+)?)\s+collection\b", re.IGNORECASE)
#: "My cork board is full of quotes", "my guitar needs new strings": a lasting possession named in passing — only
#: as the head of its phrase ("my guitar teacher" is someone else), never a wished-for one ("my dream bike").
_MY_THING_RE = re.compile(
    r"\b(?:my|our)\s+(?P<what>(?:(?!dream\b|ideal\b|future\b|next\b|old\b|former\b|first\b)[\w-]+\s+)?"
    r"(?:bike|bicycle|motorbike|motorcycle|scooter|piano|guitar|violin|cello|ukulele|drum\s+kit|keyboard|camera|"
    r"laptop|telescope|drone|kayak|canoe|cork\s*board|bookshelf|bookshelves|record\s+player|turntable|"
    r"sewing\s+machine|aquarium|greenhouse|treadmill|home\s+gym|tattoo|tattoos|vinyl\s+collection|garden|"
    r"gaming\s+(?:pc|setup|chair)|external\s+drive|hard\s+drive|e-reader|kindle|tablet|console))"
    r"(?=\s*(?:[,.;:!?)]|$|[-–—]|\s+(?:is|are|was|were|has|have|had|broke|crashed|needs|sits|hangs|looks|still|just|"
    r"and|but|so|in|on|at|from|that|which|with|for|to|got|keeps|takes|makes|gives|reminds|helps|always|never)\b))",
    re.IGNORECASE,
)
_MY_THING_GATE = frozenset(
    """bike bicycle motorbike motorcycle scooter piano guitar violin cello ukulele kit keyboard camera laptop telescope
    drone kayak canoe board corkboard bookshelf bookshelves player turntable machine aquarium greenhouse treadmill gym
    tattoo tattoos collection garden pc setup chair drive e-reader kindle tablet console""".split()
)
#: "I sold my bike", "if I had my own garden": the possession is gone or not real.
_DENIED_RE = re.compile(r"\b(?:sold|lost|gave\s+away|got\s+rid\s+of|if|wish|miss|without)\b[^.!?]*$", re.IGNORECASE)
_SHOWING_MINE_RE = re.compile(
    r"\b(?:here['’]s|here\s+is|this\s+is|these\s+are|meet)\s+(?:one\s+of\s+)?my\s+(?:new\s+)"
    r"?(?P<what>(?:[\w-]+\s+){0,2}?[\w-]+)"
    r"(?=\s*(?:[,.!;:]|$|\s+(?:-|–|—|from|for)\b))",
    re.IGNORECASE,
)
_NOT_POSSESSIONS = word_set(
    "pic picture photo photos pics shot snap attempt take favorite favourite point story way "
    "life day family friend friends journey progress work"
)
_WHILE_DOING_RE = re.compile(r"\bwhile\s+(?P<what>[a-z]+ing)\b")
_AFTER_EVENT_RE = re.compile(
    r"\b(?:[Aa]fter|[Ss]ince|[Bb]efore|[Ww]hen)\s+(?P<what>(?P<gerund>losing|quitting|graduating|"
    r"moving|leaving|"
    r"finishing|starting|getting|becoming|adopting|retiring|transitioning)\s+(?:my|our|a|an|the|"
    r"from|to|into|"
    r"married|engaged|divorced|promoted|here|back)\b[^,;:.!?]{0,40})"
)
_FUELS_RE = re.compile(
    r"(?P<val>[^,;:.!?]{2,60}?)\s+(?:always\s+|really\s+)?(?:fuels?|feeds?|sparks?)\s+(?:my|our)\s+"
    r"(?:creativity|imagination|passion|soul)\b"
)
_FIRST_PERSON_RE = re.compile(r"\b(?:I|I'm|I've|my|me|we|our|us)\b")
_HOBBY_SUBJECT_RE = re.compile(
    r"(?P<what>(?P<gerund>[A-Za-z]+ing)(?:\s+(?!is\b|was\b|has\b|helps\b|makes\b)[\w'-]+){0,5}?)"
    r"(?:['’]s|\s+(?:is|was|"
    r"has\s+(?:always\s+)?been|has\s+become|helps|helped|makes|made|keeps|gives|gave|brings|lets|"
    r"means|calms|"
    r"relaxes))\s+(?=[^.!?]*\b(?:me|my|I)\b)"
)
_NEGATED_NEXT_RE = re.compile(
    r"(?:not|never|n['’]t)\b|(?:(?:definitely|still|also|high)\s+)?on\s+my\s+[\w-]+\s+list\b", re.IGNORECASE
)
_PART_OF_LIFE_RE = re.compile(
    r"(?P<val>[^,;:.!?]{2,40}?)\s+(?:is|has\s+(?:always\s+)?been|was)\s+(?:such\s+)?(?:a|an)"
    r"\s+(?:big\s+|huge\s+|"
    r"important\s+|key\s+|special\s+|major\s+)?part\s+of\s+(?:my|our)\s+(?:life|lives|identity|"
    r"routine|family)\b"
)
_EVENT_SUBJECT_RE = re.compile(
    r"(?P<what>(?P<gerund>[Ll]osing|[Ww]inning|[Ff]inishing|[Gg]raduating|[Aa]dopting|[Qq]uitting|"
    r"[Ll]eaving|"
    r"[Mm]oving|[Ss]tarting|[Bb]ecoming|[Gg]etting)\s+(?:my|our|a|an|the|this|that|into|out|to|"
    r"back|first|"
    r"married|engaged|promoted)\b[^,;:.!?]{0,40}?)\s+(?:was|has\s+been|is|felt|made|changed|taught|"
    r"gave|pushed)\b"
)
#: Gerund subjects that are not something the speaker did ("Seeing you happy was great").
_NOT_EXPERIENCES = word_set(
    "seeing hearing knowing having being getting reading watching thinking feeling talking chatting"
)
_RELATIVE_WORDS = frozenset(RELATIONS) | PETS
_EVENT_GERUNDS = {"winning": "achieved", "graduating": "achieved", "finishing": "finished"}
_HOBBY_GERUNDS = word_set(
    "painting drawing sketching reading writing dancing cooking baking gardening knitting "
    "crocheting sewing hiking running jogging swimming surfing camping fishing singing gaming "
    "skating climbing cycling biking kayaking sailing skiing snowboarding woodworking journaling "
    "blogging traveling travelling meditating sculpting volunteering playing composing "
    "photographing"
)


def feelings(s: Sentence, catalog: Catalog) -> Iterator[Found]:
    """ "It made me feel accepted" / "painting makes me so happy" → feels."""
    if not s.has(" me "):
        return
    for m in _FEEL_RE.finditer(s.text, s.start, s.end):
        value = extract_object(s.text, m.end(), s.end, "np")
        if value and d.felt(value):
            yield Found(s.speaker, "feels", value, "made-me-feel")


def deadlines(s: Sentence, catalog: Catalog) -> Iterator[Found]:
    """ "The report is due next Friday", "my deadline is May 3", "I need to submit it by Monday"."""
    if not s.has(" due", "deadline", " by ", " before "):
        return
    for pattern, rule, shape in _DEADLINES:
        for m in pattern.finditer(s.text, s.start, s.end):
            task = clean_object(m.group("task"), "phrase") if m.group("task") else None
            when = m.group("when").strip()
            yield Found(
                s.speaker,
                "has_deadline",
                shape.format(task=task, when=when) if task else when,
                rule,
            )


def issues(s: Sentence, catalog: Catalog) -> Iterator[Found]:
    """ "My laptop keeps crashing", "the build won't compile" → reported_issue; "everyone calls me
    Jo"."""
    if s.has(*_ISSUE_WORDS):
        for m in _BROKEN_RE.finditer(s.text, s.start, s.end):
            if clean_object(m.group("thing"), "np") is not None:
                yield Found(s.speaker, "reported_issue", m.group("issue"), "issue.broken")
    if s.has("call"):
        for m in _NICKNAME_RE.finditer(s.text, s.start, s.end):
            yield Found(s.speaker, "has_nickname", m.group("name"), "nickname")


def everyday(s: Sentence, catalog: Catalog) -> Iterator[Found]:  # noqa: C901 — a cascade of rules read top to bottom; not yet split
    """Mentions that state a fact in passing: "my online store", "my passion for dance", "a trip to
    Rome".
    """
    text, start, end = s.text, s.start, s.end
    if s.has("my ", "our "):
        for m in _OWN_BUSINESS_RE.finditer(text, start, end):
            obj = clean_object(m.group("what"), "np")
            if (
                obj
                and not _IMAGINED_RE.match(obj)
                and not _PLANNED_BUSINESS_RE.search(text, max(start, m.start() - 30), m.start())
            ):
                yield Found(s.speaker, "runs_business", obj, "mention.business")
        for m in _MY_WORK_RE.finditer(text, start, end):
            obj = clean_object(m.group("what"), "np")
            if obj:
                yield Found(s.speaker, "created", obj, "mention.work")
        for m in _PASSION_RE.finditer(text, start, end):
            obj = extract_object(text, m.end(), end, "np")
            if obj:
                predicate = "loves" if m.group("what") == "love" else "passionate_about"
                yield Found(s.speaker, predicate, obj, "mention.passion")
    if s.has(
        " i made",
        " i painted",
        " i baked",
        " i cooked",
        " i wrote",
        " i built",
        " i knitted",
        " i drew",
        " i designed",
        " i crafted",
        " i sewed",
        " i created",
        " i composed",
        " i sculpted",
        " i've made",
        " i bought",
        " i adopted",
    ):
        for m in _MADE_BY_ME_RE.finditer(text, start, end):
            obj = clean_object(m.group("what"), "np")
            if obj:
                verb = m.group("verb").casefold()
                predicate = {"bought": "owns", "adopted": "has_pet"}.get(verb, "created")
                yield Found(s.speaker, predicate, obj, "mention.made")
    if s.has("my ", "our "):
        for m in _MY_THING_RE.finditer(text, start, end) if not words_of(s.low).isdisjoint(_MY_THING_GATE) else ():
            obj = clean_object(m.group("what"), "np")
            if obj and not _DENIED_RE.search(text, max(start, m.start() - 20), m.start()):
                yield Found(s.speaker, "owns", obj, "mention.my-thing")
        for m in _MEMBERSHIP_RE.finditer(text, start, end):
            obj = clean_object(m.group("what"), "np")
            if obj:
                yield Found(s.speaker, "member_of", obj, "mention.member")
    if s.has("fun", "relax", "therap", "calming", "enjoyable"):
        for m in _FUN_RE.finditer(text, start, end):
            obj = extract_object(text, m.end(), end, "phrase")
            if obj and obj.split()[0].casefold() not in CHAT_VERBS:
                yield Found(s.speaker, "likes", obj, "it-is-fun")
    if s.has("dream to", "dream of mine to"):
        for m in _DREAM_RE.finditer(text, start, end):
            obj = extract_object(text, m.end(), end, "phrase")
            if obj:
                yield Found(s.speaker, "goal", obj, "dream-to")
    if s.has("important"):
        for m in _IMPORTANT_RE.finditer(text, start, end):
            obj = extract_object(text, m.end(), end, "phrase")
            if obj:
                yield Found(s.speaker, "values", obj, "it-is-important")
    if s.has("my home", "my birthplace"):
        for m in _HOMELAND_RE.finditer(text, start, end):
            yield Found(s.speaker, "is_from", m.group("place"), "mention.homeland")
    if s.has(" day ", " time ", " night ", " weekend ", " evening ", " afternoon ", " morning ") and s.has(
        " at ", " in "
    ):
        for m in _GOOD_DAY_RE.finditer(text, start, end):
            obj = extract_object(text, m.end(), end, "np")
            choice = c.destination(obj) if obj else None
            if obj and choice is not None:
                name, obj = choice if isinstance(choice, tuple) else (choice, obj)
                yield Found(s.speaker, name, obj, "mention.day-out")
    if s.has("trip", "vacation", "holiday", "honeymoon", "getaway", "visit") and _FIRST_PERSON_RE.search(
        text, start, end
    ):
        ahead = PLAN_RE.search(text, start, end) is not None or FUTURE_RE.search(text, start, end) is not None
        for m in _TRIP_MENTION_RE.finditer(text, start, end):
            place = m.group("place")
            if place.split()[0] not in NOT_NAMES:
                # a trip being planned is a place to visit, not one visited
                if ahead:
                    yield Found(s.speaker, "plans_to_visit", place, "mention.trip-plan")
                else:
                    yield Found(s.speaker, "visited", place, "mention.trip")


def asides(s: Sentence, catalog: Catalog) -> Iterator[Found]:  # noqa: C901 — a cascade of rules read top to bottom; not yet split
    """ "As a writer, …", "I can't have dairy", "a road trip we took", "X is interesting to me", "my
    stamp collection".
    """
    text, start, end = s.text, s.start, s.end
    if s.low.startswith("as a"):
        m = _AS_A_RE.match(text, start, end)
        choice = d.describe_self(m.group("what")) if m else None
        if m and choice is not None:
            name, obj = choice if isinstance(choice, tuple) else (choice, m.group("what"))
            yield Found(s.speaker, name, obj, "as-a")
    if s.has("can't", "cant", "cannot", "can not", "don't", "dont", "do not"):
        for m in _CANT_HAVE_RE.finditer(text, start, end):
            if m.group("what").casefold() not in (
                "it",
                "that",
                "this",
                "them",
                "much",
                "anything",
                "any",
            ):
                yield Found(s.speaker, "diet", f"no {m.group('what')}", "cant-have")
    if s.has(" took", " went on", " did", " had"):
        for m in _TRIP_TAKEN_RE.finditer(text, start, end):
            obj = clean_object(m.group("what"), "np")
            if obj:
                yield Found(s.speaker, "did_activity", obj, "trip-taken")
    if s.has("interesting to me", "fascinating to me"):
        for m in s.clause_matches(_INTERESTING_RE):
            obj = clean_object(m.group("val"), "phrase")
            if obj:
                yield Found(s.speaker, "interested_in", obj, "interesting-to-me")
    if s.has("here", "this is", "these are", "meet my"):
        for m in _SHOWING_MINE_RE.finditer(text, start, end):
            obj = clean_object(m.group("what"), "np")
            if obj and c.words(obj)[-1] not in _NOT_POSSESSIONS and not set(c.words(obj)) & _RELATIVE_WORDS:
                yield Found(s.speaker, "owns", obj, "showing-mine")
    if s.has("after ", "since ", "before ", "when "):
        for m in _AFTER_EVENT_RE.finditer(text, start, end):
            obj = clean_object(m.group("what"), "np")
            if obj:
                predicate = _EVENT_GERUNDS.get(m.group("gerund"), "experienced")
                yield Found(s.speaker, predicate, obj, "after-event")
    if s.has("while "):
        for m in _WHILE_DOING_RE.finditer(text, start, end):
            if m.group("what") in HOBBY_ACTIVITIES:
                yield Found(s.speaker, "did_activity", m.group("what"), "while-doing")
    if s.has("fuel", "feed", "spark"):
        for m in s.clause_matches(_FUELS_RE):
            obj = clean_object(m.group("val"), "phrase")
            if obj and obj.split()[0].casefold() not in ("it", "this", "that", "your", "they"):
                yield Found(s.speaker, "likes", obj, "fuels-me")
    if s.has(" collection"):
        for m in _COLLECTION_RE.finditer(text, start, end):
            obj = clean_object(m.group("what"), "np")
            if obj:
                yield Found(s.speaker, "collects", obj, "mention.collection")


def subject_phrases(s: Sentence, catalog: Catalog) -> Iterator[Found]:
    """Clauses whose subject is an activity or an event: "Dancing helps me de-stress", "Losing my
    job was hard".
    """
    if s.has("ing"):
        for m in s.clause_matches(_HOBBY_SUBJECT_RE):
            if _NEGATED_NEXT_RE.match(s.text, m.end(), s.end):
                continue  # "Running is not something I enjoy", "surfing is on my bucket list"
            if m.group("gerund").casefold() in _HOBBY_GERUNDS:
                obj = clean_object(m.group("what"), "phrase")
                if obj:
                    yield Found(s.speaker, "has_hobby", obj, "hobby-subject")
        for m in s.clause_matches(_EVENT_SUBJECT_RE):
            obj = clean_object(m.group("what"), "phrase")
            if obj:
                predicate = _EVENT_GERUNDS.get(m.group("gerund").casefold(), "experienced")
                yield Found(s.speaker, predicate, obj, "event-subject")
    if s.has("ing "):
        for m in s.clause_matches(_EXPERIENCE_SUBJECT_RE):
            obj = clean_object(m.group("what"), "phrase")
            if obj and m.group("what").split()[0].casefold() not in _NOT_EXPERIENCES:
                yield Found(s.speaker, "did_activity", obj, "experience-subject")
    if s.has("part of"):
        for m in s.clause_matches(_PART_OF_LIFE_RE):
            obj = clean_object(m.group("val"), "np")
            if obj:
                yield Found(s.speaker, "values", obj, "part-of-life")
