"""Models of vault-wide operations: forgetting and receipts, background jobs, objects by id."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field

from engine.api.models.common import TIME_FORMATS, Id, RequestModel, ResponseModel, UserId
from engine.api.models.events import EpisodeOut, EventOut
from engine.api.models.facts import ConflictOut, FactOut
from engine.api.models.subjects import SubjectOut

if TYPE_CHECKING:
    from engine.vault import ObjectView

_COUNTS_EXAMPLE: dict[str, Any] = {
    "events": 12,
    "facts": 5,
    "conflicts": 0,
    "episodes": 1,
    "documents": 0,
    "sections": 0,
    "chunks": 0,
    "embeddings": 6,
    "understandings": 0,
    "observations": 0,
    "subjects": 1,
    "jobs": 0,
    "backups": 0,
}
_JOB_EXAMPLE: dict[str, Any] = {
    "id": 77,
    "kind": "summarize_episode",
    "status": "parked",
    "attempts": 5,
    "max_attempts": 5,
    "last_error": "ModelUnavailable: Ollama is not running",
    "warnings": [],
    "created_at": "2026-03-01T10:00:00Z",
    "updated_at": "2026-03-01T10:20:00Z",
    "run_after": "2026-03-01T10:20:00Z",
    "payload": {"episode_id": 4100},
}


class ForgetBody(RequestModel):
    """What to forget: everything of ``user_id`` that matches every other field given."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"user_id": "default", "conversation_id": "chat-2026-03-01", "dry_run": True}]}
    )

    user_id: UserId = Field(
        description="Required: forgetting never crosses users. With no other field, everything "
        "of this user is forgotten."
    )
    conversation_id: str | None = Field(default=None, min_length=1, description="Only this conversation.")
    project_id: str | None = Field(default=None, min_length=1, description="Only this project.")
    document_id: Id | None = Field(default=None, description="Only this document.")
    since: datetime | None = Field(default=None, description=f"Only from this time on ({TIME_FORMATS}).")
    until: datetime | None = Field(default=None, description=f"Only before this time ({TIME_FORMATS}).")
    dry_run: bool = Field(default=False, description="Only count what would be forgotten.")
    purge_backups: bool = Field(
        default=True, description="Also delete backup files (they still hold the forgotten data)."
    )


class ReceiptOut(ResponseModel):
    """What a forget (or a dry run) removed: the scope and the counts, never the content."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "receipt_id": 9001,
                    "scope": {"user_id": "default", "conversation_id": "chat-2026-03-01"},
                    "dry_run": False,
                    "deleted_counts": _COUNTS_EXAMPLE,
                    "created_at": "2026-03-05T12:00:00Z",
                    "notes": [
                        "Every backup was deleted (2 files): a backup is a whole copy of the vault and cannot be "
                        "scrubbed in part, so none made before this forget is kept."
                    ],
                }
            ]
        }
    )

    receipt_id: int = Field(description="Global id of the receipt.")
    scope: dict[str, Any] = Field(description="The scope as given (identifiers and times only).")
    dry_run: bool = Field(description="True when nothing was deleted.")
    deleted_counts: dict[str, int] = Field(
        description="Rows removed (or that would be) by kind: events, facts, conflicts, episodes, "
        "documents, sections, chunks, embeddings, understandings, subjects, jobs, backups."
    )
    created_at: datetime = Field(description="When it ran (UTC).")
    notes: list[str] = Field(description="What the counts do not say: how backups were treated.")


class JobOut(ResponseModel):
    """A background job (enrichment, episode summary, …)."""

    model_config = ConfigDict(json_schema_extra={"examples": [_JOB_EXAMPLE]})

    id: int = Field(description="Job id.")
    kind: str = Field(description="enrich, summarize_episode, …")
    status: str = Field(description="queued, running or parked (failed for good until retried).")
    attempts: int = Field(description="Attempts made.")
    max_attempts: int = Field(description="Attempts allowed before it is parked.")
    last_error: str | None = Field(description="The error of the last failed attempt.")
    warnings: list[str] = Field(description="Degradations reported by the last attempt.")
    created_at: datetime = Field(description="When it was queued (UTC).")
    updated_at: datetime = Field(description="Last change (UTC).")
    run_after: datetime = Field(description="Not run before this time (retry back-off) (UTC).")
    payload: dict[str, Any] = Field(description="What the job works on (ids).")


class MigrationOut(ResponseModel):
    """A re-embedding under way after the embedder changed."""

    from_model: str = Field(description="The embedder the vectors are being moved from.")
    to_model: str = Field(description="The embedder in use, which every vector is being made with.")
    started_at: datetime = Field(description="When the change was noticed (UTC).")
    total: int = Field(description="Objects to re-embed in all.")
    done: int = Field(description="Objects re-embedded so far.")
    remaining: int = Field(description="Objects still to re-embed; until then searches use both spaces.")
    reason: str = Field(description="What changed.")


class VectorsOut(ResponseModel):
    """The vault's embedder and what waits for it."""

    active: str = Field(description="The embedder every vector belongs to (model id).")
    dim: int = Field(description="Its dimensions.")
    migration: MigrationOut | None = Field(description="A re-embedding under way, with its progress; null when none.")
    queued: int = Field(description="Objects stored while the embedder was down, waiting for their vectors.")
    last_error: str | None = Field(description="The embedder's last failure, while it is not recovered from.")
    last_error_at: datetime | None = Field(description="When it failed (UTC).")


