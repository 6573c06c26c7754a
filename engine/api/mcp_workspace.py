"""The subject workspace's MCP tools: the verbs of ``POST /v6/workspace/<verb>``, one tool each.

Kept apart from :mod:`engine.api.mcp` (the vault's own tools and the server) because the workspace is a room of
its own with two dozen verbs; :class:`engine.api.mcp.CairnTools` takes these methods by inheritance and
:data:`WORKSPACE_TOOLS` joins its :data:`~engine.api.mcp.TOOLS`.  Every tool takes the REST body's fields, named
and bounded the same, and answers the same model, through the one verb layer (:class:`WorkspaceVerbs`).
"""

from __future__ import annotations

from typing import Annotated

from mcp_types import ToolAnnotations
from pydantic import Field

from engine.api.models.recall import (
    MAX_LIMIT,
    MAX_QUERY_CHARS,
)
from engine.api.models.subjects import SubjectOut
from engine.api.models.workspace import (
    MAX_BATCH_OBSERVATIONS,
    MAX_KIND_CHARS,
    MAX_QUERY_CHARS as MAX_SEARCH_CHARS,
    MAX_SESSION_CHARS,
    MAX_SUBJECT_SUMMARY,
    MAX_TITLE_CHARS,
    MAX_UNDERSTANDING_SUMMARY,
    STRUCTURAL_SUMMARY,
    AddObservationsBody,
    AddObservationsOut,
    AroundOut,
    Confidence,
    Content,
    CreateSubjectsBody,
    CreateUnderstandingBody,
    DeletedOut,
    DeleteObservationsBody,
    GetSubjectsBody,
    GetUnderstandingsBody,
    IntersectionOut,
    MarkBody,
    MarkedOut,
    ObjectIds,
    ObservationIn,
    ObservationKind,
    ObservationList,
    OpenAroundBody,
    OpenIntersectionBody,
    RelatedTo,
    RememberBody,
    RememberOut,
    SearchObservationsBody,
    SessionId,
    SetStructuralUnderstandingBody,
    SourceIds,
    StatsBody,
    SubjectName,
    SubjectNames,
    SubjectsCreatedOut,
    SubjectsFoundOut,
    UnderstandingHistoryBody,
    UnderstandingId,
    UnderstandingKind,
    UnderstandingList,
    UnderstandingOut,
    UnderstandingSummary,
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
    MAX_TOKEN_CHARS,
    MAX_TOPIC_CHARS,
    BringToMindBody,
    BroughtToMindOut,
    ConsolidatedOut,
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
from engine.api.workspace import WorkspaceVerbs
from engine.vault import Vault
from engine.workspace.perspectives import MAX_INSTRUCTION_CHARS

UserId = Annotated[str, Field(min_length=1, max_length=256, description="Whose memory.")]
RequiredNames = Annotated[SubjectNames, Field(min_length=1)]
Names = Annotated[SubjectNames | None, Field(description="Subject names or aliases (none: no filter).")]
MoreIds = Annotated[SourceIds | None, Field(description="Ids of what it was made from: observations, facts, …")]
Related = Annotated[RelatedTo | None, Field(description="Ids of understandings this observation bears on.")]
Limit = Annotated[int, Field(ge=1, description="At most this many.")]
Session = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_SESSION_CHARS,
        description="Your session (one run of yours): what it was shown is remembered per session.",
    ),
]


