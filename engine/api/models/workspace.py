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
from engine.api.models.recall import (
    MAX_LIMIT as MAX_RECALL_LIMIT,
    MAX_QUERY_CHARS as MAX_RECALL_QUERY_CHARS,
    BlockOut,
    EvidenceOut,
)
from engine.api.models.subjects import SubjectOut
from engine.workspace.service import MAX_CONTENT, MAX_IDS, MAX_SUBJECTS

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
_SUBJECT_EXAMPLE: dict[str, Any] = {
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
_OBSERVATION_EXAMPLE: dict[str, Any] = {
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
_UNDERSTANDING_EXAMPLE: dict[str, Any] = {
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
    "observation": _OBSERVATION_EXAMPLE,
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
        json_schema_extra={"examples": [{"subjects": [_SUBJECT_EXAMPLE], "subjects_created": ["Ana"]}]}
    )

    subjects: list[SubjectOut] = Field(description="The subjects, in the order named.")
    subjects_created: list[str] = Field(description="The names that did not exist before this call.")


class SubjectsFoundOut(ResponseModel):
    """The subjects found, and the names no subject answers to."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"subjects": [_SUBJECT_EXAMPLE], "missing": ["Nobody"]}]})

    subjects: list[SubjectOut] = Field(description="The subjects found, in the order named.")
    missing: list[str] = Field(description="Names no subject (or alias) answers to.")


class ObservationOut(ResponseModel):
    """An observation: evidence tagged with subjects, never edited."""

    model_config = ConfigDict(json_schema_extra={"examples": [_OBSERVATION_EXAMPLE]})

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

    model_config = ConfigDict(json_schema_extra={"examples": [{"observations": [_OBSERVATION_EXAMPLE]}]})

    observations: list[ObservationOut] = Field(description="The observations.")


class UnderstandingOut(ResponseModel):
    """An understanding: a synthesis tagged with subjects, with what it was made from."""

    model_config = ConfigDict(json_schema_extra={"examples": [_UNDERSTANDING_EXAMPLE]})

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

    model_config = ConfigDict(json_schema_extra={"examples": [{"understandings": [_UNDERSTANDING_EXAMPLE]}]})

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
                    "observations": [{**_OBSERVATION_EXAMPLE, "subjects": ["Ana", "Bob"]}],
                    "facts": [],
                    "understandings": [{**_UNDERSTANDING_EXAMPLE, "kind": "relationship", "subjects": ["Ana", "Bob"]}],
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


# -- sessions: orient, bring_to_mind, reset_seen -------------------------------------------------------------------
#: Characters of a ``bring_to_mind`` topic and of a heartbeat token (the engine's limits).
MAX_TOPIC_CHARS = 4000
MAX_TOKEN_CHARS = 200
#: The conversation a question-mode ``recall`` is asked in (recall needs one; the workspace has none of its own).
RECALL_CONVERSATION = "workspace"

RequiredSession = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=MAX_SESSION_CHARS,
        description="Required, here or as the `X-Session-Id` header (the body's wins): the session (a client's "
        "run) whose seen log and heartbeat this call reads and writes.",
        examples=["claude-desktop-2026-03-01"],
    ),
]

_BLOCK_EXAMPLE: dict[str, Any] = {
    "kind": "fact",
    "id": 5120,
    "content": "Ana lives in Lisbon",
    "score": 0.164,
    "source_ids": [5120, 4101],
    "evidence": [
        {
            "text": "Ana moved to Lisbon last month",
            "source_kind": "event",
            "source_id": 4101,
            "at": "2026-03-01T09:30:00Z",
            "author": "user",
            "start": 0,
            "end": 30,
        }
    ],
    "at": "2026-02-01T00:00:00Z",
    "channels": ["keyword", "predicate"],
    "meta": {"subject": "Ana", "predicate": "lives_in", "object": "Lisbon", "injected": True},
}


class OrientBody(RequestModel):
    """A session starting (or starting again after its context was compacted)."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"session_id": "claude-desktop-2026-03-01"}]})

    session_id: RequiredSession = None
    recent: int = Field(default=10, ge=1, le=50, description="How many of the newest observations and understandings.")
    user_id: UserId = "default"


class BringToMindBody(RequestModel):
    """A topic or the conversation's current context: what the workspace holds on it that this session has not seen."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "topic_or_context": "Planning the offsite with Ana and Bob",
                    "session_id": "claude-desktop-2026-03-01",
                    "last_token": "9f2c4e1a7b3d5f60",
                }
            ]
        }
    )

    topic_or_context: str = Field(
        min_length=1,
        max_length=MAX_TOPIC_CHARS,
        description="The topic, or the conversation's latest context: subjects it names and words it holds are "
        "looked up.",
    )
    session_id: RequiredSession = None
    last_token: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_TOKEN_CHARS,
        description="The `heartbeat_token` of this session's previous answer (orient or bring_to_mind). A "
        "different one, or none for a session seen before, means the context was compacted: the seen log starts "
        "again and the answer says `compacted`.",
    )
    include_seen: bool = Field(default=False, description="Also bring back what this session was already shown.")
    limit: int = Field(default=8, ge=1, le=50, description="At most this many understandings and observations each.")
    user_id: UserId = "default"


class ResetSeenBody(RequestModel):
    """A session whose seen log to empty."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"session_id": "claude-desktop-2026-03-01"}]})

    session_id: RequiredSession = None
    user_id: UserId = "default"


class OrientedOut(ResponseModel):
    """What an assistant reads first in a session."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "soul": {**_UNDERSTANDING_EXAMPLE, "kind": "soul", "subjects": [], "summary": "Help Ana remember."},
                    "protocol": None,
                    "orientation": None,
                    "pending_consolidation": 2,
                    "recent_observations": [_OBSERVATION_EXAMPLE],
                    "recent_understandings": [_UNDERSTANDING_EXAMPLE],
                    "heartbeat_token": "9f2c4e1a7b3d5f60",
                }
            ]
        }
    )

    soul: UnderstandingOut | None = Field(
        description="The workspace's soul (why it exists, for whom), or null. Its `summary` is the note to keep "
        "through a context compaction."
    )
    protocol: UnderstandingOut | None = Field(
        description="How to work with the workspace, or null. Its `summary` is the note to keep through a context "
        "compaction."
    )
    orientation: UnderstandingOut | None = Field(
        description="Where things stand, or null. Its `summary` is the note to keep through a context compaction."
    )
    pending_consolidation: int = Field(description="Subjects with evidence newer than the last consolidation pass.")
    recent_observations: list[ObservationOut] = Field(description="The newest observations, newest first.")
    recent_understandings: list[UnderstandingOut] = Field(description="The newest active understandings.")
    heartbeat_token: str = Field(
        description="Send it as `last_token` to the next bring_to_mind. Orient starts the session afresh: its "
        "seen log is emptied."
    )


class BroughtToMindOut(ResponseModel):
    """What the workspace holds on a topic that this session had not seen yet."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "understandings": [_UNDERSTANDING_EXAMPLE],
                    "observations": [_OBSERVATION_EXAMPLE],
                    "heartbeat_token": "0b81d5c3e2f4a697",
                    "compacted": False,
                    "already_seen": 3,
                }
            ]
        }
    )

    understandings: list[UnderstandingOut] = Field(
        description="Active understandings of the subjects the topic names, then those whose words match it."
    )
    observations: list[ObservationOut] = Field(
        description="Observations on the topic that no consolidation pass has taken in yet."
    )
    heartbeat_token: str = Field(description="Send it as `last_token` next time.")
    compacted: bool = Field(
        description="True when the token sent was not the last one issued (or none was sent for a known session), "
        "or the session was quiet for more than 30 minutes: its context was taken as lost and the seen log "
        "started again."
    )
    already_seen: int = Field(description="Matching items left out because this session was already shown them.")