class ModelOut(ResponseModel):
    """The language model in use and its last error."""

    engine: str = Field(description="'ollama:<model>', 'openai:<model>' or 'simple' (the rule path).")
    reason: str = Field(description="Why this one.")
    last_error: str | None = Field(description="The model's last failure or unusable answer.")
    last_error_at: datetime | None = Field(description="When (UTC).")


class JobsOut(ResponseModel):
    """The background job queue: depth by status and kind, and the parked failures."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "queue_depth": 3,
                    "queued": 2,
                    "running": 1,
                    "parked": 1,
                    "by_kind": {"enrich": 3},
                    "failures": [_JOB_EXAMPLE],
                }
            ]
        }
    )

    queue_depth: int = Field(description="Jobs waiting or running.")
    queued: int = Field(description="Jobs waiting.")
    running: int = Field(description="Jobs running now.")
    parked: int = Field(description="Jobs that failed every attempt; see `failures`.")
    by_kind: dict[str, int] = Field(description="Waiting or running jobs by kind.")
    failures: list[JobOut] = Field(description="The most recent parked jobs with their errors.")
    vectors: VectorsOut | None = Field(
        default=None, description="The embedder, a re-embedding's progress, and vectors waiting for the embedder."
    )
    model: ModelOut | None = Field(default=None, description="The language model in use and its last error.")


class RetryBody(RequestModel):
    """Which parked jobs to retry."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"job_ids": [77]}, {}]})

    job_ids: list[Id] | None = Field(
        default=None,
        max_length=10_000,
        description="The parked jobs to requeue; omitted: all of them.",
    )


class RetryOut(ResponseModel):
    """How many jobs went back into the queue."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"requeued": 1}]})

    requeued: int = Field(description="Parked jobs requeued with a fresh attempt budget.")


ObjectValue = FactOut | EventOut | SubjectOut | ConflictOut | EpisodeOut | ReceiptOut


class ObjectOut(ResponseModel):
    """Any object by its global id."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"id": 42, "kind": "subject", "value": {"id": 42, "name": "Melanie", "...": "…"}}]
        }
    )

    id: int = Field(description="The global id.")
    kind: str = Field(
        description="fact, event, subject, conflict, episode, receipt, or another kind "
        "(document, span, job, …) whose value is not served here."
    )
    value: ObjectValue | None = Field(
        description="The object, shaped like its own route's answer; null for kinds without one."
    )

    @classmethod
    def of_view(cls, view: ObjectView) -> ObjectOut:
        """The answer for one :class:`~engine.vault.ObjectView` (REST and MCP alike)."""
        model = VALUE_MODELS.get(view.kind)
        value = model.of(view.value) if model is not None and view.value is not None else None
        return cls(id=view.id, kind=view.kind, value=value)


#: The response model of each kind that has one; other kinds answer ``value: null``.
VALUE_MODELS: dict[str, type[ObjectValue]] = {
    "fact": FactOut,
    "event": EventOut,
    "subject": SubjectOut,
    "conflict": ConflictOut,
    "episode": EpisodeOut,
    "receipt": ReceiptOut,
}
