"""Facts of different slots that cannot both be true: a vegetarian's steak, a non-smoker's cigarette, a divorcee's
wife.

Two values of one single-valued slot contradict by construction; these are contradictions across slots, found from
general knowledge of what a diet excludes and what counts as alcohol or smoking.  Decide treats such a pair like a
contradiction in a slot: without a change cue it is a conflict for the user to settle; with one, the newer
statement replaces the older.

:data:`RELATED` says which predicates to look at for a new fact; :func:`clash` says whether two values clash, and
why.
"""

from __future__ import annotations

import re
from typing import Final

from engine.facts.rules.life.words import ALCOHOL_WORDS, DAIRY_EGG_WORDS, FISH_WORDS, MEAT_WORDS, SMOKING_WORDS

#: For a new fact's predicate: the predicates of the same subject whose live facts it may clash with.
RELATED: Final[dict[str, tuple[str, ...]]] = {
    "diet": ("consumes",),
    "consumes": ("diet", "avoids", "stopped"),
    "avoids": ("consumes",),
    "stopped": ("consumes",),
    "relationship_status": ("has_spouse", "has_partner"),
    "has_spouse": ("relationship_status",),
    "has_partner": ("relationship_status",),
    "has_trait": ("has_trait", "has_sibling"),
    "has_sibling": ("has_trait",),
}
#: Traits that rule each other out ("left-handed" and "right-handed").
_OPPOSITE_TRAITS: Final = (frozenset({"left-handed", "right-handed"}), frozenset({"left-handed", "ambidextrous"}))
_WORD = re.compile(r"[\w'’-]+")
_SMOKES = SMOKING_WORDS - {"smoker", "joint"}
#: What each diet leaves out.
_EXCLUDES: Final[dict[str, frozenset[str]]] = {
    "vegetarian": MEAT_WORDS | FISH_WORDS,
    "vegan": MEAT_WORDS | FISH_WORDS | DAIRY_EGG_WORDS,
    "pescatarian": MEAT_WORDS,
}
#: Relationship statuses that rule out a current spouse or partner.
_UNATTACHED = ("divorced", "single", "widowed", "broke up", "separated")


def _words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text)}


def _category(value: str) -> set[str]:
    """What a consumed item is: meat, fish, dairy, alcohol, smoking."""
    words = _words(value)
    found = set()
    if words & MEAT_WORDS:
        found.add("meat")
    if words & FISH_WORDS:
        found.add("fish")
    if words & DAIRY_EGG_WORDS:
        found.add("dairy")
    if words & ALCOHOL_WORDS:
        found.add("alcohol")
    if words & _SMOKES:
        found.add("smoking")
    return found


def _abstains(predicate: str, value: str) -> set[str]:
    """The categories a diet, an "I don't …" or an "I quit …" rules out."""
    words = _words(value)
    if predicate == "diet":
        out: set[str] = set()
        for diet, excluded in _EXCLUDES.items():
            if diet in words:
                out |= _category(" ".join(excluded))
        return out
    found = set()
    if words & {"smoke", "smoking", "smoker", "non-smoker", "cigarettes", "vaping"}:
        found.add("smoking")
    if words & {"drink", "drinking", "alcohol", "booze", "non-drinker", "teetotal", "sober"}:
        found.add("alcohol")
    if words & {"meat"}:
        found.add("meat")
    return found


def clash(new_predicate: str, new_value: str, old_predicate: str, old_value: str) -> str | None:
    """Why ``new`` and ``old`` (facts of one subject) cannot both hold, or None when they can."""
    pair = {new_predicate, old_predicate}
    if pair & {"consumes"} and pair & {"diet", "avoids", "stopped"}:
        eaten, rule = (new_value, old_value) if new_predicate == "consumes" else (old_value, new_value)
        rule_predicate = old_predicate if new_predicate == "consumes" else new_predicate
        shared = _category(eaten) & _abstains(rule_predicate, rule)
        if shared:
            return f"{', '.join(sorted(shared))} against {rule_predicate.replace('_', ' ')} {rule!r}"
        return None
    if pair == {"has_trait"}:
        traits = frozenset({new_value.casefold().strip(), old_value.casefold().strip()})
        return f"{old_value!r} against {new_value!r}" if traits in _OPPOSITE_TRAITS else None
    if pair == {"has_trait", "has_sibling"}:
        trait = new_value if new_predicate == "has_trait" else old_value
        sibling = old_value if new_predicate == "has_trait" else new_value
        return f"a sibling ({sibling}) against {trait!r}" if "only child" in trait.casefold() else None
    if "relationship_status" in pair and pair & {"has_spouse", "has_partner"}:
        status = new_value if new_predicate == "relationship_status" else old_value
        if any(word in status.casefold() for word in _UNATTACHED):
            return f"a spouse or partner against the status {status!r}"
    return None
