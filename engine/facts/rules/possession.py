"""Rules for "I have …", "I've got …", "I had …" clauses: what someone has, got, or went through.

"I have type 2 diabetes", "I've got a chess tournament next month", "I got promoted", "I had a
picnic with friends from church", "I've always had a love for horses" — what is had decides the
predicate; "got" (acquired, happened) and "had" (past) read differently from "have".
"""

from __future__ import annotations

from engine.facts.rules import classify as c, describe as d
from engine.facts.rules.lexicon import EVENT_NOUNS, FUTURE_RE
from engine.facts.rules.model import PERSONS_ONE, Choice, Rule, Tense, rule

_PAST: frozenset[Tense] = frozenset({"past"})
_EVENTISH = "|".join(
    sorted(
        EVENT_NOUNS
        | {
            "interview",
            "appointment",
            "exam",
            "test",
            "recital",
            "flight",
            "surgery",
            "date",
            "trip",
            "deadline",
            "checkup",
            "check-up",
            "audition",
            "shift",
        },
        key=len,
        reverse=True,
    )
)


def _event(obj: str) -> Choice:
    """An appointment or occasion with a time ("a job interview on Thursday"); timeless ones are
    dropped.
    """
    if FUTURE_RE.search(obj) is None and not c.looks_like_date(obj):
        return None
    return "has_deadline" if "deadline" in obj.casefold() else "has_event"


def _business(obj: str) -> Choice:
    if "favorite" in obj.casefold() or "favourite" in obj.casefold() or "local" in obj.casefold():
        return None
    return c.business(obj)


