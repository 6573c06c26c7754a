"""Models of the subject workspace (DESIGN §3a): observations, understandings, intersections, neighbourhoods.

The workspace is served as verbs, ``POST /v6/workspace/<verb>`` and the MCP tools of the same names, and both take
and answer these models.  Observations are immutable evidence tagged with subjects; understandings are syntheses
revised by supersession; a relationship between two subjects is what is tagged with both.

The field limits repeat the engine's own (:mod:`engine.workspace.service`) so that ``/openapi.json`` states them;
the engine still validates everything itself (a text of blanks, a name too long, …) and its refusals name the field
the same way.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from engine.api.models.common import Id, RequestModel, ResponseModel, UserId
from engine.api.models.subjects import SubjectOut
from engine.workspace.rows import MAX_CONTENT, MAX_IDS, MAX_SUBJECTS

#: The kinds of understanding (the engine's ``UNDERSTANDING_KINDS``; a test keeps the two in step).
UnderstandingKind = Literal["single_subject", "relationship", "structural", "soul", "protocol", "orientation"]

#: Observations one ``add_observations`` call may write.
MAX_BATCH_OBSERVATIONS = 100
#: Characters of a subject name, a session id, a summary and a search query (the engine's limits).
MAX_NAME_CHARS = 200
MAX_SESSION_CHARS = 200
MAX_UNDERSTANDING_SUMMARY = 1000
MAX_SUBJECT_SUMMARY = 4000
MAX_TITLE_CHARS = 300
MAX_KIND_CHARS = 40
MAX_QUERY_CHARS = 1000
#: The summary a structural understanding gets when none is given.
STRUCTURAL_SUMMARY = "How this subject relates to others by name and containment."

_KINDS_HELP = (
    "single_subject (one subject), relationship (two subjects), structural (one subject: its names and "
    "containment), or soul, protocol, orientation (about the workspace itself, tagged with no subject)"
)

# -- shared field types --------------------------------------------------------------------------------------------
SubjectName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_NAME_CHARS,
        description="A subject's name or alias (`user` is the vault owner).",
        examples=["Ana"],
    ),
]
SubjectNames = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]],
    Field(
        max_length=MAX_SUBJECTS,
        description=f"Subject names or aliases (at most {MAX_SUBJECTS}).",
        examples=[["Ana", "Cairn project"]],
    ),
]
SessionId = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=MAX_SESSION_CHARS,
        description="The writing session (a client's run). Only the session that wrote an observation may delete "
        "it. Over REST it may also come as the `X-Session-Id` header; the body's wins.",
        examples=["claude-desktop-2026-03-01"],
    ),
]
Content = Annotated[
    str,
    Field(min_length=1, max_length=MAX_CONTENT, description=f"The text (at most {MAX_CONTENT} characters)."),
]
ObservationKind = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_KIND_CHARS,
        description="What kind of note this is: note, preference, decision, event, …",
        examples=["note"],
    ),
]
Confidence = Annotated[float, Field(ge=0.0, le=1.0, description="How sure the writer is, 0–1.", examples=[0.8])]
RelatedTo = Annotated[
    list[Id],
    Field(
        max_length=MAX_IDS,
        description="Ids of understandings this observation bears on: it joins their sources, so a consolidation "
        "pass sees they have new evidence.",
    ),
]
SourceIds = Annotated[
    list[Id],
    Field(
        max_length=MAX_IDS,
        description=f"Ids of what it was made from: observations, facts, events, … (at most {MAX_IDS}).",
    ),
]
ObjectIds = Annotated[
    list[Id],
    Field(min_length=1, max_length=MAX_IDS, description=f"Global ids (at most {MAX_IDS}).", examples=[[9101, 9102]]),
]
UnderstandingId = Annotated[Id, Field(description="The understanding's global id.", examples=[9201])]
UnderstandingSummary = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_UNDERSTANDING_SUMMARY,
        description="One or two lines: what the understanding says, for lists and recall.",
    ),
]

# -- examples ------------------------------------------------------------------------------------------------------
SUBJECT_EXAMPLE: dict[str, Any] = {
    "id": 9001,
    "user_id": "default",
    "name": "Ana",
    "kind": "entity",
    "summary": "",
    "aliases": [],
    "tags": [],
    "fact_count": 0,
    "event_count": 0,
    "created_at": "2026-03-01T09:30:02Z",
    "updated_at": "2026-03-01T09:30:02Z",
}
OBSERVATION_EXAMPLE: dict[str, Any] = {
    "id": 9101,
    "user_id": "default",
    "kind": "note",
    "content": "Ana prefers short morning meetings.",
    "confidence": 0.8,
    "observed_at": "2026-03-01T09:30:02Z",
    "session_id": "claude-desktop-2026-03-01",
    "generation": 0,
    "subjects": ["Ana", "Cairn project"],
    "useful_count": 0,
    "questionable_count": 0,
}
UNDERSTANDING_EXAMPLE: dict[str, Any] = {
    "id": 9201,
    "user_id": "default",
    "kind": "single_subject",
    "title": "",
    "summary": "Ana: mornings, short meetings",
    "content": "Ana works best in the morning and keeps meetings short.",
    "subjects": ["Ana"],
    "sources": [9101],
    "status": "active",
    "supersedes": None,
    "superseded_by": None,
    "generation": 0,
    "source": "client",
    "session_id": "claude-desktop-2026-03-01",
    "created_at": "2026-03-01T09:40:00Z",
    "useful_count": 0,
    "questionable_count": 0,
    "active": True,
}
_REMEMBERED_EXAMPLE: dict[str, Any] = {
    "observation": OBSERVATION_EXAMPLE,
    "duplicate": False,
    "subjects_created": ["Cairn project"],
}
_OBSERVATION_IN_EXAMPLE: dict[str, Any] = {
    "content": "Ana prefers short morning meetings.",
    "subject_names": ["Ana", "Cairn project"],
    "kind": "preference",
    "confidence": 0.9,
}


# -- requests ------------------------------------------------------------------------------------------------------
class CreateSubjectsBody(RequestModel):
    """Subjects to have: the ones that do not exist yet are created."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"names": ["Ana", "Cairn project"], "kind": "entity"}]})

    names: SubjectNames = Field(min_length=1, description=f"The subjects' names (1 to {MAX_SUBJECTS}).")
    kind: str = Field(
        default="entity",
        min_length=1,
        max_length=MAX_KIND_CHARS,
        description="The kind of the subjects created: entity, person, project, topic, …",
    )
    user_id: UserId = "default"


