"""The workspace's objects as the engine hands them out: observations, understandings, intersections, neighbours.

Plain frozen dataclasses (DTOs): nothing here touches the database.  The subject/Venn model behind them is DESIGN
§3a: observations are immutable evidence tagged with subjects; understandings are syntheses over evidence, revised
by supersession (a revision is a new row, the old one points at it); a relationship *is* an intersection.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

#: The kinds of understanding (the schema's CHECK holds the same list).
UNDERSTANDING_KINDS = ("single_subject", "relationship", "structural", "soul", "protocol", "orientation")
#: Kinds about the workspace as a whole: tagged with no subject, one active row each.
WORKSPACE_KINDS = ("soul", "protocol", "orientation")


@dataclass(frozen=True, slots=True)
class Observation:
    """A piece of evidence a client or the user wrote down, tagged with the subjects it is about; never edited."""

    id: int
    user_id: str
    kind: str
    content: str
    confidence: float
    observed_at: datetime
    session_id: str | None
    generation: int
    subjects: tuple[str, ...]
    useful_count: int = 0
    questionable_count: int = 0


@dataclass(frozen=True, slots=True)
class Understanding:
    """A consolidated synthesis tagged with subjects, with the ids of what it was made from.

    ``status`` is ``active`` until a revision supersedes it (``superseded_by`` then names the revision).
    """

    id: int
    user_id: str
    kind: str
    title: str
    summary: str
    content: str
    subjects: tuple[str, ...]
    sources: tuple[int, ...]
    status: str
    supersedes: int | None
    superseded_by: int | None
    generation: int
    source: str
    session_id: str | None
    created_at: datetime
    useful_count: int = 0
    questionable_count: int = 0

    @property
    def active(self) -> bool:
        """Not superseded by a revision."""
        return self.superseded_by is None and self.status == "active"


@dataclass(frozen=True, slots=True)
class Remembered:
    """What ``remember`` did: the observation (new, or the one already holding this content)."""

    observation: Observation
    duplicate: bool
    subjects_created: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TaggedFact:
    """A current fact tagged with the subjects asked about (its statement and evidence, for reading)."""

    id: int
    statement: str
    source_text: str
    subject: str


@dataclass(frozen=True, slots=True)
class Intersection:
    """Everything tagged with both subjects: their relationship, as evidence and synthesis."""

    subject_a: str
    subject_b: str
    observations: tuple[Observation, ...]
    facts: tuple[TaggedFact, ...]
    understandings: tuple[Understanding, ...]
    events: int

    @property
    def size(self) -> int:
        """How much the two share (observations, facts, understandings and turns)."""
        return len(self.observations) + len(self.facts) + len(self.understandings) + self.events


@dataclass(frozen=True, slots=True)
class Neighbour:
    """A subject sharing evidence with the one asked about, ranked by the size of what they share."""

    name: str
    subject_id: int
    shared: int
    summary: str
    relationship: Understanding | None = None


@dataclass(frozen=True, slots=True)
class Deleted:
    """What ``delete_observations`` did: the ids removed, and why each other id was not."""

    deleted: tuple[int, ...]
    rejected: dict[int, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class WorkspaceStats:
    """The workspace at a glance."""

    generation: int
    subjects: int
    observations: int
    understandings: int
    superseded_understandings: int
    unlinked_observations: int


@dataclass(frozen=True, slots=True)
class Oriented:
    """What ``orient`` gives an assistant at the start of a session."""

    soul: Understanding | None
    protocol: Understanding | None
    orientation: Understanding | None
    pending_consolidation: int
    recent_observations: tuple[Observation, ...]
    recent_understandings: tuple[Understanding, ...]
    heartbeat_token: str


@dataclass(frozen=True, slots=True)
class BroughtToMind:
    """What ``bring_to_mind`` surfaced, the token to send back next time, and whether the context was lost."""

    understandings: tuple[Understanding, ...]
    observations: tuple[Observation, ...]
    heartbeat_token: str
    compacted: bool
    already_seen: int


@dataclass(frozen=True, slots=True)
class SubjectRecall:
    """The workspace ``recall`` in subject mode: the subject, its understandings, its newest observations."""

    subject: Any
    understandings: tuple[Understanding, ...]
    observations: tuple[Observation, ...]


@dataclass(frozen=True, slots=True)
class SimilarSubject:
    """A subject whose name looks like another's: a merge candidate."""

    subject_id: int
    name: str
    score: float


@dataclass(frozen=True, slots=True)
class ConsolidationReport:
    """What consolidation should look at next."""

    generation: int
    pending_subjects: int
    subjects_needing_understanding: tuple[tuple[str, int], ...]
    stale_understandings: tuple[int, ...]
    intersections_needing_synthesis: tuple[tuple[str, str, int], ...]
    dense_intersections: tuple[tuple[str, str, float], ...]
    unlinked_observations: tuple[int, ...]
    questionable: tuple[tuple[int, str], ...]


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One item ``search`` found: its score, the perspective whose vector matched best (None: found by its words
    alone), and whether an active understanding already covers it (observations only)."""

    kind: str
    id: int
    score: float
    matched_perspective: str | None
    covered: bool
    understanding: Understanding | None = None
    observation: Observation | None = None


@dataclass(frozen=True, slots=True)
class Searched:
    """What ``search`` answers: the hits, the perspectives searched, and whether they collapsed to one vector (the
    embedder ignores instructions) — with a note saying so, or saying what was left out."""

    hits: tuple[SearchHit, ...]
    perspectives: tuple[str, ...]
    collapsed: bool
    embedder: str
    notes: tuple[str, ...] = ()
