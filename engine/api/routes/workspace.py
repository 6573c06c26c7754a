"""The subject workspace (DESIGN §3a) as verbs: ``POST /v6/workspace/<verb>``, JSON in and JSON out.

Observations are evidence tagged with subjects, never edited: the same content written again is a no-op, and only
the session that wrote one may delete it.  Understandings are syntheses over evidence, revised by supersession
(``understanding_history`` walks the chain).  A relationship is an intersection: what two subjects share.

The session is the body's ``session_id`` or, for clients that set it once per connection, the ``X-Session-Id``
header (the body wins).  The MCP tools of the same names answer the same JSON (:mod:`engine.api.workspace`).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header

from engine.api.deps import VaultDep
from engine.api.models.subjects import SubjectOut
from engine.api.models.workspace import (
    MAX_SESSION_CHARS,
    AddObservationsBody,
    AddObservationsOut,
    AroundOut,
    CreateSubjectsBody,
    CreateUnderstandingBody,
    DeletedOut,
    DeleteObservationsBody,
    GetSubjectsBody,
    GetUnderstandingsBody,
    IntersectionOut,
    MarkBody,
    MarkedOut,
    ObservationList,
    OpenAroundBody,
    OpenIntersectionBody,
    RememberBody,
    RememberOut,
    SearchObservationsBody,
    SetStructuralUnderstandingBody,
    StatsBody,
    SubjectsCreatedOut,
    SubjectsFoundOut,
    UnderstandingHistoryBody,
    UnderstandingList,
    UnderstandingOut,
    UpdateSubjectSummaryBody,
    UpdateUnderstandingBody,
    WorkspaceStatsOut,
)
from engine.api.workspace import SESSION_HEADER, WorkspaceVerbs

router = APIRouter(prefix="/v6/workspace", tags=["workspace"])

#: ``X-Session-Id``: the session of a client that names it once per connection rather than in every body.
HeaderSession = Annotated[
    str | None,
    Header(
        alias=SESSION_HEADER,
        min_length=1,
        max_length=MAX_SESSION_CHARS,
        description="The writing session, when the body names none (the body's `session_id` wins).",
    ),
]

_SUBJECT_NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"description": "A subject named does not exist."}}
_UNDERSTANDING_NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"description": "No understanding of this user with this id."}
}


# -- subjects --------------------------------------------------------------------------------------------------
@router.post("/create_subjects", summary="Create subjects")
def create_subjects(body: CreateSubjectsBody, vault: VaultDep) -> SubjectsCreatedOut:
    """The subjects named, creating those that do not exist yet; answers them all and the names created."""
    return WorkspaceVerbs(vault).create_subjects(body)


@router.post("/get_subjects", summary="Look subjects up by name")
def get_subjects(body: GetSubjectsBody, vault: VaultDep) -> SubjectsFoundOut:
    """The subjects called (or aliased) the names given, and the names no subject answers to."""
    return WorkspaceVerbs(vault).get_subjects(body)


@router.post("/update_subject_summary", summary="Set a subject's summary", responses=_SUBJECT_NOT_FOUND)
def update_subject_summary(body: UpdateSubjectSummaryBody, vault: VaultDep) -> SubjectOut:
    """Set a subject's summary (and, when given, replace its tags); answers the subject."""
    return WorkspaceVerbs(vault).update_subject_summary(body)


# -- observations ----------------------------------------------------------------------------------------------
@router.post(
    "/remember",
    summary="Write an observation",
    responses={404: {"description": "An understanding named in `related_to` does not exist."}},
)
def remember(body: RememberBody, vault: VaultDep, x_session_id: HeaderSession = None) -> RememberOut:
    """Write an observation tagged with subjects (those that do not exist yet are created).

    The same content written again is a no-op that answers the first observation (`duplicate: true`).
    """
    return WorkspaceVerbs(vault).remember(body, x_session_id)


@router.post(
    "/add_observations",
    summary="Write several observations",
    responses={404: {"description": "An understanding named in `related_to` does not exist."}},
)
def add_observations(
    body: AddObservationsBody, vault: VaultDep, x_session_id: HeaderSession = None
) -> AddObservationsOut:
    """Write each observation as `remember` does, in order; answers one result per observation.

    An invalid observation stops the call with a 400 naming it (`observations[2].content`); those before it are
    kept, and sending the list again is harmless.
    """
    return WorkspaceVerbs(vault).add_observations(body, x_session_id)


@router.post("/delete_observations", summary="Delete this session's observations")
def delete_observations(
    body: DeleteObservationsBody, vault: VaultDep, x_session_id: HeaderSession = None
) -> DeletedOut:
    """Delete the observations the given session wrote; every other id is rejected with its reason.

    The session is required (body or `X-Session-Id`): one client's clean-up must never reach another's notes.
    """
    return WorkspaceVerbs(vault).delete_observations(body, x_session_id)


