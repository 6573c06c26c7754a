"""Models of the workspace's session and upkeep verbs: ``orient``, ``bring_to_mind``, ``reset_seen``, the workspace
``recall``, consolidation (a pass, its report, what is pending) and finding and merging similar subjects.

Split from :mod:`engine.api.models.workspace` (the objects: observations, understandings, intersections), which
these models build on.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from engine.api.models.common import RequestModel, ResponseModel, UserId
from engine.api.models.recall import (
    MAX_LIMIT as MAX_RECALL_LIMIT,
    MAX_QUERY_CHARS as MAX_RECALL_QUERY_CHARS,
    BlockOut,
    EvidenceOut,
)
from engine.api.models.subjects import SubjectOut
from engine.api.models.workspace import (
    MAX_SESSION_CHARS,
    OBSERVATION_EXAMPLE,
    SUBJECT_EXAMPLE,
    UNDERSTANDING_EXAMPLE,
    ObservationOut,
    SubjectName,
    SubjectNames,
    UnderstandingOut,
)
from engine.workspace.rows import MAX_SUBJECTS

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
                    "soul": {**UNDERSTANDING_EXAMPLE, "kind": "soul", "subjects": [], "summary": "Help Ana remember."},
                    "protocol": None,
                    "orientation": None,
                    "pending_consolidation": 2,
                    "recent_observations": [OBSERVATION_EXAMPLE],
                    "recent_understandings": [UNDERSTANDING_EXAMPLE],
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
                    "understandings": [UNDERSTANDING_EXAMPLE],
                    "observations": [OBSERVATION_EXAMPLE],
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
                    "subject": SUBJECT_EXAMPLE,
                    "understandings": [UNDERSTANDING_EXAMPLE],
                    "observations": [OBSERVATION_EXAMPLE],
                    "best_answer": None,
                    "supporting": [],
                    "provenance": [],
                },
                {
                    "mode": "question",
                    "subject": None,
                    "understandings": [UNDERSTANDING_EXAMPLE],
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
