"""Models of subjects: the people, projects and topics facts are about."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import ConfigDict, Field

from engine.api.models.common import Id, RequestModel, ResponseModel

_SUBJECT_EXAMPLE: dict[str, Any] = {
    "id": 7,
    "user_id": "default",
    "name": "Melanie",
    "kind": "person",
    "summary": "",
    "aliases": ["Mel"],
    "tags": [],
    "fact_count": 4,
    "event_count": 9,
    "created_at": "2026-03-01T09:30:02Z",
    "updated_at": "2026-03-02T18:00:00Z",
}


class SubjectOut(ResponseModel):
    """A subject with its aliases and how much is known about it."""

    model_config = ConfigDict(json_schema_extra={"examples": [_SUBJECT_EXAMPLE]})

    id: int = Field(description="Global id.")
    user_id: str = Field(description="Owner.")
    name: str = Field(description="The name (`user` is the vault owner).")
    kind: str = Field(description="owner, person, project, topic, …")
    summary: str = Field(description="A short synthesis, when one was made.")
    aliases: list[str] = Field(description="Other names that resolve to this subject.")
    tags: list[str] = Field(description="Free tags.")
    fact_count: int = Field(description="Current facts about the subject.")
    event_count: int = Field(description="Events that mention or were spoken by the subject.")
    created_at: datetime = Field(description="When the subject first appeared (UTC).")
    updated_at: datetime = Field(description="Last change (UTC).")


class SubjectList(ResponseModel):
    """Subjects: the owner first, then by how much is known."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"subjects": [_SUBJECT_EXAMPLE]}]})

    subjects: list[SubjectOut] = Field(description="The subjects.")


class RenameBody(RequestModel):
    """A new name; the old one stays as an alias so earlier references still resolve."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"name": "Melanie Chen"}]})

    name: str = Field(min_length=1, max_length=256, description="The new name.")


class MergeBody(RequestModel):
    """Subjects to fold into this one: their facts, tags and aliases move over."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"merge_ids": [12, 31]}]})

    merge_ids: list[Id] = Field(min_length=1, max_length=1000, description="Ids of the subjects merged into this one.")
