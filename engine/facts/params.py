"""Every tunable number of the fact pipeline, in one place (DESIGN §3–§4).

Confidence is ``σ(α·S + β·K − γ·F + δ·T + bias)``.  The constants are chosen so that, with no corroboration and no
conflict, an explicit first-person statement by the vault owner lands in the ``fact`` band whatever its kind, a
statement from a group chat or about a third party lands in ``working``, and an assistant- or tool-inferred one
in ``candidate`` (identity-like kinds) or lower — i.e. α > 3δ keeps the source weight dominant over the kind bonus.
"""

from __future__ import annotations

import re
from typing import Final

from engine.facts.types import FactKind, Standing

#: S — how much the source is trusted.
SOURCE_WEIGHT: Final[dict[str, float]] = {
    "user": 1.0,  # the vault owner, first person, one-to-one chat
    "manual": 1.0,  # typed or corrected by the person in the GUI / endpoint
    "group": 0.5,  # a named speaker in a multi-party transcript
    "third_party": 0.5,  # a statement about someone else
    "document": 0.6,  # a sentence of an uploaded document
    "assistant": 0.3,
    "tool": 0.3,
}

#: T — kind bonus.
KIND_BONUS: Final[dict[FactKind, float]] = {
    "identity": 1.0,
    "occupational": 0.9,
    "preference": 0.8,
    "behavioral": 0.7,
    "relational": 0.8,
    "temporal": 0.4,
}

ALPHA: Final = 6.0  # source weight
BETA: Final = 1.5  # corroboration (0–1)
GAMMA: Final = 2.0  # open conflict
DELTA: Final = 1.5  # kind bonus
BIAS: Final = -3.45

#: Corroborating memories needed for K to reach 1.
CORROBORATION_SATURATION: Final = 3

#: Standing bands by confidence, lowest first: (upper bound, standing).
STANDING_BANDS: Final[tuple[tuple[float, Standing], ...]] = (
    (0.30, "quarantine"),
    (0.50, "candidate"),
    (0.90, "working"),
    (1.01, "fact"),
)
INJECTABLE: Final[frozenset[str]] = frozenset({"working", "fact"})
#: The highest confidence a fact kept as a candidate (an assistant's value beside the user's) may carry.
CANDIDATE_MAX_CONFIDENCE: Final = 0.49

#: Gate: propositions whose utility falls below this stop before storage.
GATE_MIN_UTILITY: Final = 0.15
#: Importance of unknown (``custom:``) predicates.
CUSTOM_IMPORTANCE: Final = 0.3

#: Tiering.
HOT_MIN_IMPORTANCE: Final = 0.7
COLD_MAX_IMPORTANCE: Final = 0.15
PROMOTE_ACCESS_COUNT: Final = 5  # recalls within PROMOTE_WINDOW_DAYS that make a warm fact hot
PROMOTE_WINDOW_DAYS: Final = 30
DEMOTE_IDLE_DAYS: Final = 90  # hot facts (not pinned) unused this long fall back to warm

#: Decay: half-life in days of the recency weight, and how long ephemeral facts stay valid by default.
HALF_LIFE_DAYS: Final[dict[str, float | None]] = {
    "stable": None,
    "moderate": 180.0,
    "ephemeral": 14.0,
}
EPHEMERAL_VALID_DAYS: Final = 7.0

#: Utility signals move importance by this much per mark.
SIGNAL_STEP: Final = 0.1

#: Preferences that contradict each other for the same value: "I no longer like jazz" (→ dislikes jazz, with a
#: change cue) supersedes "likes jazz"; without a cue the two are a conflict.
OPPOSITE_PREDICATES: Final[dict[str, tuple[str, ...]]] = {
    "likes": ("dislikes",),
    "loves": ("dislikes",),
    "prefers": ("dislikes",),
    "dislikes": ("likes", "loves", "prefers"),
}

#: Multi-valued predicates whose values fall into slots of their own: one favourite per category ("coffee: flat
#: white" and "coffee: cortado" compete), one preferred thing per kind ("oat milk" and "almond milk" compete, "oat
#: milk" and "dark mode" do not).
KEYED_PREDICATES: Final = frozenset({"has_favorite", "prefers"})
_PREPOSITION = re.compile(r"\s(?:in|on|with|for|at|over|from|to|than|instead)\s.*$")


def value_key(predicate: str, object_norm: str) -> str | None:
    """The slot a value of a keyed predicate falls into (None: no slot, every value stands alone).

    A favourite's category ("coffee" of "coffee: flat white"); a preference's head noun ("milk" of "oat milk in my
    coffee") when it has a modifier to tell values apart.
    """
    if predicate not in KEYED_PREDICATES or not object_norm:
        return None
    if predicate == "has_favorite":
        category, sep, _value = object_norm.partition(":")
        return category.strip() or None if sep else None
    words = _PREPOSITION.sub("", object_norm).split()
    return words[-1] if len(words) >= 2 else None


#: A valid time this much later than the current value counts as a change (UPDATE), not a contradiction.
LATER_VALID_TIME_S: Final = 24 * 3600.0