HAVE_RULES: tuple[Rule, ...] = (
    rule(
        "got.promoted",
        "promoted a an this the hired accepted into noticed recognized recognised featured selected nominated",
        r"(?<=got )(?=(?:promoted|a\s+promotion|hired|(?:an?|this|the)\s+(?:[\w-]+\s+)"
        r"{0,2}?(?:deal|sponsorship|"
        r"endorsement|contract|scholarship)\b|"
        r"a\s+contract|noticed|recognized|recognised|featured|selected|nominated|"
        r"accepted|into\s+(?:(?-i:[A-Z])|(?:a|an|the|my)\s+(?:[\w-]+\s+)?(?:college|university|"
        r"school|program|"
        r"programme|academy|conservatory)\b)))",
        "achieved",
        "phrase",
        mode="have",
    ),
    rule(
        "got.win",
        "the a first an this",
        r"(?<=got )(?=(?:the\s+win|a\s+win|first\s+place|an?\s+award|a\s+scholarship|"
        r"a\s+medal|a\s+trophy|the\s+job|the\s+part|the\s+role|a\s+raise|an?\s+(?:\w+\s+)?offer)\b)",
        "achieved",
        "np",
        mode="have",
    ),
    rule(
        "have.love-for",
        "a an",
        r"(?:a|an)\s+(?:real\s+|deep\s+|great\s+|huge\s+|big\s+|special\s+|strong\s+)?"
        r"(?=(?:love|passion|soft\s+spot|interest|fear|respect|talent|knack|fondness)\s+(?:for|of|"
        r"in)\s)",
        d.fondness,
        "phrase",
        mode="have",
        tenses=frozenset({"present", "past", "perfect"}),
    ),
    rule("got.done", "done", r"(?<=got )done\s+(?=[a-z]+ing\b)", "finished", "phrase", mode="have"),
    rule(
        "got.back",
        "back",
        r"(?<=got )back\s+from\s+",
        c.photo_place,
        "np",
        mode="have",
        tenses=frozenset({"present", "past"}),
    ),
    rule(
        "got.married",
        "married engaged divorced",
        r"(?<=got )(?=(?:married|engaged|divorced)\b)",
        "relationship_status",
        "np",
        mode="have",
        change=True,
        persons=PERSONS_ONE,
    ),
    rule(
        "got.injured",
        "injured hurt",
        r"(?<=got )(?=(?:injured|hurt)\b)",
        "has_injury",
        "phrase",
        mode="have",
    ),
    rule(
        "got.gear",
        "some new",
        r"(?<=got )(?:some|new)\s+(?=(?:[\w-]+\s+){0,5}?(?:gear|equipment|kit)\b)",
        c.bought,
        "np",
        mode="have",
    ),
    rule(
        "got.job",
        "a new job",
        r"(?:a\s+)?(?:new\s+)?job\s+(?:at|with)\s+",
        c.work_place,
        "np",
        mode="have",
        change=True,
        persons=PERSONS_ONE,
    ),
    rule(
        "have.allergy-to",
        "",
        r"(?:an?\s+)?(?:severe\s+|mild\s+|bad\s+)?allerg(?:y|ies)\s+to\s+",
        "has_allergy",
        "phrase",
        mode="have",
    ),
    rule(
        "have.condition",
        "",
        r"(?:(?:a|an|the)\s+)?(?=(?:[\w'-]+\s+){0,2}?[\w'-]+\b)",
        d.condition,
        "np",
        mode="have",
        persons=PERSONS_ONE,
    ),
    rule(
        "have.degree",
        "a an",
        r"(?:a|an)\s+(?=(?:[\w'-]+\s+){0,3}?(?:degree|diploma|bachelor'?s|master'?s|"
        r"phd|doctorate|mba|certificate|certification)\b)",
        "has_degree",
        "phrase",
        mode="have",
        persons=PERSONS_ONE,
    ),
    rule(
        "have.event",
        "",
        r"(?:a|an|my|our|the|this|two|three)\s+(?=(?:[\w'-]+\s+){0,3}?(?:" + _EVENTISH + r")\b)",
        _event,
        "event",
        mode="have",
    ),
    rule(
        "have.business",
        "my a an",
        r"(?:my\s+own|a|an)\s+",
        _business,
        "np",
        mode="have",
        persons=PERSONS_ONE,
    ),
    rule(
        "have.regular",
        "regular weekly monthly daily",
        r"(?:regular|weekly|monthly|daily)\s+(?=\w)",
        "does_regularly",
        "np",
        mode="have",
    ),
    rule(
        "have.possession",
        "a an my two three the",
        r"(?:a|an|my\s+own|two|three|(?<=got\s)the)\s+(?=(?:[\w'-]+\s+){0,3}?"
        r"(?:car|truck|bike|bicycle|motorcycle|scooter|house|apartment|condo|boat|cabin|piano|"
        r"guitar|violin|"
        r"camera|laptop|telescope|record\s+player|drone|kayak|van|garden|backyard|pool|printer|painting|tattoo|"
        r"plaque|bookshelf|cork\s*board|drum\s+kit|keyboard|sewing\s+machine|aquarium|greenhouse|treadmill|"
        r"home\s+gym|studio|vinyl\s+collection|collection|external\s+drive|hard\s+drive|tablet|console|e-reader|"
        r"kindle)\b)",
        "owns",
        "np",
        mode="have",
    ),
    rule(
        "have.many",
        "lots a plenty tons so many",
        r"(?:lots\s+of|a\s+lot\s+of|plenty\s+of|tons\s+of|so\s+many|many|a\s+bunch\s+of)\s+(?=(?:[\w'’-]+\s+){0,3}?"
        r"(?:books|records|vinyls|plants|tattoos|guitars|instruments|paintings|cameras|bikes|sneakers|comics|"
        r"board\s+games|cookbooks|novels|figurines|plushies|houseplants)\b)",
        "owns",
        "np",
        mode="have",
    ),
    rule(
        "had.achievement",
        "a an my",
        r"(?=(?:a|an|my)\s+(?:[\w-]+\s+){0,2}?(?:career-high|career\s+high|personal\s+best|personal\s+record|"
        r"breakthrough|milestone)\b)",
        "achieved",
        "np",
        mode="have",
        tenses=_PAST,
    ),
    rule(
        "had.hard-time",
        "a an some trouble difficulty difficulties",
        r"(?=(?:(?:a|an|some)\s+(?:(?:really|very|pretty|super|bit\s+of\s+a)\s+)?(?:tough|hard|rough|difficult|"
        r"stressful)\s+(?:time|patch|weeks?|months?|year)|(?:some\s+|a\s+lot\s+of\s+|a\s+bit\s+of\s+)?"
        r"(?:trouble|difficulty|difficulties)\s+(?:with|figuring|getting|finding|making|adjusting|settling))\b)",
        "experienced",
        "phrase",
        mode="have",
        tenses=_PAST,
    ),
    rule(
        "had.experience",
        "",
        r"(?=(?:(?:a|an|my)\s+)?(?:bit\s+of\s+a\s+)?(?:[\w-]+\s+){0,2}?(?:surgery|operation|accident|scare|"
        r"injury|flood|fire|break-in|emergency|(?:writing|health|car|money|back|knee)\s+(?:issue|problem)|"
        r"miscarriage|breakdown|setback|stroke|heart\s+attack|concussion|panic\s+attack|breakup|"
        r"burnout|"
        r"(?:money|financial|health|family)\s+(?:problems|troubles|issues|struggles))\b)",
        "experienced",
        "np",
        mode="have",
        tenses=_PAST,
    ),
    rule(
        "had.baby",
        "a our my",
        r"(?=(?:a|our|my)\s+(?:new\s+)?(?:baby|son|daughter)\b)",
        "has_child",
        "np",
        mode="have",
        tenses=_PAST,
        change=True,
    ),
    rule(
        "had.activity",
        "a an",
        r"(?:a|an)\s+(?=(?:[\w-]+\s+){0,2}?(?:picnic|party|barbecue|bbq|sleepover|"
        r"game\s+night|movie\s+night|dinner\s+party|potluck|reunion|date|get-together|celebration|"
        r"photoshoot|jam\s+session|workout|lesson|session|audition|recital|performance|competition|"
        r"tournament|"
        r"match|tryout|interview|game|gig|show)\b)",
        "did_activity",
        "np",
        mode="have",
        tenses=_PAST,
    ),
    rule(
        "had.experience",
        "a an",
        r"(?:a|an)\s+(?=(?:[\w-]+\s+){0,2}?experience\s+(?:on|at|in|with|during)\s)",
        "experienced",
        "phrase",
        mode="have",
        tenses=_PAST,
    ),
    rule(
        "got.new",
        "a an some",
        r"(?<=got )(?:a|an|some|myself\s+a|myself\s+some)\s+(?=new\s)",
        c.bought,
        "np",
        mode="have",
    ),
    rule(
        "got.job",
        "a an",
        r"(?<=got )(?=(?:a|an)\s+(?:[\w-]+\s+){0,2}?job\b)",
        "started",
        "np",
        mode="have",
        change=True,
    ),
    rule(
        "got.to",
        "to",
        r"(?<=got )to\s+(?=\w)",
        c.activity_base,
        "phrase",
        mode="have",
        tenses=frozenset({"present", "past"}),
    ),
    rule(
        "had.talk",
        "a an",
        r"(?=(?:a|an)\s+(?:[\w-]+\s+){0,2}?(?:conversation|chat|talk|call|heart-to-heart|"
        r"meeting|discussion)\s+with\s)",
        "did_activity",
        "phrase",
        mode="have",
        tenses=_PAST,
    ),
    rule(
        "had.time",
        "a an such",
        r"(?:a|an|such\s+a)\s+(?:[\w-]+\s+)?(?:time|blast|ball)\s+(?:[\w-]+\s+){0,3}?(?:at|in)\s+",
        c.destination,
        "np",
        mode="have",
        tenses=_PAST,
    ),
)
