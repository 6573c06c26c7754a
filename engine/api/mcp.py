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
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError as PydanticValidationError

from engine.api.mcp_workspace import WORKSPACE_TOOLS, UserId, WorkspaceTools
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
from engine.api.models.system import ObjectOut, ReceiptOut
from engine.api.uploads import Upload, upload_out
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
ConversationScope = Annotated[str | None, Field(min_length=1, max_length=256, description="Only this conversation.")]
ProjectScope = Annotated[str | None, Field(min_length=1, max_length=256, description="Only this project.")]
When = Annotated[datetime | None, Field(description="ISO-8601 (no zone = UTC) or epoch seconds.")]
DocumentScope = Annotated[Id | None, Field(description="Answer from this document (its id).")]
CollectionScope = Annotated[Id | None, Field(description="Answer from this collection's documents (its id).")]


class CairnTools(WorkspaceTools):
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
        return IngestAck.of(self.vault.events.ingest(body.to_event(SOURCE)))

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
    *WORKSPACE_TOOLS,
)


#: Each tool's description as the MCP package derives it from the method's signature (argument model, JSON
#: schemas), made once per process: it is the same for every vault, and deriving it costs ~10 ms a tool — a third
#: of a second for each server built, which every endpoint start (and every test that builds one) would pay again.
_TOOL_TEMPLATES: dict[str, Tool] = {}


def _tool(name: str, fn: Callable[..., Any], description: str, hints: ToolAnnotations) -> Tool:
    template = _TOOL_TEMPLATES.get(name)
    if template is None:
        template = Tool.from_function(fn, name=name, description=description, annotations=hints, structured_output=True)
        _TOOL_TEMPLATES[name] = template
    return template.model_copy(update={"fn": fn})


def build_mcp_server(vault: Vault) -> MCPServer[Any]:
    """An MCP server whose tools act on ``vault``."""
    tools = CairnTools(vault)
    bound = [
        _tool(name, _as_tool_errors(getattr(tools, name)), description, hints) for name, description, hints in TOOLS
    ]
    with _no_global_logging_setup():
        server: MCPServer[Any] = MCPServer(
            "cairn",
            title="Cairn",
            version=__version__,
            instructions=INSTRUCTIONS,
            log_level="WARNING",
            tools=bound,
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