@router.post("/search_observations", summary="Search observations", responses=_SUBJECT_NOT_FOUND)
def search_observations(body: SearchObservationsBody, vault: VaultDep) -> ObservationList:
    """Observations containing every word of the query, optionally only those tagged with every subject named;
    best matches first."""
    return WorkspaceVerbs(vault).search_observations(body)


# -- understandings --------------------------------------------------------------------------------------------
@router.post("/create_understanding", summary="Write an understanding")
def create_understanding(
    body: CreateUnderstandingBody, vault: VaultDep, x_session_id: HeaderSession = None
) -> UnderstandingOut:
    """Write a synthesis tagged with subjects and citing its sources.

    It supersedes the active understanding of the same kind and subjects, so each subject (and each pair) has one
    current picture.
    """
    return WorkspaceVerbs(vault).create_understanding(body, x_session_id)


@router.post("/update_understanding", summary="Revise an understanding", responses=_UNDERSTANDING_NOT_FOUND)
def update_understanding(
    body: UpdateUnderstandingBody, vault: VaultDep, x_session_id: HeaderSession = None
) -> UnderstandingOut:
    """Revise an active understanding: a new one with the same kind and subjects supersedes it; answers the new one.

    Its sources are the old ones and the new ones.  An understanding already superseded is refused (400 naming
    `understanding_id`): revise the current one, which `understanding_history` shows.
    """
    return WorkspaceVerbs(vault).update_understanding(body, x_session_id)


@router.post("/get_understandings", summary="Read active understandings", responses=_SUBJECT_NOT_FOUND)
def get_understandings(body: GetUnderstandingsBody, vault: VaultDep) -> UnderstandingList:
    """The active understandings tagged with every subject named (none named: the workspace's own soul, protocol
    and orientation), newest first."""
    return WorkspaceVerbs(vault).get_understandings(body)


@router.post("/understanding_history", summary="An understanding's revisions", responses=_UNDERSTANDING_NOT_FOUND)
def understanding_history(body: UnderstandingHistoryBody, vault: VaultDep) -> UnderstandingList:
    """The revision chain the understanding belongs to, oldest first (the current one last)."""
    return WorkspaceVerbs(vault).understanding_history(body)


@router.post("/set_structural_understanding", summary="Write a subject's structural understanding")
def set_structural_understanding(
    body: SetStructuralUnderstandingBody, vault: VaultDep, x_session_id: HeaderSession = None
) -> UnderstandingOut:
    """Write how a subject relates to others by name and containment (aliases, parts, merges), superseding the
    old one."""
    return WorkspaceVerbs(vault).set_structural_understanding(body, x_session_id)


# -- marks -----------------------------------------------------------------------------------------------------
@router.post("/mark_useful", summary="Mark as useful")
def mark_useful(body: MarkBody, vault: VaultDep) -> MarkedOut:
    """Count a use against observations, understandings or facts; answers, per id, the kind marked or why not."""
    return WorkspaceVerbs(vault).mark_useful(body)


@router.post("/mark_questionable", summary="Mark as questionable")
def mark_questionable(body: MarkBody, vault: VaultDep) -> MarkedOut:
    """Count a doubt against observations, understandings or facts; answers, per id, the kind marked or why
    not."""
    return WorkspaceVerbs(vault).mark_questionable(body)


# -- relationships ---------------------------------------------------------------------------------------------
@router.post("/open_intersection", summary="What two subjects share", responses=_SUBJECT_NOT_FOUND)
def open_intersection(body: OpenIntersectionBody, vault: VaultDep) -> IntersectionOut:
    """Everything tagged with both subjects (their relationship): observations, current facts, active
    understandings, and the number of turns mentioning both."""
    return WorkspaceVerbs(vault).open_intersection(body)


@router.post("/open_around", summary="A subject's neighbourhood", responses=_SUBJECT_NOT_FOUND)
def open_around(body: OpenAroundBody, vault: VaultDep) -> AroundOut:
    """The subjects sharing evidence with this one, the largest intersection first, each with its relationship
    understanding when there is one."""
    return WorkspaceVerbs(vault).open_around(body)


@router.post("/stats", summary="The workspace at a glance")
def stats(vault: VaultDep, body: StatsBody | None = None) -> WorkspaceStatsOut:
    """Counts of the workspace: subjects, observations, understandings (active and superseded), observations no
    understanding cites yet, and the consolidation generation."""
    return WorkspaceVerbs(vault).stats(body if body is not None else StatsBody())