class GetSubjectsBody(RequestModel):
    """Subjects to look up by name or alias."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"names": ["Ana", "Nobody"]}]})

    names: SubjectNames = Field(min_length=1, description=f"Names or aliases (1 to {MAX_SUBJECTS}).")
    user_id: UserId = "default"


class UpdateSubjectSummaryBody(RequestModel):
    """A subject's new summary, and optionally its tags."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"subject_name": "Ana", "summary": "Designer on the Cairn project.", "tags": ["team"]}]
        }
    )

    subject_name: SubjectName
    summary: str = Field(
        max_length=MAX_SUBJECT_SUMMARY, description="The summary (empty clears it).", examples=["Designer."]
    )
    tags: list[Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]] | None = Field(
        default=None,
        max_length=MAX_SUBJECTS,
        description="The subject's tags, replacing the old ones (omitted or null: unchanged).",
    )
    user_id: UserId = "default"


class ObservationIn(RequestModel):
    """One observation: a piece of evidence tagged with the subjects it is about."""

    model_config = ConfigDict(json_schema_extra={"examples": [_OBSERVATION_IN_EXAMPLE]})

    content: Content
    subject_names: SubjectNames = Field(
        min_length=1,
        description=f"What it is about (1 to {MAX_SUBJECTS}); subjects that do not exist yet are created.",
    )
    kind: ObservationKind = "note"
    confidence: Confidence = 0.8
    related_to: RelatedTo = Field(default_factory=list)


class RememberBody(ObservationIn):
    """An observation to write; the same content written again is a no-op answering the first one."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{**_OBSERVATION_IN_EXAMPLE, "session_id": "claude-desktop-2026-03-01"}]}
    )

    session_id: SessionId = None
    user_id: UserId = "default"


class AddObservationsBody(RequestModel):
    """Several observations, written in order as ``remember`` writes each one."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "observations": [
                        _OBSERVATION_IN_EXAMPLE,
                        {"content": "Bob reviews every pull request.", "subject_names": ["Bob"]},
                    ],
                    "session_id": "claude-desktop-2026-03-01",
                }
            ]
        }
    )

    observations: list[ObservationIn] = Field(
        min_length=1,
        max_length=MAX_BATCH_OBSERVATIONS,
        description=f"The observations (1 to {MAX_BATCH_OBSERVATIONS}), written in order. An invalid one stops "
        "the call (the error names it, `observations[2].content`); those before it are kept, and sending the "
        "whole list again is harmless: content already stored is a no-op.",
    )
    session_id: SessionId = None
    user_id: UserId = "default"


