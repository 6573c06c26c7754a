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
from engine.api.models.workspace_search import (
    AddPerspectiveBody,
    ListPerspectivesBody,
    PerspectivesOut,
    RemovePerspectiveBody,
    SearchBody,
    SearchOut,
)
from engine.api.models.workspace_sessions import (
    BringToMindBody,
    BroughtToMindOut,
    ConsolidateBody,
    ConsolidatedOut,
    ConsolidationQueuedOut,
    ConsolidationReportBody,
    ConsolidationReportOut,
    FindSimilarSubjectsBody,
    MergeSubjectsBody,
    OrientBody,
    OrientedOut,
    PendingConsolidationBody,
    PendingConsolidationOut,
    ResetSeenBody,
    ResetSeenOut,
    SimilarSubjectsOut,
    WorkspaceRecallBody,
    WorkspaceRecallOut,
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


# -- sessions --------------------------------------------------------------------------------------------------
@router.post("/orient", summary="Start a session: soul, protocol, orientation")
def orient(vault: VaultDep, body: OrientBody | None = None, x_session_id: HeaderSession = None) -> OrientedOut:
    """What an assistant reads first: the workspace's soul, protocol and orientation (each an understanding or
    null; each one's `summary` is the note to keep through a context compaction), how many subjects wait for
    consolidation, the newest observations and understandings, and a heartbeat token for `bring_to_mind`.

    It starts the session afresh (its seen log is emptied).  The session is required, in the body or as
    `X-Session-Id` (then the body may be left out): without one the answer is a 400 naming `session_id`.
    """
    return WorkspaceVerbs(vault).orient(body if body is not None else OrientBody(), x_session_id)


@router.post("/bring_to_mind", summary="What the workspace holds on a topic, new to this session")
def bring_to_mind(body: BringToMindBody, vault: VaultDep, x_session_id: HeaderSession = None) -> BroughtToMindOut:
    """Active understandings of the subjects the topic names (then those whose words match it) and observations no
    consolidation has taken in yet, leaving out what this session was already shown (unless `include_seen`); what
    is returned joins the session's seen log, so asking again brings only what is new.

    Send the previous answer's `heartbeat_token` as `last_token`: a different one (or none, for a session seen
    before) or a quiet spell of more than 30 minutes means the context was compacted, so the seen log starts again
    and the answer says `compacted`.  The session is required (body or `X-Session-Id`).
    """
    return WorkspaceVerbs(vault).bring_to_mind(body, x_session_id)


@router.post("/reset_seen", summary="Forget what this session was shown")
def reset_seen(vault: VaultDep, body: ResetSeenBody | None = None, x_session_id: HeaderSession = None) -> ResetSeenOut:
    """Empty the session's seen log, so the next `bring_to_mind` may repeat anything; answers how many items it
    held.  The session is required (body or `X-Session-Id`; then the body may be left out)."""
    return WorkspaceVerbs(vault).reset_seen(body if body is not None else ResetSeenBody(), x_session_id)


# -- recall ----------------------------------------------------------------------------------------------------
@router.post("/recall", summary="A subject's picture, or the answer to a question")
def recall(body: WorkspaceRecallBody, vault: VaultDep) -> WorkspaceRecallOut:
    """Subject mode, when the query is exactly a subject's name or alias: the subject, its active understandings
    and its newest observations.

    Question mode, otherwise: the vault's recall answers it (as `POST /v6/recall` would): the best answering fact,
    the supporting facts, each one's provenance (its evidence), and the active understandings of the subjects the
    question names.
    """
    return WorkspaceVerbs(vault).recall(body)


# -- consolidation ---------------------------------------------------------------------------------------------
@router.post("/consolidate", summary="Run (or queue) a consolidation pass")
def consolidate(vault: VaultDep, body: ConsolidateBody | None = None) -> ConsolidatedOut | ConsolidationQueuedOut:
    """Run one consolidation pass now: an understanding is written for each subject (and each pair of subjects
    sharing enough) whose evidence changed since the last pass, by the configured model when there is one (the
    cited extractive draft otherwise, or when the model fails).  Answers what the pass wrote.

    With `{"background": true}` the pass is queued as a background job instead, and the answer says whether it
    was (`queued: false` when one is queued already).
    """
    return WorkspaceVerbs(vault).consolidate(body if body is not None else ConsolidateBody())


@router.post("/consolidation_report", summary="What consolidation should look at")
def consolidation_report(vault: VaultDep, body: ConsolidationReportBody | None = None) -> ConsolidationReportOut:
    """Subjects without an understanding, stale understandings, pairs sharing much with no relationship written,
    pairs whose summaries overlap although they share little, observations no understanding cites, and items
    marked questionable more often than useful."""
    return WorkspaceVerbs(vault).consolidation_report(body if body is not None else ConsolidationReportBody())


@router.post("/pending_consolidation", summary="How much waits for consolidation")
def pending_consolidation(vault: VaultDep, body: PendingConsolidationBody | None = None) -> PendingConsolidationOut:
    """How many subjects have evidence newer than the last consolidation pass."""
    return WorkspaceVerbs(vault).pending_consolidation(body if body is not None else PendingConsolidationBody())


# -- merging subjects ------------------------------------------------------------------------------------------
@router.post("/find_similar_subjects", summary="Subjects whose names look alike")
def find_similar_subjects(body: FindSimilarSubjectsBody, vault: VaultDep) -> SimilarSubjectsOut:
    """Subjects whose name or an alias looks like the one given ("Bob" and "Bob Smith", "Mel" and "Mell"): merge
    candidates, best first."""
    return WorkspaceVerbs(vault).find_similar_subjects(body)


@router.post(
    "/merge_subjects",
    summary="Merge subjects into one",
    responses={
        **_SUBJECT_NOT_FOUND,
        409: {"description": "The subject kept is among those named to merge into it."},
    },
)
def merge_subjects(body: MergeSubjectsBody, vault: VaultDep) -> SubjectOut:
    """Fold the subjects named into the one kept: their facts, turns, observations and understandings move to it,
    their names become its aliases, and the merge is noted in its structural understanding.  Answers the subject
    kept."""
    return WorkspaceVerbs(vault).merge_subjects(body)


# -- search and perspectives -----------------------------------------------------------------------------------
@router.post("/search", summary="Search understandings and observations across perspectives")
def search(body: SearchBody, vault: VaultDep) -> SearchOut:
    """Understandings and observations on a question, by their words and by their vectors under every perspective,
    best first: understandings before the observations they cover, recent and useful items before others.

    Each result names the perspective whose vector matched best (`matched_perspective`). With an embedder that
    ignores instructions the perspectives are one vector (`perspectives_collapsed`, and a note says so); with the
    embedder down, the search answers by words alone and says that too.
    """
    return WorkspaceVerbs(vault).search(body)


@router.post("/list_perspectives", summary="List the perspectives")
def list_perspectives(body: ListPerspectivesBody, vault: VaultDep) -> PerspectivesOut:
    """The five built-in perspectives (general, technical, relational, temporal, project) and the user's own, and
    whether the embedder keeps them apart."""
    return WorkspaceVerbs(vault).list_perspectives(body)


@router.post("/add_perspective", summary="Add a perspective of your own")
def add_perspective(body: AddPerspectiveBody, vault: VaultDep) -> PerspectivesOut:
    """Add (or re-word) a perspective: its instruction goes in front of each item and question; the items are
    embedded under it in the background. Answers the perspectives."""
    return WorkspaceVerbs(vault).add_perspective(body)


@router.post(
    "/remove_perspective",
    summary="Remove a perspective of your own",
    responses={404: {"description": "No perspective of the user's own has this name."}},
)
def remove_perspective(body: RemovePerspectiveBody, vault: VaultDep) -> PerspectivesOut:
    """Remove one of the user's own perspectives and its vectors (the five built in stay). Answers the rest."""
    return WorkspaceVerbs(vault).remove_perspective(body)
