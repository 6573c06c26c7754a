"""Verb rules for lasting states: where someone lives, works and studies, what they use.

"I live in …", "I moved to …", "I work as …", "I study at …", "I switched to Svelte", "I mostly code
in Rust".  Each rule is keyed by the verb forms it starts with, so a clause is only
tried against the handful of rules for its verb; within a key the first rule that matches wins, so
specific shapes come first.
"""

from __future__ import annotations

from engine.facts.rules import classify as c
from engine.facts.rules.model import (
    ANY_REAL,
    EVENT,
    GERUND,
    PERSONS_ONE,
    Rule,
    rule,
)

STATE_RULES: tuple[Rule, ...] = (
    # -- places ------------------------------------------------------------------------------------
    rule(
        "live",
        "live lives lived living",
        r"(?:lives?|lived|living)\s+(?:in|at)\s+",
        "lives_in",
        "np",
        past="lived_in",
    ),
    rule(
        "move.plan",
        "moving",
        r"(?=moving\s+(?:back\s+)?to\s)",
        c.plan,
        "phrase",
        tenses=frozenset({"progressive", "future"}),
    ),
    rule(
        "move",
        "move moves moved",
        r"(?:moved|moves?)\s+(?:back\s+)?(?:to|into)\s+",
        "moved_to",
        "np",
        tenses=EVENT,
        change=True,
        also=("lives_in",),
    ),
    rule(
        "relocate",
        "relocated",
        r"relocated\s+to\s+",
        "moved_to",
        "np",
        tenses=EVENT,
        change=True,
        also=("lives_in",),
    ),
    rule("identify", "identify identifies", r"identif(?:y|ies)\s+as\s+", "identifies_as", "np"),
    rule(
        "come-from",
        "come comes came",
        r"(?:come|comes|came)\s+(?:originally\s+)?from\s+",
        "is_from",
        "np",
        tenses=ANY_REAL,
        persons=PERSONS_ONE,
    ),
    rule(
        "grew-up",
        "grew",
        r"grew\s+up\s+(?:in|on|near|around)\s+",
        "is_from",
        "np",
        tenses=EVENT,
        persons=PERSONS_ONE,
    ),
    rule(
        "visit",
        "visit visits visited visiting",
        r"visit(?:ed|ing|s)?\s+",
        c.not_possessive("visited"),
        "np",
        tenses=EVENT | {"perfect_prog"},
    ),
    rule(
        "travel",
        "traveled travelled flew drove",
        r"(?:travel(?:l)?ed|flew|drove)\s+(?:back\s+)?to\s+",
        "visited",
        "np",
        tenses=EVENT,
    ),
    rule(
        "trip",
        "took went did",
        r"(?:took|went\s+on|did)\s+(?:a|an|my|our|another)\s+(?:[\w-]+\s+){0,3}?"
        r"(?:trip|vacation|holiday|getaway|cruise|tour|visit)\s+(?:to|in|around|through)\s+",
        "visited",
        "np",
        tenses=EVENT,
    ),
    rule(
        "outing",
        "took went did",
        r"(?:took|went\s+on|did)\s+(?=(?:a|an|my|our)\s+(?:[\w-]+\s+){0,2}?(?:trip|"
        r"vacation|holiday|getaway|cruise|tour|hike|walk|ride|drive|road\s+trip)\b)",
        "did_activity",
        "np",
        tenses=EVENT,
    ),
    rule("went.through", "went", r"went\s+through\s+", "experienced", "np", tenses=EVENT),
    rule(
        "went.see",
        "went",
        r"went\s+(?:back\s+)?to\s+(?:see|watch)\s+",
        c.not_possessive("attended"),
        "np",
        tenses=EVENT,
    ),
    rule("went.to", "went", r"went\s+(?:back\s+)?(?:to|into)\s+", c.destination, "np", tenses=EVENT),
    rule("went.doing", "went gone", r"(?:went|gone)\s+" + GERUND, "did_activity", "np", tenses=EVENT),
    rule(
        "went.on",
        "went",
        r"went\s+on\s+(?=(?:a|an|my|our|another)\s)",
        "did_activity",
        "np",
        tenses=EVENT,
    ),
    rule(
        "spent.doing",
        "spent spend",
        r"spen[dt]\s+(?:the|a|some|my|our|all|most)?\s*(?:[\w-]+\s+){0,2}?"
        r"(?:day|days|time|weekend|afternoon|morning|evening|night|week|hours|summer)"
        r"\s+(?:[\w-]+\s+){0,3}?" + GERUND,
        "did_activity",
        "phrase",
        tenses=EVENT,
    ),
    rule(
        "spent.in",
        "spent",
        r"spent\s+(?:[\w-]+\s+){1,4}?(?:in|at)\s+(?=(?-i:[A-Z]))",
        "visited",
        "np",
        tenses=EVENT,
    ),
    rule(
        "heading",
        "heading headed",
        r"(?:heading|headed)\s+(?:out\s+|back\s+)?to\s+",
        c.planned_destination,
        "np",
        tenses=frozenset({"progressive", "future"}),
    ),
    rule(
        "going.to",
        "going",
        r"going\s+(?:back\s+)?to\s+(?=(?:a|an|the|my|our|(?-i:[A-Z])))",
        c.planned_destination,
        "np",
        tenses=frozenset({"progressive", "future"}),
    ),
    rule(
        "going.doing",
        "going",
        r"going\s+" + GERUND,
        "plans_to",
        "phrase",
        tenses=frozenset({"progressive", "future"}),
    ),
    # -- work and study ----------------------------------------------------------------------------
    rule(
        "started.job",
        "started start starting",
        r"start(?:ed|ing)?\s+(?:a\s+new\s+job|a\s+job|working|"
        r"work)\s+(?:at|for|with)\s+",
        c.work_place,
        "np",
        tenses=EVENT | {"progressive", "future"},
        change=True,
    ),
    rule(
        "work.as",
        "work works working",
        r"work(?:s|ing)?\s+as\s+",
        "works_as",
        "np",
        persons=PERSONS_ONE,
    ),
    rule(
        "work.at",
        "work works working worked",
        r"work(?:s|ing|ed)?\s+(?:at|for)\s+",
        c.work_place,
        "np",
        persons=PERSONS_ONE,
        past="worked_at",
    ),
    rule(
        "work.on",
        "work works working worked",
        r"work(?:s|ing|ed)?\s+(?:(?:really\s+|so\s+)?hard\s+)?on\s+",
        "working_on",
        "np",
    ),
    rule(
        "work.in",
        "work works working",
        r"work(?:s|ing)?\s+in\s+",
        c.field,
        "np",
        persons=PERSONS_ONE,
    ),
    rule(
        "teach.at",
        "teach teaches",
        r"teach(?:es)?\s+(?:[\w-]+\s+){0,3}?at\s+",
        "works_at",
        "np",
        persons=PERSONS_ONE,
    ),
    rule(
        "run.business",
        "run runs running own owns",
        r"(?:run|runs|running|own|owns)\s+",
        c.business,
        "np",
        persons=PERSONS_ONE,
    ),
    rule("own", "own owns", r"owns?\s+", c.not_possessive("owns"), "np"),
    rule(
        "study.at",
        "study studies studying",
        r"stud(?:y|ies|ying)\s+at\s+",
        "studies_at",
        "np",
        persons=PERSONS_ONE,
    ),
    rule(
        "study",
        "study studies studying",
        r"stud(?:y|ies|ying)\s+(?!at\b|for\b|with\b|hard\b|a\s+lot\b)",
        "studies",
        "np",
        persons=PERSONS_ONE,
    ),
    rule(
        "major",
        "major majoring majored",
        r"major(?:ing|ed|s)?\s+in\s+",
        "studies",
        "np",
        persons=PERSONS_ONE,
        tenses=ANY_REAL,
    ),
    rule(
        # "I graduated last week!": the milestone itself, when no school follows
        "graduated.bare",
        "graduated",
        r"(?=graduated\s*(?:[.!;,]|$|(?:last|this|yesterday|today|recently|earlier|a\s+few|a\s+couple|\w+\s+"
        r"(?:days?|weeks?|months?|years?)\s+ago|in\s+(?:\d{4}|may|june|july|december|spring|summer|the\s+spring)|"
        r"on\s+\w+day)\b))",
        "achieved",
        "phrase",
        tenses=EVENT,
        persons=PERSONS_ONE,
    ),
    rule(
        "graduated",
        "graduated",
        r"graduated\s+(?:from\s+)?",
        "graduated_from",
        "np",
        tenses=EVENT,
        persons=PERSONS_ONE,
    ),
    rule(
        "apply",
        "applied apply applying",
        r"appl(?:ied|y|ying)\s+(?:to|for)\s+",
        "applied_to",
        "np",
        tenses=EVENT | {"progressive"},
    ),
    rule(
        "enroll",
        "signed sign signing enrolled enroll enrolling registered registering",
        r"(?:(?:signed|signing)\s+up\s+(?:for|to)|(?:enrolled|enroll|enrolling|registered|"
        r"registering)\s+"
        r"(?:in|for|at))\s+",
        "enrolled_in",
        "np",
        tenses=EVENT | {"progressive"},
    ),
    rule(
        "learn",
        "learn learning learns",
        r"learn(?:ing|s)?\s+(?:how\s+to\s+|to\s+|about\s+)?",
        "learning",
        "phrase",
    ),
    # -- technology --------------------------------------------------------------------------------
    rule(
        "started.using",
        "started start starting",
        r"start(?:ed|ing)?\s+using\s+",
        c.technology,
        "np",
        tenses=EVENT | {"progressive"},
        change=True,
    ),
    rule(
        "switch",
        "switched switch switching changed migrated",
        r"(?:switched|switching|switch|changed|"
        r"migrated)\s+(?:over\s+)?(?:from\s+[^,.;!?]{1,40}?\s+)?to\s+",
        c.switched_to,
        "np",
        tenses=EVENT | {"progressive", "present"},
        change=True,
    ),
    rule("use", "use uses using", r"(?:use|uses|using)\s+", c.technology, "np"),
    rule(
        "code.in",
        "code codes coding program programs write writes",
        r"(?:code|codes|coding|program|programs|"
        r"write|writes)\s+(?:mostly\s+|mainly\s+|primarily\s+)?in\s+",
        "uses_technology",
        "np",
    ),
    rule(
        "issue",
        "having",
        r"having\s+(?:some\s+|a\s+lot\s+of\s+|lots\s+of\s+)?(?:trouble|issues?|problems?|"
        r"difficult(?:y|ies)|an\s+issue|a\s+problem|a\s+bug|bugs|errors?)\s+(?:with|in|on)\s+",
        "reported_issue",
        "np",
    ),
    rule(
        "issue.found",
        "found ran hit getting",
        r"(?:found|ran\s+into|hit|getting|got)\s+(?:a|an|some|"
        r"this|the\s+same)?\s*(?:weird\s+|strange\s+|nasty\s+)?(?:bug|issue|error|problem|crash)\s+"
        r"(?:in|with|on|from)\s+",
        "reported_issue",
        "np",
        tenses=ANY_REAL,
    ),
)