class ResetSeenOut(ResponseModel):
    """How many items the session's seen log held."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"cleared": 12}]})

    cleared: int = Field(description="Items forgotten from the seen log; the next bring_to_mind may repeat them.")


# -- recall --------------------------------------------------------------------------------------------------------
class WorkspaceRecallBody(RequestModel):
    """A subject's name, or a question."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"query": "Ana"}, {"query": "Where does Ana live?", "limit": 10}]}
    )

    query: str = Field(
        min_length=1,
        max_length=MAX_RECALL_QUERY_CHARS,
        description="Exactly a subject's name or alias (subject mode), or anything else: a question to the "
        "vault's recall (question mode).",
    )
    limit: int = Field(
        default=10,
        ge=1,
        le=MAX_RECALL_LIMIT,
        description="Subject mode: at most this many observations. Question mode: at most this many ranked blocks.",
    )
    user_id: UserId = "default"


class ProvenanceOut(ResponseModel):
    """Where a returned block comes from."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"id": 5120, "kind": "fact", "source_ids": [5120, 4101], "evidence": _BLOCK_EXAMPLE["evidence"]}
            ]
        }
    )

    id: int = Field(description="The block's global id.")
    kind: str = Field(description="What the block is: fact, event, episode, …")
    source_ids: list[int] = Field(description="Ids of the item and what it was drawn from.")
    evidence: list[EvidenceOut] = Field(description="The verbatim quotes it rests on, with their sources.")


class WorkspaceRecallOut(ResponseModel):
    """A subject's picture (subject mode) or the vault's answer to a question (question mode)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "mode": "subject",
                    "subject": _SUBJECT_EXAMPLE,
                    "understandings": [_UNDERSTANDING_EXAMPLE],
                    "observations": [_OBSERVATION_EXAMPLE],
                    "best_answer": None,
                    "supporting": [],
                    "provenance": [],
                },
                {
                    "mode": "question",
                    "subject": None,
                    "understandings": [_UNDERSTANDING_EXAMPLE],
                    "observations": [],
                    "best_answer": _BLOCK_EXAMPLE,
                    "supporting": [],
                    "provenance": [
                        {
                            "id": 5120,
                            "kind": "fact",
                            "source_ids": [5120, 4101],
                            "evidence": _BLOCK_EXAMPLE["evidence"],
                        }
                    ],
                },
            ]
        }
    )

    mode: Literal["subject", "question"] = Field(
        description="subject: the query is exactly a subject's name or alias; question: anything else, answered by "
        "the vault's recall."
    )
    subject: SubjectOut | None = Field(description="Subject mode: the subject. Question mode: null.")
    understandings: list[UnderstandingOut] = Field(
        description="Subject mode: the subject's active understandings. Question mode: the active understandings "
        "of the subjects the question names."
    )
    observations: list[ObservationOut] = Field(
        description="Subject mode: the subject's newest observations. Question mode: empty."
    )
    best_answer: BlockOut | None = Field(
        description="Question mode: the fact that answers best, or null. Subject mode: null."
    )
    supporting: list[BlockOut] = Field(
        description="Question mode: the other answering facts, then the facts that bear on the question. Subject "
        "mode: empty."
    )
    provenance: list[ProvenanceOut] = Field(
        description="Question mode: for `best_answer` and each `supporting` block, its id, kind and evidence. "
        "Subject mode: empty."
    )


