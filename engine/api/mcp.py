"""The MCP server: Cairn's tools for chat clients, over streamable HTTP (``/mcp``) and stdio.

Built with the official SDK (``mcp`` 2.x, :class:`~mcp.server.mcpserver.MCPServer`).  Every tool
calls the same :class:`~engine.vault.Vault` facade as the REST routes and answers the same models
(:mod:`engine.api.models`), so a tool's output schema is the matching route's response schema.

Errors: an engine error becomes an MCP *tool error* (``isError: true``) whose text is the error's
code, message and fix, so the model can read it and correct itself; a bug becomes a generic tool
error and is logged by exception type only.  Tools never log arguments or results: both carry memory
content.

Served at ``/mcp`` by :func:`engine.api.app.create_app` (behind the endpoint's guard, with the
session manager running in the app's lifespan) and on stdio by ``cairn mcp``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import datetime
from typing import Annotated, Any, ParamSpec, TypeVar

import anyio
from anyio.abc import TaskStatus
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError as PydanticValidationError

from engine.api.models.common import Id
from engine.api.models.documents import CollectionList, CollectionOut, DocumentJsonBody, UploadOut
from engine.api.models.events import (
    ConversationList,
    ConversationOut,
    EventBody,
    IngestAck,
    Role,
)
from engine.api.models.facts import FactOut, FactPage
from engine.api.models.recall import (
    MAX_LIMIT,
    MAX_QUERY_CHARS,
    MAX_TOKEN_BUDGET,
    MIN_TOKEN_BUDGET,
    RecallBody,
    RecallContextOut,
)
from engine.api.models.subjects import SubjectOut
from engine.api.models.system import ObjectOut, ReceiptOut
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
from engine.api.uploads import Upload, upload_out
from engine.api.workspace import WorkspaceVerbs
from engine.documents.service import PathNotAllowed
from engine.errors import ValidationError, VaultError
from engine.events import MAX_CONTENT_CHARS
from engine.facts.api import FactFilter
from engine.forget import ForgetScope
from engine.vault import Vault
from engine.version import __version__

log = logging.getLogger(__name__)

#: ``source`` of events ingested through MCP.
SOURCE = "mcp"
#: Where the streamable HTTP transport is served.
MCP_PATH = "/mcp"

INSTRUCTIONS = (
    "Cairn is the user's local memory vault. Send each chat turn with ingest_event so Cairn can "
    "learn from it; before answering, call recall_context with the conversation and the user's "
    "question and put its llm_context text in front of your answer; look facts up with "
    "search_facts and get_object; when the user corrects something, call correct_fact; add "
    "documents with upload_document (list_collections names the collections to file them in "
    "or to ask about); forget removes a scope permanently (try dry_run first). The subject workspace is your "
    "own notebook about the people, projects and topics of this user: write evidence with remember (tagged with "
    "the subjects it is about; pass a session_id so you can delete your own notes later), read it with "
    "search_observations, open_intersection and open_around, and keep one current synthesis per subject or pair "
    "with create_understanding and update_understanding. Start each session with orient (keep the summaries of "
    "soul, protocol and orientation through a context compaction), call bring_to_mind with the topic at hand "
    "(sending back the last heartbeat_token) to see what is new to you, and recall a subject by name or ask a "
    "question."
)

P = ParamSpec("P")
R = TypeVar("R")

# Parameter types: the descriptions become the tools' JSON schemas.
ConversationId = Annotated[str, Field(min_length=1, max_length=256, description="The chat this turn belongs to.")]
UserId = Annotated[str, Field(min_length=1, max_length=256, description="Whose memory.")]
ConversationScope = Annotated[str | None, Field(min_length=1, max_length=256, description="Only this conversation.")]
ProjectScope = Annotated[str | None, Field(min_length=1, max_length=256, description="Only this project.")]
When = Annotated[datetime | None, Field(description="ISO-8601 (no zone = UTC) or epoch seconds.")]
DocumentScope = Annotated[Id | None, Field(description="Answer from this document (its id).")]
CollectionScope = Annotated[Id | None, Field(description="Answer from this collection's documents (its id).")]
# The workspace tools take the REST bodies' fields (engine.api.models.workspace), named and bounded the same.
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


class CairnTools:
    """The tools, bound to one open vault.  Each method is one MCP tool (see :data:`TOOLS`)."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault

    def ingest_event(
        self,
        conversation_id: ConversationId,
        content: Annotated[str, Field(min_length=1, max_length=MAX_CONTENT_CHARS, description="The turn's text.")],
        role: Annotated[Role, Field(description="Who said it; system turns are not learned.")] = "user",
        author: Annotated[
            str | None,
            Field(min_length=1, max_length=256, description="Speaker name in group chats."),
        ] = None,
        occurred_at: When = None,
        user_id: UserId = "default",
        external_id: Annotated[
            str | None,
            Field(min_length=1, max_length=256, description="Your id for it; resending is a no-op."),
        ] = None,
    ) -> IngestAck:
        """Store one event; its enrichment is queued."""
        body = EventBody(
            conversation_id=conversation_id,
            content=content,
            role=role,
            author=author,
            occurred_at=occurred_at,
            user_id=user_id,
            external_id=external_id,
        )
        return IngestAck.of(self.vault.ingest_event(body.to_event(SOURCE)))

    def recall_context(
        self,
        conversation_id: ConversationId,
        query: Annotated[
            str,
            Field(
                max_length=MAX_QUERY_CHARS,
                description="The user's question or latest turn (empty: background only).",
            ),
        ],
        document_id: DocumentScope = None,
        collection_id: CollectionScope = None,
        limit: Annotated[int | None, Field(ge=1, le=MAX_LIMIT, description="Ranked blocks at most.")] = None,
        token_budget: Annotated[
            int | None,
            Field(
                ge=MIN_TOKEN_BUDGET,
                le=MAX_TOKEN_BUDGET,
                description="Size of llm_context.text in tokens at most.",
            ),
        ] = None,
        user_id: UserId = "default",
        project_id: ProjectScope = None,
        reference_time: When = None,
    ) -> RecallContextOut:
        """Context for the next answer: prompt-ready text, the ranked blocks and the routing."""
        body = RecallBody(
            conversation_id=conversation_id,
            query=query,
            document_id=document_id,
            collection_id=collection_id,
            limit=limit,
            token_budget=token_budget,
            user_id=user_id,
            project_id=project_id,
            reference_time=reference_time,
        )
        return RecallContextOut.of_result(self.vault.recall(body.to_request()))

    def upload_document(
        self,
        name: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=255,
                description="File name of content; its extension picks the parser (notes.md).",
            ),
        ] = None,
        content: Annotated[str | None, Field(min_length=1, description="The document's text (with name).")] = None,
        path: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=4096,
                description="Absolute path of a file on the user's machine (instead of content); only "
                "when the user turned on endpoint.mcp_upload_path, and only in folders they allowed.",
            ),
        ] = None,
        collection_id: Annotated[Id | None, Field(description="Also file it in this collection.")] = None,
        document_id: Annotated[Id | None, Field(description="Replace this document's content.")] = None,
        project_id: ProjectScope = None,
        user_id: UserId = "default",
    ) -> UploadOut:
        """Add a document from a text or a local file; answers its id and status.

        A path is refused unread unless ``endpoint.mcp_upload_path`` is on: a model can be steered by a prompt
        it read into naming any file, and whatever it uploads it can recall into its own context.
        """
        if path is not None and not self.vault.settings.endpoint.mcp_upload_path:
            raise PathNotAllowed(
                "upload_document does not read files by path here: uploads by path are off for MCP clients.",
                fix="Send the document's text as name and content instead. Only the person using Cairn can allow "
                "paths, with endpoint.mcp_upload_path in Settings → Endpoint.",
                setting="endpoint.mcp_upload_path",
            )
        body = DocumentJsonBody(
            name=name,
            content=content,
            path=path,
            collection_id=collection_id,
            document_id=document_id,
            project_id=project_id,
            user_id=user_id,
        )
        result, _created = Upload.of_json(body).run(self.vault)
        return upload_out(result)

    def list_collections(
        self,
        user_id: Annotated[str | None, Field(min_length=1, description="Only this user's.")] = None,
    ) -> CollectionList:
        """Collections by name, with their ids and document counts."""
        return CollectionList(collections=[CollectionOut.of(c) for c in self.vault.collections(user_id=user_id)])

    def search_facts(
        self,
        query: Annotated[str | None, Field(min_length=1, max_length=500, description="Full-text search words.")] = None,
        subject: Annotated[
            str | None, Field(min_length=1, description="Subject name or alias ('user': owner).")
        ] = None,
        predicate: Annotated[str | None, Field(min_length=1, description="Predicate.")] = None,
        include_history: Annotated[bool, Field(description="Also superseded, retracted and deleted versions.")] = False,
        user_id: Annotated[str | None, Field(min_length=1, description="Only this user's.")] = None,
        limit: Annotated[int, Field(ge=1, le=200, description="Facts per page.")] = 20,
        cursor: Annotated[str | None, Field(min_length=1, description="next_cursor of the previous page.")] = None,
    ) -> FactPage:
        """Find facts by words, subject and predicate, most recently changed first."""
        statuses = ("active", "contested", "superseded", "retracted", "deleted") if include_history else None
        flt = FactFilter(user_id=user_id, subject=subject, predicate=predicate, q=query, status=statuses)
        page = self.vault.facts.page(flt, limit=limit, cursor=cursor)
        return FactPage(facts=[FactOut.of(f) for f in page.facts], next_cursor=page.next_cursor)

    def get_object(self, object_id: Annotated[Id, Field(description="A global id (fact, event, …).")]) -> ObjectOut:
        """Any object by its global id."""
        return ObjectOut.of_view(self.vault.get_object(object_id))

    def correct_fact(
        self,
        fact_id: Annotated[Id, Field(description="The fact to correct.")],
        object_text: Annotated[str, Field(min_length=1, max_length=2000, description="The correct value.")],
        predicate: Annotated[
            str | None, Field(min_length=1, max_length=128, description="A corrected predicate.")
        ] = None,
        subject: Annotated[str | None, Field(min_length=1, max_length=256, description="A corrected subject.")] = None,
    ) -> FactOut:
        """Write the corrected version; the old one is superseded and kept in the history."""
        fact = self.vault.facts.edit(fact_id, object_text=object_text, predicate=predicate, subject=subject)
        return FactOut.of(fact)

    def forget(
        self,
        user_id: UserId = "default",
        conversation_id: ConversationScope = None,
        project_id: ProjectScope = None,
        since: When = None,
        until: When = None,
        dry_run: Annotated[bool, Field(description="Only count what would be forgotten.")] = False,
        whole_user: Annotated[
            bool,
            Field(description="Required to forget everything of the user (no narrower scope)."),
        ] = False,
    ) -> ReceiptOut:
        """Forget a scope permanently, with everything derived from it; answers the receipt."""
        narrowed = any(v is not None for v in (conversation_id, project_id, since, until))
        if not narrowed and not whole_user:
            raise ValidationError(
                "conversation_id",
                "name a conversation, project or time range to forget",
                fix="Or pass whole_user=true to forget everything of this user.",
            )
        scope = ForgetScope(
            user_id=user_id,
            conversation_id=conversation_id,
            project_id=project_id,
            since=since,
            until=until,
            dry_run=dry_run,
        )
        return ReceiptOut.of(self.vault.forget(scope))

    def list_conversations(
        self,
        user_id: Annotated[str | None, Field(min_length=1, description="Only this user's.")] = None,
        limit: Annotated[int, Field(ge=1, le=1000, description="At most this many.")] = 50,
    ) -> ConversationList:
        """Conversations, most recently active first."""
        infos = self.vault.conversations(user_id=user_id, limit=limit)
        return ConversationList(conversations=[ConversationOut.of(i) for i in infos])

    # -- the subject workspace (the same verbs as POST /v6/workspace/<verb>) --------------------------------------
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