class DeleteObservationsBody(RequestModel):
    """Observations to delete; only those the given session wrote are."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"ids": [9101, 9102], "session_id": "claude-desktop-2026-03-01"}]}
    )

    ids: ObjectIds
    session_id: SessionId = Field(
        default=None,
        min_length=1,
        max_length=MAX_SESSION_CHARS,
        description="Required, here or as the `X-Session-Id` header (the body's wins): the session that wrote "
        "the observations. Those another session wrote are rejected, with the reason.",
    )
    user_id: UserId = "default"


class SearchObservationsBody(RequestModel):
    """A full-text search of observations."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"query": "morning meetings", "subject_names": ["Ana"], "limit": 20}]}
    )

    query: str = Field(
        min_length=1, max_length=MAX_QUERY_CHARS, description="Words; an observation must contain every one."
    )
    subject_names: SubjectNames = Field(
        default_factory=list, description="Only observations tagged with every one of these subjects."
    )
    limit: int = Field(default=20, ge=1, le=200, description="At most this many, best matches first.")
    user_id: UserId = "default"


class CreateUnderstandingBody(RequestModel):
    """A synthesis over evidence, tagged with subjects and citing its sources."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "content": "Ana works best in the morning and keeps meetings short.",
                    "summary": "Ana: mornings, short meetings",
                    "subject_names": ["Ana"],
                    "source_observation_ids": [9101],
                    "session_id": "claude-desktop-2026-03-01",
                }
            ]
        }
    )

    content: Content
    summary: UnderstandingSummary
    subject_names: SubjectNames = Field(
        default_factory=list,
        description="What it is about: one subject (single_subject, structural), two (relationship), or none "
        "(soul, protocol, orientation). Subjects that do not exist yet are created.",
    )
    kind: UnderstandingKind | None = Field(
        default=None,
        description=f"{_KINDS_HELP}. Default: single_subject for one subject, relationship for two. A new one "
        "supersedes the active understanding of the same kind and subjects.",
    )
    title: str = Field(default="", max_length=MAX_TITLE_CHARS, description="An optional heading.")
    source_observation_ids: SourceIds = Field(default_factory=list)
    session_id: SessionId = None
    user_id: UserId = "default"


class UpdateUnderstandingBody(RequestModel):
    """A revision of an active understanding: a new one supersedes it (the old stays in the history)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "understanding_id": 9201,
                    "new_content": "Ana works best in the morning, keeps meetings short and works remotely.",
                    "new_summary": "Ana: mornings, short meetings, remote",
                    "source_observation_ids": [9102],
                }
            ]
        }
    )

    understanding_id: UnderstandingId
    new_content: Content
    new_summary: UnderstandingSummary
    source_observation_ids: SourceIds = Field(
        default_factory=list, description="More sources, added to the old ones (which are kept)."
    )
    session_id: SessionId = None
    user_id: UserId = "default"


class GetUnderstandingsBody(RequestModel):
    """Which active understandings to read."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"subject_names": ["Ana"]}, {"kind": "soul"}]})

    subject_names: SubjectNames = Field(
        default_factory=list,
        description="Those tagged with every one of these subjects; none named: the workspace's own (soul, "
        "protocol, orientation).",
    )
    kind: UnderstandingKind | None = Field(default=None, description=f"Only this kind: {_KINDS_HELP}.")
    user_id: UserId = "default"


class UnderstandingHistoryBody(RequestModel):
    """An understanding whose revision chain to read."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"understanding_id": 9201}]})

    understanding_id: UnderstandingId
    user_id: UserId = "default"


class SetStructuralUnderstandingBody(RequestModel):
    """A subject's structural understanding: its other names, what it contains and belongs to, merges."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"subject_name": "Ana", "content": "Ana is also called Annie; she is part of the Cairn project team."}
            ]
        }
    )

    subject_name: SubjectName
    content: Content
    summary: str = Field(
        default=STRUCTURAL_SUMMARY,
        min_length=1,
        max_length=MAX_UNDERSTANDING_SUMMARY,
        description="One or two lines for lists and recall.",
    )
    session_id: SessionId = None
    user_id: UserId = "default"


class MarkBody(RequestModel):
    """Observations, understandings or facts to mark."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"ids": [9101, 9201]}]})

    ids: ObjectIds
    user_id: UserId = "default"