# -- consolidation -------------------------------------------------------------------------------------------------
class ConsolidateBody(RequestModel):
    """A consolidation pass to run now, or to queue (the body may be left out)."""

    model_config = ConfigDict(json_schema_extra={"examples": [{}, {"background": True}]})

    background: bool = Field(
        default=False,
        description="Queue the pass as a background job instead of running it now (one queued pass per user).",
    )
    user_id: UserId = "default"


class ConsolidatedOut(ResponseModel):
    """What one consolidation pass did."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "generation": 3,
                    "subjects_written": ["Ana", "Bob"],
                    "relationships_written": [["Ana", "Bob"]],
                    "unchanged": 1,
                    "writer": "extractive",
                    "warnings": [],
                }
            ]
        }
    )

    generation: int = Field(description="The generation this pass started.")
    subjects_written: list[str] = Field(description="Subjects whose understanding was written or revised.")
    relationships_written: list[list[str]] = Field(
        description="Pairs of subjects whose relationship understanding was written or revised, each `[a, b]`."
    )
    unchanged: int = Field(description="Understandings whose text would not change, so were not revised.")
    writer: str = Field(
        description="Who wrote the texts: extractive (the cited draft itself), or the configured model and its "
        "prompt's hash."
    )
    warnings: list[str] = Field(description="Drafts kept because the model did not answer, in words.")


class ConsolidationQueuedOut(ResponseModel):
    """Whether a background pass was queued."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"queued": True, "job_id": 8812}]})

    queued: bool = Field(description="False when a pass of this user was queued already (nothing new was queued).")
    job_id: int | None = Field(
        description="The id of the job queued (a `consolidate` job, counted by `GET /v6/jobs`), or null."
    )


class ConsolidationReportBody(RequestModel):
    """How long the report's lists may be (the body may be left out)."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"limit": 50}]})

    limit: int = Field(default=50, ge=1, le=500, description="At most this many entries in each list.")
    user_id: UserId = "default"


class PendingConsolidationBody(RequestModel):
    """Whose workspace to ask about (the body may be left out)."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"user_id": "default"}]})

    user_id: UserId = "default"


