"""Models of facts and conflicts: the fact, pages, truth, corrections, conflict resolution."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator

from engine.api.models.common import Id, Page, RequestModel, ResponseModel, UserId

Tier = Literal["hot", "warm", "cold"]
Standing = Literal["quarantine", "candidate", "working", "fact", "challenged"]
Status = Literal["active", "contested", "superseded", "retracted", "deleted"]
Signal = Literal["useful", "questionable"]

_FACT_EXAMPLE: dict[str, Any] = {
    "id": 5120,
    "user_id": "default",
    "project_id": None,
    "subject_id": 7,
    "subject": "user",
    "predicate": "lives_in",
    "object_text": "Lisbon",
    "statement": "User lives in Lisbon",
    "source_text": "I moved to Lisbon last month",
    "source_start": 0,
    "source_end": 28,
    "event_id": 4101,
    "span_id": None,
    "conversation_id": "chat-2026-03-01",
    "source_role": "user",
    "confidence": 0.93,
    "importance": 0.8,
    "tier": "hot",
    "tier_pinned": False,
    "standing": "fact",
    "kind": "identity",
    "decay": "stable",
    "valid_from": "2026-02-01T00:00:00Z",
    "valid_to": None,
    "recorded_at": "2026-03-01T09:30:02Z",
    "updated_at": "2026-03-01T09:30:02Z",
    "superseded_at": None,
    "superseded_by": None,
    "previous_id": None,
    "status": "active",
    "extractor": "rules",
    "prompt_hash": None,
    "access_count": 0,
    "last_accessed_at": None,
    "useful_count": 0,
    "questionable_count": 0,
    "corroboration": 0,
    "metadata": {"source_class": "user"},
    "injectable": True,
}

_TRUTH_EXAMPLE: dict[str, Any] = {
    "subject": "user",
    "predicate": "lives_in",
    "cardinality": "single",
    "fact": _FACT_EXAMPLE,
    "alternatives": 0,
}
_CONFLICT_EXAMPLE: dict[str, Any] = {
    "id": 6001,
    "user_id": "default",
    "subject": "user",
    "predicate": "lives_in",
    "status": "open",
    "reason": "contradiction",
    "fact_a": _FACT_EXAMPLE,
    "fact_b": {
        **_FACT_EXAMPLE,
        "id": 5188,
        "object_text": "Porto",
        "statement": "User lives in Porto",
    },
    "resolution": None,
    "winner_id": None,
    "resolved_by": None,
    "created_at": "2026-03-02T08:00:00Z",
    "resolved_at": None,
}


class FactOut(ResponseModel):
    """One fact with its evidence, scores, lifecycle and usage."""

    model_config = ConfigDict(json_schema_extra={"examples": [_FACT_EXAMPLE]})

    id: int = Field(description="Global id.")
    user_id: str = Field(description="Owner of the fact.")
    project_id: str | None = Field(description="Project scope, if any.")
    subject_id: int = Field(description="The subject's id (`GET /v6/subjects/{id}`).")
    subject: str = Field(description="Who or what it is about; `user` is the vault owner.")
    predicate: str = Field(description="Catalog predicate, or `custom:<slug>`.")
    object_text: str = Field(description="The value.")
    statement: str = Field(description="The fact as a sentence (what is embedded and searched).")
    source_text: str = Field(description="The verbatim quote it was learned from.")
    source_start: int | None = Field(description="Offset of the quote in its event or span.")
    source_end: int | None = Field(description="End offset of the quote.")
    event_id: int | None = Field(description="The event it came from.")
    span_id: int | None = Field(description="The document span it came from.")
    conversation_id: str | None = Field(description="The conversation it came from.")
    source_role: str = Field(description="user, assistant, tool, manual, …")
    confidence: float = Field(description="0–1, from the scorer.")
    importance: float = Field(description="0–1 utility; drives tier and recall priority.")
    tier: Tier = Field(description="hot: always recalled · warm: by relevance · cold: archive.")
    tier_pinned: bool = Field(description="True when the tier was set by hand.")
    standing: Standing = Field(description="Trust band from confidence (challenged: in conflict).")
    kind: str = Field(description="identity, occupational, preference, behavioral, temporal, …")
    decay: str = Field(description="stable, moderate or ephemeral.")
    valid_from: datetime | None = Field(description="When it became true in the world (UTC).")
    valid_to: datetime | None = Field(description="When it stopped being true (UTC).")
    recorded_at: datetime = Field(description="When the vault learned it (UTC).")
    updated_at: datetime = Field(description="Last change (UTC); the list order.")
    superseded_at: datetime | None = Field(description="When a newer version replaced it (UTC).")
    superseded_by: int | None = Field(description="The newer version.")
    previous_id: int | None = Field(description="The version it replaced.")
    status: Status = Field(description="Lifecycle status (deleted is a soft delete).")
    extractor: str = Field(description="What extracted it: rules, ollama:<model>, manual.")
    prompt_hash: str | None = Field(description="Hash of the model prompt, when a model was used.")
    access_count: int = Field(description="Times recalled.")
    last_accessed_at: datetime | None = Field(description="Last recall (UTC).")
    useful_count: int = Field(description="Times marked useful.")
    questionable_count: int = Field(description="Times marked questionable.")
    corroboration: int = Field(description="Independent supporting mentions.")
    metadata: dict[str, Any] = Field(description="Pipeline details (source class, tier hint, …).")
    injectable: bool = Field(description="True when recall may put it into a prompt.")


class FactPage(Page):
    """One page of facts, most recently changed first."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"facts": [_FACT_EXAMPLE], "next_cursor": None}]})

    facts: list[FactOut] = Field(description="The facts of this page.")


