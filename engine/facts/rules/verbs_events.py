"""Verb rules for events and doings: trips, outings, activities, plans, achievements, things made
and bought.

"I went to a support group", "We took the kids camping", "I just finished my first marathon", "I'm
thinking of researching adoption agencies", "Caroline adopted a dog", "I rehearsed with a small
group of dancers".
"""

from __future__ import annotations

import re

from engine.facts.rules import classify as c
from engine.facts.rules.lexicon import ACTIVITY_VERBS
from engine.facts.rules.model import (
    ANY_REAL,
    EVENT,
    GERUND,
    GERUND_STRICT,
    PERSONS_ONE,
    PLANNING,
    STATE,
    Choice,
    Rule,
    rule,
)


def _made_it(obj: str) -> Choice:
    """ "made it to the top and the view was stunning": the milestone, without what follows it."""
    return "achieved", re.split(r"\s+(?:and|but|so|after|before|when)\s+", obj, maxsplit=1)[0]


EVENT_RULES: tuple[Rule, ...] = (
    # -- activities, hobbies, skills ---------------------------------------------------------------
    rule(
        "play",
        "play plays played playing",
        r"play(?:s|ed|ing)?\s+(?:the\s+|this\s+|these\s+)?",
        c.play,
        "np",
        tenses=ANY_REAL,
    ),
    rule(
        "read",
        "read reads reading",
        r"(?:read|reads|reading)\s+(?:about\s+|up\s+on\s+)?(?:this\s+|these\s+)?",
        c.titled("reads"),
        "phrase",
        tenses=ANY_REAL,
    ),
    rule(
        "watch",
        "watch watches watched watching",
        r"watch(?:es|ed|ing)?\s+(?:this\s+|these\s+)?",
        c.titled("watches"),
        "phrase",
        tenses=ANY_REAL,
    ),
    rule(
        "listen",
        "listen listens listened listening",
        r"listen(?:s|ed|ing)?\s+to\s+",
        c.not_possessive("listens_to"),
        "phrase",
        tenses=ANY_REAL,
    ),
    rule(
        "speak",
        "speak speaks speaking",
        r"speak(?:s|ing)?\s+",
        c.language,
        "phrase",
        tenses=STATE | {"can"},
    ),
    rule(
        "know-how",
        "know knows",
        r"knows?\s+how\s+to\s+",
        "has_skill",
        "phrase",
        persons=PERSONS_ONE,
    ),
    rule(
        "art",
        "paint paints draw draws sketch sketches sculpt sculpts knit knits crochet crochets sew sews",
        r"(?=\w)",
        "creates_art",
        "phrase",
        tenses=frozenset({"present", "perfect_prog"}),
        negation="skip",
    ),
    rule(
        "can",
        "speak play cook code program swim drive sing dance paint draw knit sew ski surf skate juggle bake build fix",
        r"(?=\w)",
        "has_skill",
        "phrase",
        tenses=frozenset({"can"}),
        negation="skip",
        persons=PERSONS_ONE,
    ),
    rule(
        "volunteer",
        "volunteer volunteers volunteered volunteering",
        r"volunteer(?:s|ed|ing)?\s+(?:at|with|"
        r"for|in)\s+",
        "volunteers_at",
        "np",
        tenses=ANY_REAL,
    ),
    rule(
        "take.class",
        "took take taking",
        r"(?:took|take|taking)\s+(?=(?:a|an|some|my|our)\s+(?:[\w-]+\s+)"
        r"{0,3}?(?:class|classes|course|lessons?|workshop)\b)",
        "enrolled_in",
        "np",
        tenses=ANY_REAL,
    ),
    rule(
        "take.up",
        "took take taking",
        r"(?:took|take|taking)\s+up\s+",
        "started",
        "np",
        tenses=EVENT | {"progressive"},
        change=True,
    ),
    rule(
        "take.part",
        "took take taking",
        r"(?:took|take|taking)\s+part\s+in\s+",
        "participated_in",
        "np",
        tenses=EVENT | {"progressive"},
    ),
    rule(
        "take.to",
        "took take",
        r"(?:took|take)\s+(?:my|our|the)\s+(?:[\w'-]+\s+){0,2}?to\s+(?=(?:a|an|the|(?-i:[A-Z])))",
        c.destination,
        "np",
        tenses=EVENT,
    ),
    rule(
        "take.doing",
        "took take",
        r"(?:took|take)\s+(?:(?:my|our|the|his|her)\s+)?(?:[\w'-]+\s+){0,2}?" + GERUND_STRICT,
        "did_activity",
        "np",
        tenses=EVENT,
    ),
    rule(
        "participate",
        "participated participate participating competed compete competing",
        r"(?:participat(?:ed|e|ing)|compet(?:ed|e|ing))\s+in\s+",
        "participated_in",
        "np",
        tenses=EVENT | {"progressive"},
    ),
    rule(
        "join",
        "joined join joining",
        r"join(?:ed|ing)?\s+",
        c.joined,
        "np",
        tenses=EVENT | {"progressive"},
    ),
    rule(
        "attend",
        "attend attends attended attending",
        r"attend(?:s|ed|ing)?\s+",
        "attended",
        "np",
        tenses=ANY_REAL,
    ),
    rule(
        "organize",
        "organized organised hosted threw held set put",
        r"(?:organi[sz]ed|hosted|threw|held|"
        r"set\s+up|put\s+together|put\s+on)\s+(?=(?:a|an|our|my|the|this)\s)",
        "organized",
        "np",
        tenses=EVENT,
    ),
    rule(
        "try.doing",
        "tried try",
        r"(?:tried|try)\s+(?:my\s+hand\s+at\s+|out\s+)?" + GERUND,
        "did_activity",
        "phrase",
        tenses=EVENT,
    ),
    rule(
        "try",
        "tried try",
        r"(?:tried|try)\s+(?:out\s+|my\s+hand\s+at\s+)?(?!to\b)(?=(?:a|an|some|the|this|(?-i:[A-Z])"
        r"))",
        c.not_possessive("did_activity"),
        "np",
        tenses=EVENT,
    ),
    rule("activity", ACTIVITY_VERBS, r"(?=\w)", c.activity, "phrase", tenses=EVENT),
    rule(
        "used-to-go",
        "go",
        r"go\s+" + GERUND,
        "did_activity",
        "phrase",
        tenses=frozenset({"used_to"}),
    ),
    rule(
        "faced",
        "faced overcame overcome survived struggled",
        r"(?=(?:faced|overcame|overcome|survived|"
        r"struggled\s+with)\s)",
        "experienced",
        "phrase",
        tenses=EVENT,
    ),
    rule(
        "photo.at",
        "took",
        r"took\s+(?:this|that|the|a|these|those|some)\s+(?:[\w-]+\s+)?(?:photo|pic|picture|"
        r"shot|snap|pics|photos|pictures)\s+(?:at|in|on|near|from|during)\s+",
        c.photo_place,
        "np",
        tenses=EVENT,
    ),
    rule(
        "look-forward",
        "look looks",
        r"looks?\s+forward\s+to\s+",
        "likes",
        "np",
        tenses=frozenset({"present"}),
    ),
    rule(
        "getting-ready",
        "getting",
        r"getting\s+ready\s+for\s+",
        "has_event",
        "event",
        tenses=frozenset({"progressive", "future"}),
    ),
    rule(
        "having.event",
        "having",
        r"having\s+(?=(?:a|an|my|our)\s+(?:[\w'-]+\s+){0,3}?(?:show|party|concert|"
        r"exhibition|exhibit|meeting|interview|exam|wedding|surgery|appointment|recital|game|match|"
        r"tournament|"
        r"competition|event|reunion|celebration|gathering|barbecue|bbq|dinner|launch|premiere)\b)",
        "has_event",
        "event",
        tenses=frozenset({"future"}),
    ),
    rule("failed", "failed", r"(?=failed\s+(?:my|our|the|a|an)\s)", "experienced", "np", tenses=EVENT),
    rule(
        "celebrate",
        "celebrated",
        r"(?=celebrated\s+(?!by\b|with\b|at\b|in\b)\w)",
        "experienced",
        "np",
        tenses=EVENT,
    ),
    rule("win", "won win", r"(?=won\s)", "achieved", "phrase", tenses=EVENT),
    rule(
        "made-it",
        "made make",
        r"(?=(?:made|make)\s+it\s+(?:all\s+the\s+way\s+)?to\s+the\s+(?:top|summit|peak|finish(?:\s+line)?|finals?|"
        r"semi-?finals?|playoffs|championship|end)\b)",
        _made_it,
        "phrase",
        tenses=EVENT,
    ),
    rule(
        "achieve",
        "achieved accomplished earned passed reached completed scored",
        r"(?=(?:achieved|accomplished|earned|passed|reached(?!\s+out\b)|completed|scored)\s)",
        "achieved",
        "phrase",
        tenses=EVENT,
    ),
    rule(
        "ran.race",
        "ran run",
        r"(?=ran\s+(?:a|an|my|the|in\s+(?:a|the))\s+(?:[\w-]+\s+){0,2}?(?:marathon|"
        r"race|5k|10k|half|ultra|triathlon)\b)",
        "achieved",
        "phrase",
        tenses=EVENT,
    ),
    rule(
        "finish",
        "finished finish wrapped",
        r"(?:finished|finish|wrapped\s+up)\s+(?:up\s+)?(?:with\s+)?",
        "finished",
        "np",
        tenses=EVENT,
    ),
    # "I've been keeping up with fashion trends": what someone keeps doing lately ("keeping" alone says nothing)
    rule(
        "keeping-up",
        "keeping",
        r"(?=keeping\s+up\s+with\s+(?!(?:it|that|this|them|you|everything|everyone)\b)\w)",
        "currently_doing",
        "phrase",
        tenses=frozenset({"progressive", "perfect_prog"}),
    ),
    rule(
        "finishing",
        "finishing",
        r"finishing\s+(?:up\s+)?",
        "working_on",
        "np",
        tenses=frozenset({"progressive", "perfect_prog"}),
    ),
    rule(
        "start",
        "started start began begun starting",
        r"(?:started|start|began|begun|starting)\s+(?:up\s+)?(?:to\s+|on\s+(?=(?:a|an|my|another)\s))?",
        "started",
        "phrase",
        tenses=EVENT | {"progressive"},
        change=True,
    ),
    rule("decided", "decided chose", r"(?:decided|chose)\s+to\s+", c.plan, "phrase", tenses=EVENT),
    rule(
        "plan.trip",
        "plan plans planning planned",
        r"plan(?:s|ning|ned)?\s+(?=(?:a|an|my|our|the|some)\s)",
        c.plan,
        "phrase",
        tenses=PLANNING | EVENT,
    ),
    rule(
        "plan",
        "plan plans planning intend intends intending aim aims aiming",
        r"(?:plan(?:s|ning)?|"
        r"intend(?:s|ing)?|aim(?:s|ing)?)\s+(?:to|on)\s+",
        c.plan,
        "phrase",
        tenses=PLANNING,
    ),
    rule(
        "thinking-of",
        "thinking",
        r"thinking\s+(?:of|about)\s+" + GERUND,
        c.plan,
        "phrase",
        tenses=frozenset({"progressive", "perfect_prog"}),
    ),
    rule(
        "considering",
        "considering",
        r"considering\s+" + GERUND,
        c.plan,
        "phrase",
        tenses=frozenset({"progressive", "perfect_prog"}),
    ),
    rule(
        "saving",
        "saving",
        r"saving\s+(?:up\s+)?for\s+",
        "goal",
        "np",
        tenses=frozenset({"progressive", "perfect_prog"}),
    ),
    rule(
        "training",
        "training",
        r"training\s+for\s+",
        "goal",
        "np",
        tenses=frozenset({"progressive", "perfect_prog"}),
    ),
    rule(
        "preparing",
        "preparing prepping",
        r"(?:preparing|prepping)\s+for\s+",
        "has_event",
        "event",
        tenses=frozenset({"progressive", "perfect_prog"}),
    ),
    rule(
        "trying",
        "trying",
        r"trying\s+(?:hard\s+)?to\s+(?!(?:figure|decide|understand|find\s+out|be\b))",
        "goal",
        "phrase",
        tenses=frozenset({"progressive", "perfect_prog"}),
    ),
    # -- things and people -------------------------------------------------------------------------
    rule("adopt", "adopted adopt", r"adopt(?:ed)?\s+", c.adopted, "np", tenses=EVENT),
    rule("bought", "bought", r"bought\s+(?:myself\s+|ourselves\s+)?", c.bought, "np", tenses=EVENT),
    rule(
        "create",
        "painted drew wrote composed knitted knit crocheted sewed sculpted designed crafted "
        "recorded filmed published released",
        r"(?:painted|drew|wrote|composed|knitted|knit|crocheted|sewed|"
        r"sculpted|designed|crafted|recorded|filmed|published|released)\s+(?:this\s+|these\s+|"
        r"that\s+)?(?=(?:a|an|my|our|some|two|"
        r"three|\d+|(?-i:[A-Z])|[\"“]))",
        "created",
        "np",
        tenses=EVENT,
    ),
    rule(
        "make",
        "made baked cooked built",
        r"(?:made|baked|cooked|built)\s+(?:(?:my|our)\s+own\s+|this\s+|these\s+)?",
        c.made,
        "np",
        tenses=EVENT,
    ),
    rule("meet", "met", r"met\s+(?:up\s+with\s+)?", c.not_possessive("met"), "np", tenses=EVENT),
    rule("lose", "lost", r"(?=lost\s+(?:my|our|his|her)\s)", "experienced", "np", tenses=EVENT),
    rule(
        "injure",
        "hurt injured broke sprained twisted tore pulled fractured dislocated",
        r"(?=(?:hurt|injured|broke|sprained|twisted|tore|pulled|fractured|dislocated)\s+(?:my|his|"
        r"her)\s)",
        "has_injury",
        "np",
        tenses=EVENT,
    ),
    rule(
        "medication",
        "take takes taking",
        r"(?:take|takes|taking)\s+(?=(?:[\w-]+\s+){0,2}?(?:medication|"
        r"meds|pills|insulin|antidepressants|medicine|vitamins|supplements)\b)",
        "takes_medication",
        "np",
        persons=PERSONS_ONE,
    ),
    rule(
        "dating",
        "dating",
        r"dating\s+",
        lambda o: "has_partner" if c.is_proper(o) else None,
        "name",
        tenses=frozenset({"progressive", "perfect_prog"}),
    ),
)