class SubjectNeedingOut(ResponseModel):
    """A subject with evidence but no understanding of its own."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"name": "Ana", "items": 7}]})

    name: str = Field(description="The subject's name.")
    items: int = Field(description="Its current facts and observations.")


class IntersectionNeedingOut(ResponseModel):
    """Two subjects sharing much evidence with no relationship understanding written."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"subject_a": "Ana", "subject_b": "Bob", "shared": 5}]})

    subject_a: str = Field(description="One subject's name.")
    subject_b: str = Field(description="The other's.")
    shared: int = Field(description="Observations and facts tagged with both.")


class DenseIntersectionOut(ResponseModel):
    """Two subjects whose summaries overlap although they share little evidence."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"subject_a": "Cairn", "subject_b": "Cairn project", "similarity": 0.6}]}
    )

    subject_a: str = Field(description="One subject's name.")
    subject_b: str = Field(description="The other's.")
    similarity: float = Field(description="The overlap of their summaries' words, 0–1.")


class QuestionableOut(ResponseModel):
    """An item marked questionable more often than useful."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"id": 9101, "kind": "observation"}]})

    id: int = Field(description="Its global id.")
    kind: str = Field(description="observation, understanding or fact.")


class ConsolidationReportOut(ResponseModel):
    """What consolidation (or the assistant) should look at next."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "generation": 3,
                    "pending_subjects": 2,
                    "subjects_needing_understanding": [{"name": "Ana", "items": 7}],
                    "stale_understandings": [9201],
                    "intersections_needing_synthesis": [{"subject_a": "Ana", "subject_b": "Bob", "shared": 5}],
                    "dense_intersections": [{"subject_a": "Cairn", "subject_b": "Cairn project", "similarity": 0.6}],
                    "unlinked_observations": [9102, 9101],
                    "questionable": [{"id": 9101, "kind": "observation"}],
                }
            ]
        }
    )

    generation: int = Field(description="The current consolidation generation.")
    pending_subjects: int = Field(description="Subjects with evidence newer than the last pass.")
    subjects_needing_understanding: list[SubjectNeedingOut] = Field(
        description="Subjects with evidence (two items or more) and no understanding of their own, most first."
    )
    stale_understandings: list[int] = Field(
        description="Ids of active understandings that have newer evidence than themselves."
    )
    intersections_needing_synthesis: list[IntersectionNeedingOut] = Field(
        description="Pairs sharing enough evidence for a relationship understanding and having none, most first."
    )
    dense_intersections: list[DenseIntersectionOut] = Field(
        description="Pairs whose summaries overlap although they share little: perhaps one subject under two "
        "names (see find_similar_subjects and merge_subjects)."
    )
    unlinked_observations: list[int] = Field(description="Ids of observations no understanding cites, newest first.")
    questionable: list[QuestionableOut] = Field(description="Items marked questionable more often than useful.")


class PendingConsolidationOut(ResponseModel):
    """How much waits for consolidation."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"pending_subjects": 2}]})

    pending_subjects: int = Field(description="Subjects with evidence newer than the last consolidation pass.")


# -- merging subjects ----------------------------------------------------------------------------------------------
class FindSimilarSubjectsBody(RequestModel):
    """A subject name whose look-alikes to find."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"subject_name": "Bob", "threshold": 0.75}]})

    subject_name: SubjectName
    threshold: float = Field(default=0.75, ge=0.0, le=1.0, description="The least similarity to list, 0–1.")
    limit: int = Field(default=10, ge=1, le=100, description="At most this many, best first.")
    user_id: UserId = "default"


class MergeSubjectsBody(RequestModel):
    """Subjects to fold into one."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"subject_name": "Bob Smith", "names": ["Bob"]}]})

    subject_name: SubjectName = Field(description="The subject to keep (name or alias); the others merge into it.")
    names: SubjectNames = Field(
        min_length=1,
        description=f"The subjects merged into it (1 to {MAX_SUBJECTS}): their facts, turns, observations and "
        "understandings move to it and their names become its aliases.",
    )
    user_id: UserId = "default"


class SimilarSubjectOut(ResponseModel):
    """A subject whose name looks like the one asked about: a merge candidate."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"subject_id": 9003, "name": "Bob Smith", "score": 0.85}]}
    )

    subject_id: int = Field(description="Its global id.")
    name: str = Field(description="Its name.")
    score: float = Field(description="How alike the names (or an alias) are, 0–1.")


class SimilarSubjectsOut(ResponseModel):
    """Merge candidates, best first."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"subjects": [{"subject_id": 9003, "name": "Bob Smith", "score": 0.85}]}]}
    )

    subjects: list[SimilarSubjectOut] = Field(description="Subjects whose name or alias looks alike, best first.")
