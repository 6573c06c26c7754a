"""The subject workspace (DESIGN §3a): observations, understandings and the relationships of subjects."""

from engine.workspace.model import (
    UNDERSTANDING_KINDS,
    WORKSPACE_KINDS,
    Deleted,
    Intersection,
    Neighbour,
    Observation,
    Remembered,
    TaggedFact,
    Understanding,
    WorkspaceStats,
)
from engine.workspace.service import Workspace, content_hash, current_generation, next_generation

__all__ = [
    "UNDERSTANDING_KINDS",
    "WORKSPACE_KINDS",
    "Deleted",
    "Intersection",
    "Neighbour",
    "Observation",
    "Remembered",
    "TaggedFact",
    "Understanding",
    "Workspace",
    "WorkspaceStats",
    "content_hash",
    "current_generation",
    "next_generation",
]