class OpenIntersectionBody(RequestModel):
    """Two subjects whose relationship to open."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"subject_a": "Ana", "subject_b": "Bob", "limit": 50}]})

    subject_a: SubjectName
    subject_b: SubjectName
    limit: int = Field(default=50, ge=1, le=500, description="At most this many observations and facts each.")
    user_id: UserId = "default"


class OpenAroundBody(RequestModel):
    """A subject whose neighbourhood to open."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"subject_name": "Ana", "limit": 10}]})

    subject_name: SubjectName
    limit: int = Field(default=10, ge=1, le=100, description="At most this many neighbours.")
    user_id: UserId = "default"


class StatsBody(RequestModel):
    """Whose workspace to count (the body may be left out)."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"user_id": "default"}]})

    user_id: UserId = "default"


# -- responses -----------------------------------------------------------------------------------------------------
class SubjectsCreatedOut(ResponseModel):
    """The subjects asked for, and the names of those that were created."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"subjects": [SUBJECT_EXAMPLE], "subjects_created": ["Ana"]}]}
    )

    subjects: list[SubjectOut] = Field(description="The subjects, in the order named.")
    subjects_created: list[str] = Field(description="The names that did not exist before this call.")


class SubjectsFoundOut(ResponseModel):
    """The subjects found, and the names no subject answers to."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"subjects": [SUBJECT_EXAMPLE], "missing": ["Nobody"]}]})

    subjects: list[SubjectOut] = Field(description="The subjects found, in the order named.")
    missing: list[str] = Field(description="Names no subject (or alias) answers to.")


class ObservationOut(ResponseModel):
    """An observation: evidence tagged with subjects, never edited."""

    model_config = ConfigDict(json_schema_extra={"examples": [OBSERVATION_EXAMPLE]})

    id: int = Field(description="Global id (`GET /v6/objects/{id}`).")
    user_id: str = Field(description="Owner.")
    kind: str = Field(description="What kind of note it is.")
    content: str = Field(description="The text.")
    confidence: float = Field(description="How sure the writer was, 0–1.")
    observed_at: datetime = Field(description="When it was observed (UTC).")
    session_id: str | None = Field(description="The session that wrote it (only it may delete it).")
    generation: int = Field(description="The consolidation generation it was written in.")
    subjects: list[str] = Field(description="The subjects it is tagged with.")
    useful_count: int = Field(description="Times marked useful.")
    questionable_count: int = Field(description="Times marked questionable.")


class RememberOut(ResponseModel):
    """What ``remember`` did."""

    model_config = ConfigDict(json_schema_extra={"examples": [_REMEMBERED_EXAMPLE]})

    observation: ObservationOut = Field(description="The observation: the new one, or the one already holding it.")
    duplicate: bool = Field(description="True when this content was stored already (nothing was written).")
    subjects_created: list[str] = Field(description="Subjects this call created.")


class AddObservationsOut(ResponseModel):
    """What ``remember`` did for each observation, in request order."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"results": [_REMEMBERED_EXAMPLE]}]})

    results: list[RememberOut] = Field(description="One result per observation, in request order.")


class DeletedOut(ResponseModel):
    """The observations deleted, and why each other id was not."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "deleted": [9101],
                    "rejected": {"9102": "written in another session; only the session that wrote it may delete it"},
                }
            ]
        }
    )

    deleted: list[int] = Field(description="The ids deleted.")
    rejected: dict[int, str] = Field(description="Each id not deleted, with the reason.")


class ObservationList(ResponseModel):
    """Observations, best matches first."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"observations": [OBSERVATION_EXAMPLE]}]})

    observations: list[ObservationOut] = Field(description="The observations.")


class UnderstandingOut(ResponseModel):
    """An understanding: a synthesis tagged with subjects, with what it was made from."""

    model_config = ConfigDict(json_schema_extra={"examples": [UNDERSTANDING_EXAMPLE]})

    id: int = Field(description="Global id (`GET /v6/objects/{id}`).")
    user_id: str = Field(description="Owner.")
    kind: UnderstandingKind = Field(description=_KINDS_HELP)
    title: str = Field(description="Heading (may be empty).")
    summary: str = Field(description="One or two lines.")
    content: str = Field(description="The synthesis.")
    subjects: list[str] = Field(description="The subjects it is tagged with.")
    sources: list[int] = Field(description="Ids of what it was made from.")
    status: str = Field(description="active, or superseded once revised.")
    supersedes: int | None = Field(description="The revision it replaced.")
    superseded_by: int | None = Field(description="The revision that replaced it.")
    generation: int = Field(description="The consolidation generation it was written in.")
    source: str = Field(description="Who wrote it: client, consolidation, …")
    session_id: str | None = Field(description="The session that wrote it.")
    created_at: datetime = Field(description="When it was written (UTC).")
    useful_count: int = Field(description="Times marked useful.")
    questionable_count: int = Field(description="Times marked questionable.")
    active: bool = Field(description="True until a revision supersedes it.")


