"""Verb rules for what someone likes, wants, believes and feels.

"I love hiking", "I don't like crowded places" (→ dislikes), "I prefer tea to coffee", "I'd love to
learn to surf", "I hope to open a studio", "I believe in second chances", "I felt so accepted".
Keyed by verb form like the other rule tables; the first matching rule of a key wins.
"""

from __future__ import annotations

from engine.facts.rules import classify as c, describe as d
from engine.facts.rules.model import ANY_REAL, PERSONS_ONE, PLANNING, STATE, Rule, rule

PREFERENCE_RULES: tuple[Rule, ...] = (
    # -- preferences -------------------------------------------------------------------------------
    rule(
        "prefer",
        "prefer prefers preferred",
        r"prefer(?:s|red)?\s+(?:to\s+)?",
        c.preference,
        "pref",
        tenses=STATE | {"modal"},
    ),
    rule("rather", "rather", r"rather\s+", c.preference, "pref", tenses=frozenset({"modal"})),
    rule(
        "would-love",
        "love like",
        r"(?:love|like)\s+to\s+",
        c.want,
        "phrase",
        tenses=frozenset({"modal"}),
    ),
    rule(
        "like",
        "like likes liked",
        r"like[sd]?\s+(?:to\s+)?",
        "likes",
        "phrase",
        negation="dislikes",
        tenses=ANY_REAL,
    ),
    # "I'll always love reading": a lasting preference, though said with "will"
    rule(
        "love.always",
        "love",
        r"(?<=always\s)love\s+(?:to\s+)?",
        "loves",
        "phrase",
        tenses=frozenset({"future"}),
    ),
    rule(
        "cherish.always",
        "cherish treasure",
        r"(?<=always\s)(?:cherish|treasure)\s+",
        "values",
        "phrase",
        tenses=frozenset({"future"}),
    ),
    rule(
        "love",
        "love loves loving loved",
        r"lov(?:e|es|ing|ed)\s+(?:to\s+)?",
        "loves",
        "phrase",
        tenses=ANY_REAL,
    ),
    rule(
        "enjoy",
        "enjoy enjoys enjoying enjoyed",
        r"enjoy(?:s|ing|ed)?\s+",
        "likes",
        "phrase",
        negation="dislikes",
        tenses=ANY_REAL,
    ),
    rule("adore", "adore adores", r"adores?\s+", "loves", "phrase", negation="skip"),
    rule(
        "hate",
        "hate hates dislike dislikes detest detests loathe",
        r"(?:hate|hates|dislikes?|detests?|"
        r"loathe)\s+",
        "dislikes",
        "phrase",
        negation="skip",
    ),
    rule(
        "cant-stand",
        "stand",
        r"stand\s+",
        "dislikes",
        "phrase",
        tenses=frozenset({"can", "present"}),
        negation="require",
    ),
    rule(
        "cant-wait",
        "wait",
        r"wait\s+to\s+",
        c.plan,
        "phrase",
        tenses=frozenset({"can"}),
        negation="require",
    ),
    rule(
        "cant-wait.for",
        "wait",
        r"wait\s+for\s+",
        "has_event",
        "event",
        tenses=frozenset({"can"}),
        negation="require",
    ),
    rule(
        "want",
        "want wants wanna wanting",
        r"(?:want|wants|wanna|wanting)\s+(?:to\s+)?",
        c.want,
        "phrase",
        tenses=frozenset({"present", "progressive", "perfect_prog"}),
    ),
    rule("hope", "hope hopes hoping", r"hop(?:e|es|ing)\s+to\s+", "goal", "phrase", tenses=PLANNING),
    rule("dream", "dream dreams dreaming", r"dream(?:s|ing)?\s+(?:of|about)\s+", "goal", "phrase"),
    rule(
        "believe",
        "believe believes",
        r"believes?\s+in\s+",
        "believes",
        "phrase",
        persons=PERSONS_ONE,
    ),
    rule(
        "believe-that",
        "believe believes think",
        r"(?:believes?|think)\s+(?:that\s+)?(?=[a-z])(?!(?:you|it|so|that|"
        r"this|i|he|she|they|we['’]ll|i['’]ll|about|of|maybe|not)\b)(?=\w+(?:\s+\w+){0,4}\s+(?:is|"
        r"are|should|can|"
        r"deserves?|needs?|makes?|matters?|helps?)\b)",
        "believes",
        "phrase",
        persons=PERSONS_ONE,
        tenses=frozenset({"present"}),
    ),
    rule("value", "value values", r"values?\s+", "values", "phrase", persons=PERSONS_ONE),
    # "I really admire his work ethic": what is admired, whoever it belongs to
    rule(
        "admire",
        "admire admires",
        r"admires?\s+(?:(?:his|her|their)\s+(?=[a-z]+\s+[a-z]))?",
        "inspired_by",
        "phrase",
        persons=PERSONS_ONE,
    ),
    rule(
        "look-up-to",
        "look looks",
        r"looks?\s+up\s+to\s+",
        "inspired_by",
        "phrase",
        persons=PERSONS_ONE,
    ),
    rule(
        "advocate",
        "advocate advocates advocating fight fights fighting campaign campaigns campaigning stand stick sticks",
        r"(?:advocat(?:e|es|ing)|fight(?:s|ing)?|campaign(?:s|ing)?|stand\s+up|sticks?\s+up)"
        r"\s+for\s+",
        "advocates_for",
        "phrase",
        persons=PERSONS_ONE,
        tenses=STATE | {"future"},
    ),
    rule(
        "passion",
        "care cares",
        r"cares?\s+(?:deeply|a\s+lot|so\s+much)\s+about\s+",
        "passionate_about",
        "phrase",
    ),
    rule("collect", "collect collects collecting", r"collect(?:s|ing)?\s+", "collects", "np"),
    rule("looking-into", "looking", r"looking\s+into\s+", "interested_in", "phrase"),
    rule("looking-for", "looking", r"looking\s+for\s+(?=(?:a|an|some|new)\b)", "wants", "np"),
    rule("looking-forward", "looking", r"looking\s+forward\s+to\s+", c.plan, "event"),
    rule(
        "feel.drawn",
        "feel feels felt feeling",
        r"(?:feel|feels|felt|feeling)\s+(?:really\s+|so\s+|very\s+|strongly\s+|deeply\s+)?drawn\s+"
        r"to\s+",
        "interested_in",
        "phrase",
        tenses=ANY_REAL,
    ),
    rule(
        "feel.connection",
        "feel feels felt",
        r"(?:feel|feels|felt)\s+(?:a|an)\s+(?:[\w-]+\s+)?(?=(?:connection|bond|"
        r"affinity|love|passion)\s+(?:to|with|for)\s)",
        d.fondness,
        "phrase",
        tenses=ANY_REAL,
    ),
    rule(
        "feel",
        "feel feels felt feeling",
        r"(?:feel|feels|felt|feeling)\s+(?!like\b|that\b|as\s+if\b|the\b|it\b|"
        r"a\b(?!\s+(?:bit|little|mix|mixture|rollercoaster|roller|range|whirlwind|wave|rush)\b)|an\b|for\b|about\b|"
        r"when\b)(?:so\s+|really\s+|very\s+|super\s+|"
        r"pretty\s+|a\s+bit\s+|kind\s+of\s+|"
        r"kinda\s+|more\s+|much\s+|truly\s+|incredibly\s+|extremely\s+|totally\s+)*",
        d.felt,
        "phrase",
        tenses=ANY_REAL,
    ),
    rule(
        "feel.short",
        "feel feels felt feeling",
        r"(?:feel|feels|felt|feeling)\s+(?!like\b|that\b|as\s+if\b|the\b|it\b|"
        r"a\b(?!\s+(?:bit|little|mix|mixture|rollercoaster|roller|range|whirlwind|wave|rush)\b)|an\b|for\b|about\b|"
        r"when\b)(?:so\s+|really\s+|very\s+|super\s+|"
        r"pretty\s+|a\s+bit\s+|kind\s+of\s+|"
        r"kinda\s+|more\s+|much\s+|truly\s+|incredibly\s+|extremely\s+|totally\s+)*(?=[a-z]+\s+"
        r"(?:(?:about|of|with|by)\s+(?:it|that|this|them|everything)|to\s+(?:know|have|see|"
        r"be\s+with)\s+"
        r"(?:it|that|this|them|him|her|everyone))\b)",
        d.felt,
        "np",
        tenses=ANY_REAL,
    ),
    rule(
        "doing",
        "doing",
        r"doing\s+(?!(?:good|great|well|fine|ok|okay|alright|better|awesome|amazing|the\s+same|"
        r"it|that|this|so|pretty|really|much|my\s+(?:best|part|bit|thing)|a\s+lot|what|something|"
        r"anything|stuff|"
        r"things)\b)",
        c.hobby_or_activity,
        "np",
        tenses=frozenset({"progressive", "perfect_prog"}),
    ),
    rule(
        "do",
        "do does",
        r"(?:do|does)\s+(?=(?:some\s+)?(?:yoga|pilates|kickboxing|crossfit|karate|judo|"
        r"taekwondo|boxing|martial\s+arts|pottery|photography|woodworking|calligraphy|embroidery|"
        r"crafts|"
        r"ballet|gymnastics|meditation|volunteer\s+work|charity\s+work)\b)",
        c.hobby_or_activity,
        "np",
        tenses=frozenset({"present"}),
    ),
    rule(
        "trying-out",
        "trying",
        r"(?=trying\s+(?:out\s+)?(?!to\b)\w)",
        "currently_doing",
        "phrase",
        tenses=frozenset({"progressive", "perfect_prog"}),
    ),
    rule(
        "eat",
        "eat eats",
        r"eats?\s+",
        lambda o: ("diet", f"no {o}"),
        "np",
        negation="require",
        tenses=frozenset({"present"}),
    ),
)
