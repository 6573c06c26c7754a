"""The subject workspace (DESIGN §3a): observations, understandings and the relationships of subjects."""

from engine.workspace.model import (
    UNDERSTANDING_KINDS,
    WORKSPACE_KINDS,
    BroughtToMind,
    ConsolidationReport,
    Deleted,
    Intersection,
    Neighbour,
    Observation,
    Oriented,
    Remembered,
    SimilarSubject,
    SubjectRecall,
    TaggedFact,
    Understanding,
    WorkspaceStats,
)
from engine.workspace.perspectives import PERSPECTIVES_JOB
from engine.workspace.rows import content_hash, current_generation, next_generation
from engine.workspace.service import CONSOLIDATE_JOB, Workspace

__all__ = [
    "CONSOLIDATE_JOB",
    "PERSPECTIVES_JOB",
    "UNDERSTANDING_KINDS",
    "WORKSPACE_KINDS",
    "BroughtToMind",
    "ConsolidationReport",
    "Deleted",
    "Intersection",
    "Neighbour",
    "Observation",
    "Oriented",
    "Remembered",
    "SimilarSubject",
    "SubjectRecall",
    "TaggedFact",
    "Understanding",
    "Workspace",
    "WorkspaceStats",
    "content_hash",
    "current_generation",
    "next_generation",
]