class FactList(ResponseModel):
    """Facts (a version chain, or the superseded list)."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"facts": [_FACT_EXAMPLE]}]})

    facts: list[FactOut] = Field(description="The facts.")


class FactCreate(RequestModel):
    """A memory added by hand; it goes through map, match and decide like any other."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"subject": "user", "predicate": "likes", "object_text": "green tea"}]}
    )

    subject: str = Field(min_length=1, max_length=256, description="Who it is about (`user` is the owner).")
    predicate: str = Field(
        min_length=1,
        max_length=128,
        description="A catalog predicate or free words (mapped, else kept as custom).",
    )
    object_text: str = Field(min_length=1, max_length=2000, description="The value.")
    user_id: UserId = "default"
    project_id: str | None = Field(default=None, min_length=1, max_length=256, description="Project.")


class FactEdit(RequestModel):
    """A correction: the named fields change, a new version supersedes the old one."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"object_text": "Porto"}]})

    object_text: str | None = Field(default=None, min_length=1, max_length=2000, description="New value.")
    predicate: str | None = Field(default=None, min_length=1, max_length=128, description="New predicate.")
    subject: str | None = Field(default=None, min_length=1, max_length=256, description="New subject.")

    @model_validator(mode="after")
    def _something_changes(self) -> FactEdit:
        if self.object_text is None and self.predicate is None and self.subject is None:
            raise ValueError("name at least one of object_text, predicate, subject")
        return self


class TierBody(RequestModel):
    """Pin a fact to a tier, or hand it back to the rules."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"tier": "hot", "pinned": True}]})

    tier: Tier = Field(description="hot (always recalled), warm or cold.")
    pinned: bool = Field(default=True, description="true: keep this tier; false: unpin and let the rules re-tier it.")


class SignalBody(RequestModel):
    """A utility signal; it moves the fact's importance and confidence."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"signal": "useful"}]})

    signal: Signal = Field(description="useful or questionable.")


class TruthOut(ResponseModel):
    """The current winner of a slot (or one live value of a multi-valued predicate)."""

    model_config = ConfigDict(json_schema_extra={"examples": [_TRUTH_EXAMPLE]})

    subject: str = Field(description="The subject.")
    predicate: str = Field(description="The predicate.")
    cardinality: str = Field(description="single (one current value) or multi.")
    fact: FactOut = Field(description="The winning fact.")
    alternatives: int = Field(description="Other live values competing for a single slot.")


class TruthList(ResponseModel):
    """Current slot winners."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"truth": [_TRUTH_EXAMPLE]}]})

    truth: list[TruthOut] = Field(description="One entry per slot (per value when multi).")


class ConflictOut(ResponseModel):
    """A contradiction between two facts, open or resolved."""

    model_config = ConfigDict(json_schema_extra={"examples": [_CONFLICT_EXAMPLE]})

    id: int = Field(description="Global id.")
    user_id: str = Field(description="Owner.")
    subject: str = Field(description="The slot's subject.")
    predicate: str = Field(description="The slot's predicate.")
    status: Literal["open", "resolved"] = Field(description="open or resolved.")
    reason: str = Field(description="Why the two facts contradict each other.")
    fact_a: FactOut = Field(description="One side.")
    fact_b: FactOut = Field(description="The other side.")
    resolution: str | None = Field(description="How it was resolved.")
    winner_id: int | None = Field(description="The winning fact (null: both kept).")
    resolved_by: str | None = Field(description="user, edit, deletion, clarification, auto, …")
    created_at: datetime = Field(description="When it was found (UTC).")
    resolved_at: datetime | None = Field(description="When it was resolved (UTC).")


class ConflictList(ResponseModel):
    """Conflicts, newest first."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"conflicts": [_CONFLICT_EXAMPLE]}]})

    conflicts: list[ConflictOut] = Field(description="The conflicts.")


class ResolveBody(RequestModel):
    """How to resolve a conflict."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"winner_id": 5120}, {"winner_id": None}]})

    winner_id: Id | None = Field(
        description="The fact that wins (the other is retired to cold, history kept); null keeps both."
    )
