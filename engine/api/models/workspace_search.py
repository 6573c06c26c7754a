"""Models of the workspace's ``search`` and its perspectives (``list_perspectives``, ``add_perspective``,
``remove_perspective``).

Split from :mod:`engine.api.models.workspace` (the objects), whose observation and understanding models a search
hit carries.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from engine.api.models.common import RequestModel, ResponseModel, UserId
from engine.api.models.workspace import (
    MAX_QUERY_CHARS,
    OBSERVATION_EXAMPLE,
    ObservationOut,
    SubjectNames,
    UnderstandingOut,
)
from engine.workspace.perspectives import MAX_INSTRUCTION_CHARS

PerspectiveName = str
_HEALTH = {"name": "health", "instruction": "Represent the health matters in this note:", "builtin": False}

_HIT_EXAMPLE = {
    "kind": "observation",
    "id": OBSERVATION_EXAMPLE["id"],
    "score": 0.71,
    "matched_perspective": "relational",
    "covered": False,
    "observation": OBSERVATION_EXAMPLE,
    "understanding": None,
}


class SearchBody(RequestModel):
    """A question to search the workspace with."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"query": "who does Ana work with", "subject_names": ["Ana"], "limit": 10}]}
    )

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="A question or a few words.")
    subject_names: SubjectNames = Field(
        default_factory=list, description="Only items tagged with every one of these subjects."
    )
    include_observations: bool = Field(
        default=True, description="Also search observations (false: understandings only)."
    )
    limit: int = Field(default=10, ge=1, le=100, description="At most this many, best first.")
    user_id: UserId = "default"


class SearchHitOut(ResponseModel):
    """One item found: an understanding or an observation, with why it ranked where it did."""

    model_config = ConfigDict(json_schema_extra={"examples": [_HIT_EXAMPLE]})

    kind: Literal["understanding", "observation"] = Field(description="What was found.")
    id: int = Field(description="Its global id.")
    score: float = Field(
        description="Words and best vector similarity blended, weighted toward understandings over the observations "
        "they cover, toward recent items and by marks of useful and questionable."
    )
    matched_perspective: str | None = Field(
        description="The perspective whose vector matched best; null when found by its words alone."
    )
    covered: bool = Field(description="An observation an active understanding already cites (ranked lower).")
    understanding: UnderstandingOut | None = Field(description="The understanding, when one was found.")
    observation: ObservationOut | None = Field(description="The observation, when one was found.")


class SearchOut(ResponseModel):
    """What ``search`` found, and how it searched."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "results": [_HIT_EXAMPLE],
                    "perspectives": ["general", "technical", "relational", "temporal", "project"],
                    "perspectives_collapsed": False,
                    "embedder": "ollama:nomic-embed-text",
                    "notes": [],
                }
            ]
        }
    )

    results: list[SearchHitOut] = Field(description="The items, best first.")
    perspectives: list[str] = Field(description="The perspectives searched.")
    perspectives_collapsed: bool = Field(
        description="True when the embedder ignores instructions: every perspective is one vector."
    )
    embedder: str = Field(description="The embedder's model id ('' without one).")
    notes: list[str] = Field(description="What limited the search (collapsed perspectives, an embedder down).")


class ListPerspectivesBody(RequestModel):
    """Whose perspectives to list."""

    model_config = ConfigDict(json_schema_extra={"examples": [{}]})

    user_id: UserId = "default"


class AddPerspectiveBody(RequestModel):
    """A perspective of the user's own."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"name": "health", "instruction": "Represent the health matters in this note:"}]
        }
    )

    name: PerspectiveName = Field(
        min_length=1, max_length=40, description="Lowercase letters, digits, - or _, starting with a letter."
    )
    instruction: str = Field(
        min_length=1,
        max_length=MAX_INSTRUCTION_CHARS,
        description="The instruction put in front of each item and question for this perspective.",
    )
    user_id: UserId = "default"


class RemovePerspectiveBody(RequestModel):
    """A perspective of the user's own to remove."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"name": "health"}]})

    name: PerspectiveName = Field(min_length=1, max_length=40, description="Its name.")
    user_id: UserId = "default"


class PerspectiveOut(ResponseModel):
    """A perspective: a named instruction prefix for the embedder."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"name": "health", "instruction": "Represent the health matters in this note:", "builtin": False}
            ]
        }
    )

    name: str = Field(description="Its name.")
    instruction: str = Field(description="The instruction prefix.")
    builtin: bool = Field(description="One of the five every workspace has (they cannot be removed).")


class PerspectivesOut(ResponseModel):
    """The perspectives, and whether the embedder keeps them apart."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "perspectives": [
                        {"name": "general", "instruction": "Represent this note …", "builtin": True},
                        {
                            "name": "health",
                            "instruction": "Represent the health matters in this note:",
                            "builtin": False,
                        },
                    ],
                    "collapsed": True,
                    "embedder": "hashing-v1-384",
                    "note": "The embedder hashing-v1-384 ignores instructions: the perspectives are one vector.",
                }
            ]
        }
    )

    perspectives: list[PerspectiveOut] = Field(description="The five built in, then the user's own.")
    collapsed: bool = Field(description="True when the embedder ignores instructions: one vector per item.")
    embedder: str = Field(description="The embedder's model id.")
    note: str | None = Field(description="Said when the perspectives collapse.")