class WorkspaceTools:
    """The workspace tools, bound to one open vault (mixed into :class:`engine.api.mcp.CairnTools`)."""

    vault: Vault

    def create_subjects(
        self,
        names: RequiredNames,
        kind: Annotated[
            str, Field(min_length=1, max_length=MAX_KIND_CHARS, description="Kind of the subjects created.")
        ] = "entity",
        user_id: UserId = "default",
    ) -> SubjectsCreatedOut:
        """The subjects named, creating the missing ones."""
        return self._workspace.create_subjects(CreateSubjectsBody(names=names, kind=kind, user_id=user_id))

    def get_subjects(self, names: RequiredNames, user_id: UserId = "default") -> SubjectsFoundOut:
        """The subjects called the names given, and the names nobody answers to."""
        return self._workspace.get_subjects(GetSubjectsBody(names=names, user_id=user_id))

    def update_subject_summary(
        self,
        subject_name: SubjectName,
        summary: Annotated[str, Field(max_length=MAX_SUBJECT_SUMMARY, description="The summary (empty clears it).")],
        tags: Annotated[list[str] | None, Field(description="New tags, replacing the old (null: unchanged).")] = None,
        user_id: UserId = "default",
    ) -> SubjectOut:
        """Set a subject's summary (and tags)."""
        body = UpdateSubjectSummaryBody(subject_name=subject_name, summary=summary, tags=tags, user_id=user_id)
        return self._workspace.update_subject_summary(body)

    def remember(
        self,
        content: Content,
        subject_names: RequiredNames,
        kind: ObservationKind = "note",
        confidence: Confidence = 0.8,
        related_to: Related = None,
        session_id: SessionId = None,
        user_id: UserId = "default",
    ) -> RememberOut:
        """Write one observation (a no-op for content already stored)."""
        body = RememberBody(
            content=content,
            subject_names=subject_names,
            kind=kind,
            confidence=confidence,
            related_to=related_to or [],
            session_id=session_id,
            user_id=user_id,
        )
        return self._workspace.remember(body)

    def add_observations(
        self,
        observations: Annotated[
            list[ObservationIn],
            Field(
                min_length=1,
                max_length=MAX_BATCH_OBSERVATIONS,
                description="The observations, written in order (each: content, subject_names, and optionally "
                "kind, confidence, related_to).",
            ),
        ],
        session_id: SessionId = None,
        user_id: UserId = "default",
    ) -> AddObservationsOut:
        """Write several observations as remember writes each."""
        body = AddObservationsBody(observations=observations, session_id=session_id, user_id=user_id)
        return self._workspace.add_observations(body)

    def delete_observations(
        self,
        ids: ObjectIds,
        session_id: Annotated[
            str,
            Field(min_length=1, max_length=MAX_SESSION_CHARS, description="The session that wrote the observations."),
        ],
        user_id: UserId = "default",
    ) -> DeletedOut:
        """Delete the observations this session wrote; the others are rejected with a reason."""
        return self._workspace.delete_observations(
            DeleteObservationsBody(ids=ids, session_id=session_id, user_id=user_id)
        )

    def search_observations(
        self,
        query: Annotated[
            str, Field(min_length=1, max_length=MAX_SEARCH_CHARS, description="Words; each must be in the note.")
        ],
        subject_names: Names = None,
        limit: Annotated[Limit, Field(le=200)] = 20,
        user_id: UserId = "default",
    ) -> ObservationList:
        """Full-text search of observations."""
        body = SearchObservationsBody(query=query, subject_names=subject_names or [], limit=limit, user_id=user_id)
        return self._workspace.search_observations(body)

    def search(
        self,
        query: Annotated[str, Field(min_length=1, max_length=MAX_SEARCH_CHARS, description="A question or words.")],
        subject_names: Names = None,
        include_observations: Annotated[
            bool, Field(description="Also search observations (false: understandings only).")
        ] = True,
        limit: Annotated[Limit, Field(le=100)] = 10,
        user_id: UserId = "default",
    ) -> SearchOut:
        """Understandings and observations on a question, across the perspectives."""
        body = SearchBody(
            query=query,
            subject_names=subject_names or [],
            include_observations=include_observations,
            limit=limit,
            user_id=user_id,
        )
        return self._workspace.search(body)

    def list_perspectives(self, user_id: UserId = "default") -> PerspectivesOut:
        """The perspectives and whether they collapse."""
        return self._workspace.list_perspectives(ListPerspectivesBody(user_id=user_id))

    def add_perspective(
        self,
        name: Annotated[
            str, Field(min_length=1, max_length=40, description="Lowercase letters, digits, - or _ (e.g. health).")
        ],
        instruction: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_INSTRUCTION_CHARS,
                description="What to represent, e.g. 'Represent the health matters in this note:'.",
            ),
        ],
        user_id: UserId = "default",
    ) -> PerspectivesOut:
        """Add (or re-word) a perspective of the user's own."""
        body = AddPerspectiveBody(name=name, instruction=instruction, user_id=user_id)
        return self._workspace.add_perspective(body)

    def remove_perspective(
        self,
        name: Annotated[str, Field(min_length=1, max_length=40, description="The perspective's name.")],
        user_id: UserId = "default",
    ) -> PerspectivesOut:
        """Remove a perspective of the user's own."""
        return self._workspace.remove_perspective(RemovePerspectiveBody(name=name, user_id=user_id))

    def create_understanding(
        self,
        content: Content,
        summary: UnderstandingSummary,
        subject_names: Names = None,
        kind: Annotated[
            UnderstandingKind | None,
            Field(description="Default: single_subject for one subject, relationship for two."),
        ] = None,
        title: Annotated[str, Field(max_length=MAX_TITLE_CHARS, description="An optional heading.")] = "",
        source_observation_ids: MoreIds = None,
        session_id: SessionId = None,
        user_id: UserId = "default",
    ) -> UnderstandingOut:
        """Write an understanding; it supersedes the current one of the same kind and subjects."""
        body = CreateUnderstandingBody(
            content=content,
            summary=summary,
            subject_names=subject_names or [],
            kind=kind,
            title=title,
            source_observation_ids=source_observation_ids or [],
            session_id=session_id,
            user_id=user_id,
        )
        return self._workspace.create_understanding(body)

    def update_understanding(
        self,
        understanding_id: UnderstandingId,
        new_content: Content,
        new_summary: UnderstandingSummary,
        source_observation_ids: MoreIds = None,
        session_id: SessionId = None,
        user_id: UserId = "default",
    ) -> UnderstandingOut:
        """Revise an active understanding by supersession; answers the new revision."""
        body = UpdateUnderstandingBody(
            understanding_id=understanding_id,
            new_content=new_content,
            new_summary=new_summary,
            source_observation_ids=source_observation_ids or [],
            session_id=session_id,
            user_id=user_id,
        )
        return self._workspace.update_understanding(body)

    def get_understandings(
        self,
        subject_names: Names = None,
        kind: Annotated[UnderstandingKind | None, Field(description="Only this kind.")] = None,
        user_id: UserId = "default",
    ) -> UnderstandingList:
        """The active understandings of the subjects named (none: the workspace's own)."""
        body = GetUnderstandingsBody(subject_names=subject_names or [], kind=kind, user_id=user_id)
        return self._workspace.get_understandings(body)

    def understanding_history(
        self, understanding_id: UnderstandingId, user_id: UserId = "default"
    ) -> UnderstandingList:
        """An understanding's revision chain, oldest first."""
        body = UnderstandingHistoryBody(understanding_id=understanding_id, user_id=user_id)
        return self._workspace.understanding_history(body)

    def set_structural_understanding(
        self,
        subject_name: SubjectName,
        content: Content,
        summary: Annotated[
            str, Field(min_length=1, max_length=MAX_UNDERSTANDING_SUMMARY, description="One or two lines.")
        ] = STRUCTURAL_SUMMARY,
        session_id: SessionId = None,
        user_id: UserId = "default",
    ) -> UnderstandingOut:
        """Write a subject's structural understanding, superseding the old one."""
        body = SetStructuralUnderstandingBody(
            subject_name=subject_name, content=content, summary=summary, session_id=session_id, user_id=user_id
        )
        return self._workspace.set_structural_understanding(body)

    def mark_useful(self, ids: ObjectIds, user_id: UserId = "default") -> MarkedOut:
        """Count a use of observations, understandings or facts."""
        return self._workspace.mark_useful(MarkBody(ids=ids, user_id=user_id))

    def mark_questionable(self, ids: ObjectIds, user_id: UserId = "default") -> MarkedOut:
        """Count a doubt about observations, understandings or facts."""
        return self._workspace.mark_questionable(MarkBody(ids=ids, user_id=user_id))

    def open_intersection(
        self,
        subject_a: SubjectName,
        subject_b: SubjectName,
        limit: Annotated[Limit, Field(le=500)] = 50,
        user_id: UserId = "default",
    ) -> IntersectionOut:
        """Everything tagged with both subjects."""
        body = OpenIntersectionBody(subject_a=subject_a, subject_b=subject_b, limit=limit, user_id=user_id)
        return self._workspace.open_intersection(body)

    def open_around(
        self, subject_name: SubjectName, limit: Annotated[Limit, Field(le=100)] = 10, user_id: UserId = "default"
    ) -> AroundOut:
        """The subjects sharing the most with this one."""
        return self._workspace.open_around(OpenAroundBody(subject_name=subject_name, limit=limit, user_id=user_id))

    def stats(self, user_id: UserId = "default") -> WorkspaceStatsOut:
        """The workspace's counts."""
        return self._workspace.stats(StatsBody(user_id=user_id))

    def orient(
        self,
        session_id: Session,
        recent: Annotated[Limit, Field(le=50, description="How many of the newest items.")] = 10,
        user_id: UserId = "default",
    ) -> OrientedOut:
        """Start a session: soul, protocol, orientation, pending consolidation and the newest activity."""
        return self._workspace.orient(OrientBody(session_id=session_id, recent=recent, user_id=user_id))

    def bring_to_mind(
        self,
        topic_or_context: Annotated[
            str, Field(min_length=1, max_length=MAX_TOPIC_CHARS, description="The topic or the latest context.")
        ],
        session_id: Session,
        last_token: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=MAX_TOKEN_CHARS,
                description="The heartbeat_token of your previous orient or bring_to_mind.",
            ),
        ] = None,
        include_seen: Annotated[bool, Field(description="Also what this session was already shown.")] = False,
        limit: Annotated[Limit, Field(le=50)] = 8,
        user_id: UserId = "default",
    ) -> BroughtToMindOut:
        """Understandings and fresh observations on a topic that this session has not seen yet."""
        body = BringToMindBody(
            topic_or_context=topic_or_context,
            session_id=session_id,
            last_token=last_token,
            include_seen=include_seen,
            limit=limit,
            user_id=user_id,
        )
        return self._workspace.bring_to_mind(body)

    def reset_seen(self, session_id: Session, user_id: UserId = "default") -> ResetSeenOut:
        """Forget what this session was shown."""
        return self._workspace.reset_seen(ResetSeenBody(session_id=session_id, user_id=user_id))

    def recall(
        self,
        query: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_QUERY_CHARS,
                description="A subject's exact name or alias, or a question.",
            ),
        ],
        limit: Annotated[Limit, Field(le=MAX_LIMIT)] = 10,
        user_id: UserId = "default",
    ) -> WorkspaceRecallOut:
        """A subject's picture (subject mode) or the vault's answer to a question (question mode)."""
        return self._workspace.recall(WorkspaceRecallBody(query=query, limit=limit, user_id=user_id))

    def consolidate(self, user_id: UserId = "default") -> ConsolidatedOut:
        """Run one consolidation pass now; answers what it wrote."""
        return self._workspace.consolidate_now(user_id)

    def consolidation_report(
        self, limit: Annotated[Limit, Field(le=500)] = 50, user_id: UserId = "default"
    ) -> ConsolidationReportOut:
        """What consolidation should look at next."""
        return self._workspace.consolidation_report(ConsolidationReportBody(limit=limit, user_id=user_id))

    def pending_consolidation(self, user_id: UserId = "default") -> PendingConsolidationOut:
        """How many subjects wait for consolidation."""
        return self._workspace.pending_consolidation(PendingConsolidationBody(user_id=user_id))

    def find_similar_subjects(
        self,
        subject_name: SubjectName,
        threshold: Annotated[float, Field(ge=0.0, le=1.0, description="The least similarity, 0–1.")] = 0.75,
        limit: Annotated[Limit, Field(le=100)] = 10,
        user_id: UserId = "default",
    ) -> SimilarSubjectsOut:
        """Subjects whose names look like this one: merge candidates."""
        body = FindSimilarSubjectsBody(subject_name=subject_name, threshold=threshold, limit=limit, user_id=user_id)
        return self._workspace.find_similar_subjects(body)

    def merge_subjects(
        self,
        subject_name: Annotated[SubjectName, Field(description="The subject to keep.")],
        names: Annotated[RequiredNames, Field(description="The subjects merged into it.")],
        user_id: UserId = "default",
    ) -> SubjectOut:
        """Fold subjects into one; answers the subject kept."""
        body = MergeSubjectsBody(subject_name=subject_name, names=names, user_id=user_id)
        return self._workspace.merge_subjects(body)

    @property
    def _workspace(self) -> WorkspaceVerbs:
        return WorkspaceVerbs(self.vault)