class UnderstandingList(ResponseModel):
    """Understandings (the active ones newest first, or a revision chain oldest first)."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"understandings": [UNDERSTANDING_EXAMPLE]}]})

    understandings: list[UnderstandingOut] = Field(description="The understandings.")


class MarkedOut(ResponseModel):
    """Per id: what was marked, or why nothing was."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "marked": {
                        "9101": "observation",
                        "42": "not found (only observations, understandings and facts can be marked)",
                    }
                }
            ]
        }
    )

    marked: dict[int, str] = Field(
        description="Each id: observation, understanding or fact (the kind counted), or the reason it was not."
    )


class TaggedFactOut(ResponseModel):
    """A current fact tagged with both subjects."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": 5120,
                    "statement": "Ana lives with Bob",
                    "source_text": "Ana shares a flat with Bob",
                    "subject": "Ana",
                }
            ]
        }
    )

    id: int = Field(description="The fact's global id (`GET /v6/facts/{id}`).")
    statement: str = Field(description="The fact as a sentence.")
    source_text: str = Field(description="The quote it was learned from.")
    subject: str = Field(description="The fact's subject.")


class IntersectionOut(ResponseModel):
    """Everything tagged with both subjects: their relationship, as evidence and synthesis."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "subject_a": "Ana",
                    "subject_b": "Bob",
                    "size": 2,
                    "observations": [{**OBSERVATION_EXAMPLE, "subjects": ["Ana", "Bob"]}],
                    "facts": [],
                    "understandings": [{**UNDERSTANDING_EXAMPLE, "kind": "relationship", "subjects": ["Ana", "Bob"]}],
                    "events": 0,
                }
            ]
        }
    )

    subject_a: str = Field(description="The first subject's name.")
    subject_b: str = Field(description="The second subject's name.")
    size: int = Field(description="How much they share: observations, facts, understandings and turns.")
    observations: list[ObservationOut] = Field(description="Observations tagged with both, newest first.")
    facts: list[TaggedFactOut] = Field(description="Current facts tagged with both, most important first.")
    understandings: list[UnderstandingOut] = Field(description="Active understandings tagged with both.")
    events: int = Field(description="Conversation turns that mention both.")


class NeighbourOut(ResponseModel):
    """A subject sharing evidence with the one asked about."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"name": "Bob", "subject_id": 9002, "shared": 3, "summary": "", "relationship": None}]
        }
    )

    name: str = Field(description="The neighbour's name.")
    subject_id: int = Field(description="The neighbour's global id.")
    shared: int = Field(description="The size of their intersection.")
    summary: str = Field(description="The neighbour's summary.")
    relationship: UnderstandingOut | None = Field(description="Their active relationship understanding, if any.")


class AroundOut(ResponseModel):
    """A subject's neighbourhood, the largest intersection first."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "subject_name": "Ana",
                    "neighbours": [
                        {"name": "Bob", "subject_id": 9002, "shared": 3, "summary": "", "relationship": None}
                    ],
                }
            ]
        }
    )

    subject_name: str = Field(description="The subject asked about, as named.")
    neighbours: list[NeighbourOut] = Field(description="Its neighbours, the largest intersection first.")


class WorkspaceStatsOut(ResponseModel):
    """The workspace at a glance."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "generation": 0,
                    "subjects": 3,
                    "observations": 12,
                    "understandings": 2,
                    "superseded_understandings": 1,
                    "unlinked_observations": 9,
                }
            ]
        }
    )

    generation: int = Field(description="The current consolidation generation (0 before the first pass).")
    subjects: int = Field(description="Subjects (merged ones aside).")
    observations: int = Field(description="Observations.")
    understandings: int = Field(description="Active understandings.")
    superseded_understandings: int = Field(description="Understandings replaced by a revision.")
    unlinked_observations: int = Field(description="Observations no understanding cites yet.")