#: Every tool: (method name, description, annotations).  Descriptions are what a model reads.
TOOLS: tuple[tuple[str, str, ToolAnnotations], ...] = (
    (
        "ingest_event",
        "Remember one chat turn or observation. Cairn stores it at once and learns facts from it "
        "in the background; resending the same turn is harmless. Returns the event id.",
        ToolAnnotations(
            title="Remember an event",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    ),
    (
        "recall_context",
        "Get what Cairn remembers that bears on the user's question, before answering it: "
        "returns llm_context.text (prompt-ready, within the token budget; items cite #id), the "
        "ranked blocks (facts, turns, episodes, document passages) and how the query was "
        "routed. Give document_id or collection_id to answer from documents.",
        ToolAnnotations(title="Recall context", read_only_hint=True, open_world_hint=False),
    ),
    (
        "search_facts",
        "Search the facts Cairn knows (by words, subject, predicate), most recently changed "
        "first. Current facts only unless include_history is true. Paged with next_cursor.",
        ToolAnnotations(title="Search facts", read_only_hint=True, open_world_hint=False),
    ),
    (
        "get_object",
        "Look up anything by its global id (a fact, event, subject, conflict, episode or "
        "receipt): answers its kind and its value.",
        ToolAnnotations(title="Get by id", read_only_hint=True, open_world_hint=False),
    ),
    (
        "correct_fact",
        "Correct a fact the user says is wrong: writes a new version with the corrected value "
        "(the old version is kept in the history). Returns the new version.",
        ToolAnnotations(
            title="Correct a fact",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    ),
    (
        "forget",
        "Permanently forget a scope (a conversation, a project, a time range) and everything "
        "learned from it. Use dry_run=true first to see the counts. Returns the receipt.",
        ToolAnnotations(
            title="Forget",
            read_only_hint=False,
            destructive_hint=True,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    ),
    (
        "list_conversations",
        "List the conversations Cairn holds, most recently active first, with event counts.",
        ToolAnnotations(title="List conversations", read_only_hint=True, open_world_hint=False),
    ),
    (
        "upload_document",
        "Add a document to the vault: give name and content (a text; the name's extension, "
        "like .md or .txt, picks the parser) or path (the absolute path of a file on the "
        "user's machine: PDF, Markdown, HTML, text; only if the user allowed uploads by path). "
        "Optionally file it in a collection. "
        "Returns the document id and status; a file that cannot be parsed is a tool error "
        "saying why (it is held in quarantine).",
        ToolAnnotations(
            title="Upload a document",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    ),
    (
        "list_collections",
        "List the document collections (id, name, description, number of documents); pass a "
        "collection's id to recall_context to answer from its documents, or to "
        "upload_document to file a document in it.",
        ToolAnnotations(title="List collections", read_only_hint=True, open_world_hint=False),
    ),
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


def build_mcp_server(vault: Vault) -> MCPServer[Any]:
    """An MCP server whose tools act on ``vault``."""
    with _no_global_logging_setup():
        server: MCPServer[Any] = MCPServer(
            "cairn",
            title="Cairn",
            version=__version__,
            instructions=INSTRUCTIONS,
            log_level="WARNING",
        )
    tools = CairnTools(vault)
    for name, description, hints in TOOLS:
        server.add_tool(
            _as_tool_errors(getattr(tools, name)),
            name=name,
            description=description,
            annotations=hints,
            structured_output=True,
        )
    return server


class McpSessions:
    """Runs the streamable HTTP session manager for the app's lifetime; ends it early on shutdown.

    uvicorn waits for open connections before it runs the app's lifespan shutdown, and an MCP
    session keeps a GET stream open; :meth:`stop` (called when the server begins to shut down)
    ends the sessions first, so their streams close and the server need not wait for them.
    """

    def __init__(self, server: MCPServer[Any]) -> None:
        self._server = server
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Sessions are served inside this block (the app's lifespan)."""
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        async with anyio.create_task_group() as group:
            await group.start(self._run, self._stop)
            try:
                yield
            finally:
                self._stop.set()

    def stop(self) -> None:
        """End every session now (callable from any thread)."""
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already closed
                loop.call_soon_threadsafe(stop.set)

    async def _run(self, stop: asyncio.Event, *, task_status: TaskStatus[None]) -> None:
        async with self._server.session_manager.run():
            task_status.started()
            await stop.wait()


def _as_tool_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` with every failure answered as an MCP tool error instead of raised.

    The SDK would log a raised error's text; that text can quote the caller's data, so failures
    are answered here and logged by code or exception type only.
    """

    @functools.wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except PydanticValidationError as exc:
            problem = exc.errors()[0]
            field = ".".join(str(part) for part in problem["loc"]) or "arguments"
            log.info("MCP tool %s answered validation_error", fn.__name__)
            return _error(f"[validation_error] {field}: {problem['msg']}")  # type: ignore[return-value]
        except VaultError as exc:
            log.info("MCP tool %s answered %s", fn.__name__, exc.code)
            text = f"[{exc.code}] {exc.message}" + (f" Fix: {exc.fix}" if exc.fix else "")
            return _error(text)  # type: ignore[return-value]  # the SDK passes it through
        except Exception as exc:
            log.error("MCP tool %s failed with %s", fn.__name__, type(exc).__name__)
            return _error(  # type: ignore[return-value]
                "[internal_error] Cairn failed while handling this call; it may not have been "
                "completed. The vault's logs/ folder names the error type."
            )

    return call


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


@contextlib.contextmanager
def _no_global_logging_setup() -> Iterator[None]:
    """Keep the SDK from configuring the root logger.

    ``MCPServer()`` calls ``logging.basicConfig`` with its own stderr handler, which does nothing
    only when the root logger already has a handler.  The app owns logging (``app/logs.py``, with
    its secret filter); a placeholder handler makes the SDK's call a no-op in every process.
    """
    root = logging.getLogger()
    placeholder = logging.NullHandler()
    added = not root.handlers
    if added:
        root.addHandler(placeholder)
    try:
        yield
    finally:
        if added:
            root.removeHandler(placeholder)