#: The workspace tools: (method name, description, annotations), in the order a model reads them.
WORKSPACE_TOOLS: tuple[tuple[str, str, ToolAnnotations], ...] = (
    (
        "create_subjects",
        "Make sure subjects exist in the workspace (people, projects, topics): creates the names that do not exist "
        "yet. Returns every subject and the names created.",
        ToolAnnotations(
            title="Create subjects",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    ),
    (
        "get_subjects",
        "Look subjects up by name or alias: returns the subjects found (with their summaries and tags) and the "
        "names no subject answers to.",
        ToolAnnotations(title="Get subjects", read_only_hint=True, open_world_hint=False),
    ),
    (
        "update_subject_summary",
        "Set a subject's short summary (and optionally replace its tags). Returns the subject.",
        ToolAnnotations(
            title="Update a subject's summary",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    ),
    (
        "remember",
        "Write one observation into the workspace: a piece of evidence tagged with the subjects it is about "
        "(missing subjects are created). Observations are never edited; writing the same content again is a "
        "no-op that returns the first one (duplicate: true). Pass your session_id to be able to delete it later.",
        ToolAnnotations(
            title="Remember an observation",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    ),
    (
        "add_observations",
        "Write several observations at once (at most 100), each as remember writes it, in order. Returns one "
        "result per observation; sending the same list again is harmless.",
        ToolAnnotations(
            title="Add observations",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    ),
    (
        "delete_observations",
        "Delete observations this session wrote (session_id is required). Ids written by another session, or "
        "unknown, are not deleted: each is returned in rejected with the reason.",
        ToolAnnotations(
            title="Delete observations",
            read_only_hint=False,
            destructive_hint=True,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    ),
    (
        "search_observations",
        "Search the workspace's observations by words (every word must appear), optionally only those tagged with "
        "every subject named. Best matches first.",
        ToolAnnotations(title="Search observations", read_only_hint=True, open_world_hint=False),
    ),
    (
        "search",
        "Search the workspace for a question: understandings and observations by their words and by their meaning "
        "under every perspective (general, technical, relational, temporal, project and the user's own), best "
        "first — understandings before the observations they already cover, recent and useful items before "
        "others. Each result names the perspective that matched; the notes say when the perspectives collapse "
        "to one (an embedder that ignores instructions) or the embedder is down.",
        ToolAnnotations(title="Search the workspace", read_only_hint=True, open_world_hint=False),
    ),
    (
        "list_perspectives",
        "List the perspectives the workspace is searched under (the five built in, then the user's own) and "
        "whether the embedder keeps them apart.",
        ToolAnnotations(title="List perspectives", read_only_hint=True, open_world_hint=False),
    ),
    (
        "add_perspective",
        "Add a perspective of the user's own (or re-word one): a name and an instruction the embedder reads in "
        "front of each item and question, e.g. health → 'Represent the health matters in this note:'. The items "
        "are embedded under it in the background. Returns the perspectives.",
        ToolAnnotations(
            title="Add a perspective",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    ),
    (
        "remove_perspective",
        "Remove a perspective of the user's own and its vectors (the five built in stay). Returns the rest.",
        ToolAnnotations(
            title="Remove a perspective",
            read_only_hint=False,
            destructive_hint=True,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    ),
    (
        "create_understanding",
        "Write an understanding: a synthesis of the evidence about one subject (single_subject), a pair "
        "(relationship) or the workspace itself (soul, protocol, orientation), citing the observation ids it was "
        "made from. It supersedes the current understanding of the same kind and subjects.",
        ToolAnnotations(
            title="Create an understanding",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    ),
    (
        "update_understanding",
        "Revise an active understanding: writes a new revision with the new content and summary (its sources are "
        "the old ones plus any given) and supersedes the old one, which stays in understanding_history.",
        ToolAnnotations(
            title="Update an understanding",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    ),
    (
        "get_understandings",
        "Read the current understandings tagged with every subject named (none named: the workspace's own soul, "
        "protocol and orientation), optionally of one kind. Newest first.",
        ToolAnnotations(title="Get understandings", read_only_hint=True, open_world_hint=False),
    ),
    (
        "understanding_history",
        "Walk an understanding's revisions: every version of it, oldest first, the current one last.",
        ToolAnnotations(title="Understanding history", read_only_hint=True, open_world_hint=False),
    ),
    (
        "set_structural_understanding",
        "Write how a subject relates to others by name and containment (other names, what it is part of, what was "
        "merged into it), superseding its previous structural understanding.",
        ToolAnnotations(
            title="Set a structural understanding",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    ),
    (
        "mark_useful",
        "Tell Cairn that observations, understandings or facts (by id) were useful. Returns, per id, the kind "
        "marked or why nothing was.",
        ToolAnnotations(
            title="Mark useful",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    ),
    (
        "mark_questionable",
        "Tell Cairn that observations, understandings or facts (by id) look wrong or doubtful. Returns, per id, "
        "the kind marked or why nothing was.",
        ToolAnnotations(
            title="Mark questionable",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    ),
    (
        "open_intersection",
        "Open the relationship of two subjects: everything tagged with both (observations, current facts, active "
        "understandings) and the number of conversation turns mentioning both.",
        ToolAnnotations(title="Open an intersection", read_only_hint=True, open_world_hint=False),
    ),
    (
        "open_around",
        "Open a subject's neighbourhood: the subjects it shares the most evidence with, largest first, each with "
        "their relationship understanding when there is one.",
        ToolAnnotations(title="Open around a subject", read_only_hint=True, open_world_hint=False),
    ),
    (
        "stats",
        "Count the workspace: subjects, observations, active and superseded understandings, observations no "
        "understanding cites yet, and the consolidation generation.",
        ToolAnnotations(title="Workspace stats", read_only_hint=True, open_world_hint=False),
    ),
    (
        "orient",
        "Start a session (session_id is required): returns the workspace's soul, protocol and orientation (each an "
        "understanding or null; keep each one's summary as your note through a context compaction), how many "
        "subjects wait for consolidation, the newest observations and understandings, and a heartbeat_token to "
        "send to bring_to_mind. Starts the session's seen log afresh.",
        ToolAnnotations(
            title="Orient",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    ),
    (
        "bring_to_mind",
        "Bring to mind what the workspace holds on a topic that this session has not seen yet: understandings of "
        "the subjects it names (then those matching its words) and observations not consolidated yet. Send the "
        "last heartbeat_token as last_token; compacted: true means your context was taken as lost and everything "
        "may be shown again. Asking twice brings only what is new.",
        ToolAnnotations(
            title="Bring to mind",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    ),
    (
        "reset_seen",
        "Forget what this session was shown, so bring_to_mind may repeat anything. Returns how many items the "
        "seen log held.",
        ToolAnnotations(
            title="Reset seen",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    ),
    (
        "recall",
        "Recall from the workspace: a query that is exactly a subject's name or alias returns the subject, its "
        "understandings and newest observations (mode subject); anything else is asked as a question of the whole "
        "vault and returns the best answering fact, the supporting facts, their provenance and the understandings "
        "of the subjects named (mode question).",
        ToolAnnotations(title="Recall", read_only_hint=True, open_world_hint=False),
    ),
    (
        "consolidate",
        "Run one consolidation pass now: writes or revises an understanding for each subject (and each pair "
        "sharing enough) whose evidence changed since the last pass, with the configured model when there is one. "
        "Returns the generation, the subjects and pairs written, and any warnings. Cairn also does this by itself "
        "after a quiet period.",
        ToolAnnotations(
            title="Consolidate",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    ),
    (
        "consolidation_report",
        "Report what consolidation should look at: subjects without an understanding, stale understandings, pairs "
        "sharing much with no relationship written, pairs whose summaries overlap, observations no understanding "
        "cites, and items marked questionable more often than useful.",
        ToolAnnotations(title="Consolidation report", read_only_hint=True, open_world_hint=False),
    ),
    (
        "pending_consolidation",
        "Count the subjects whose evidence is newer than the last consolidation pass (what the next pass would touch).",
        ToolAnnotations(title="Pending consolidation", read_only_hint=True, open_world_hint=False),
    ),
    (
        "find_similar_subjects",
        "Find subjects whose name or alias looks like the one given (Bob and Bob Smith, Mel and Mell): merge "
        "candidates with a similarity score, best first.",
        ToolAnnotations(title="Find similar subjects", read_only_hint=True, open_world_hint=False),
    ),
    (
        "merge_subjects",
        "Merge subjects into the one named subject_name: their facts, turns, observations and understandings move "
        "to it, their names become its aliases, and the merge is noted in its structural understanding. Returns "
        "the subject kept. Cannot be undone.",
        ToolAnnotations(
            title="Merge subjects",
            read_only_hint=False,
            destructive_hint=True,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    ),
)
