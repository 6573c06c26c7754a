"""The memory proxy's routes: Ollama's and OpenAI's model APIs answered by forwarding to ``proxy.upstream``.

A pure ASGI middleware inside the guard (Host, Origin, token, content type, body size and concurrency are checked
as for every route) and in front of FastAPI, which never sees these paths: the answer is the upstream's, streamed
through chunk by chunk as it arrives, with its status code, its body and its content type unchanged (unless it is
translated, below).  Only the chat routes are touched (:data:`CHAT_ROUTES`); the others — model lists, model
details, embeddings, the version — pass through as they are.

For a chat request, with ``proxy.mode`` allowing it:

1. the conversation is named by the ``X-Cairn-Conversation`` header, else by a hash of its opening
   (:func:`~engine.api.proxy.dialects.derived_conversation_id`);
2. recall's ``llm_context`` for the user's new turn goes before the model as a system message (``inject``);
3. the user's turn is recorded while the upstream works, and the reply once the upstream has finished it, just
   after the answer's last byte went to the client (``record``): the vault's commit is never what a client waits
   for.  A reply cut off before the upstream said it was done is not recorded.

Upstreams: an Ollama server serves both protocols itself (OpenAI's under ``/v1``), so either kind of client is
forwarded as it is.  An OpenAI-compatible upstream (a URL ending in ``/v1``) takes OpenAI clients as they are;
Ollama clients are translated (:mod:`engine.api.proxy.translate`).

What the client sent to Cairn stays with Cairn: the ``Authorization`` header (Cairn's token) and every other
header but the body's type are dropped; the upstream gets ``proxy.upstream_api_key`` when one is set.  The
upstream client ignores proxy environment variables: the only address it ever calls is the configured one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import httpx
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engine.api.proxy.dialects import (
    ChatKind,
    ReplyReader,
    derived_conversation_id,
    json_object,
    user_turn,
    with_memory,
)
from engine.api.proxy.memory import Exchange, ProxyMemory
from engine.api.proxy.translate import Answer, forward_translated
from engine.api.proxy.wire import (
    CHAT_ROUTES,
    CONNECT_TIMEOUT_S,
    Protocol,
    send_error,
    upstream_headers,
)
from engine.config import ProxySettings
from engine.vault import Vault

log = logging.getLogger(__name__)


#: The Ollama routes the proxy answers.
OLLAMA_ROUTES = frozenset(
    {
        ("POST", "/api/chat"),
        ("POST", "/api/generate"),
        ("GET", "/api/tags"),
        ("POST", "/api/show"),
        ("POST", "/api/embed"),
        ("GET", "/api/version"),
    }
)
#: The OpenAI routes the proxy answers.
OPENAI_ROUTES = frozenset({("POST", "/v1/chat/completions"), ("GET", "/v1/models"), ("POST", "/v1/embeddings")})
CONVERSATION_HEADER = b"x-cairn-conversation"
MEMORY_HEADER = b"x-cairn-memory"
#: Response headers that describe the upstream's connection or encoding, not the answer: the proxy's own
#: connection to the client sets them anew.
_HOP_HEADERS = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"transfer-encoding",
        b"content-length",
        b"content-encoding",
        b"server",
        b"date",
        b"proxy-connection",
        b"upgrade",
        b"trailer",
    }
)


def protocol_of(path: str) -> Protocol:
    """Which protocol a proxy path belongs to."""
    return "openai" if path.startswith("/v1/") else "ollama"


def upstream_kind(upstream: str) -> Protocol:
    """An upstream URL ending in ``/v1`` is an OpenAI-compatible server; anything else is Ollama."""
    return "openai" if upstream.rstrip("/").endswith("/v1") else "ollama"


def is_ollama_route(method: str, path: str) -> bool:
    """Whether ``method path`` is one of the Ollama proxy routes (those ``proxy.ollama_without_token`` opens)."""
    return (method, path) in OLLAMA_ROUTES


@dataclass(frozen=True, slots=True)
class Upstream:
    """Where one request goes."""

    url: str
    translate: bool  # an Ollama request to an OpenAI-compatible server


def resolve(settings: ProxySettings, path: str) -> Upstream:
    """The upstream URL for a proxy ``path`` under ``settings`` (whose ``upstream`` is set)."""
    base = settings.upstream.rstrip("/")
    client = protocol_of(path)
    if upstream_kind(base) == "ollama":
        return Upstream(base + path, translate=False)  # Ollama serves /v1 itself
    if client == "openai":
        return Upstream(base + path[len("/v1") :], translate=False)
    return Upstream(base, translate=True)


class MemoryProxy:
    """ASGI middleware answering the proxy routes; every other request goes on to ``app``."""

    def __init__(self, app: ASGIApp, vault: Callable[[], Vault]) -> None:
        self.app = app
        self._vault = vault
        self.memory = ProxyMemory(vault)
        self._clients: dict[asyncio.AbstractEventLoop, httpx.AsyncClient] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a proxy route from the configured upstream (translated for an Ollama client of an OpenAI server);
        every other request goes on to ``app``."""
        if scope["type"] != "http" or (
            (scope["method"], scope["path"]) not in OLLAMA_ROUTES
            and (scope["method"], scope["path"]) not in OPENAI_ROUTES
        ):
            await self.app(scope, receive, send)
            return
        body, ended = await _read_body(receive)
        if not ended:
            return  # the client left, or the guard cut the body off and answered itself
        path: str = scope["path"]
        settings = self._vault().settings.proxy
        if not settings.upstream:
            await send_error(
                send,
                protocol_of(path),
                503,
                "Cairn's memory proxy has no upstream model server: set proxy.upstream in Cairn's settings "
                "(http://127.0.0.1:11434 for Ollama, or an OpenAI-compatible server's URL ending in /v1).",
            )
            return
        upstream = resolve(settings, path)
        if upstream.translate:
            await forward_translated(self, scope, body, receive, send, settings)
            return
        await self.forward(scope, body, receive, send, settings, upstream.url)

    # -- forwarding --------------------------------------------------------------------------------------------
    async def forward(
        self, scope: Scope, body: bytes, receive: Receive, send: Send, settings: ProxySettings, url: str
    ) -> None:
        """Send the request on to ``url`` and its answer back, with memory for a chat request."""
        path: str = scope["path"]
        chat = CHAT_ROUTES.get(path)
        turn = None
        if chat is not None and settings.mode != "off":
            turn = await self.prepare(scope, chat, body, settings)
            body = turn.body
        await self.exchange(
            scope["method"], url, body, receive, send, settings, protocol_of(path), turn=turn, chat=chat
        )

    async def exchange(
        self,
        method: str,
        url: str,
        body: bytes,
        receive: Receive,
        send: Send,
        settings: ProxySettings,
        protocol: Protocol,
        *,
        turn: ChatTurn | None = None,
        chat: ChatKind | None = None,
        convert: Answer | None = None,
    ) -> None:
        """One request to the upstream, its answer relayed (through ``convert`` when the protocols differ)."""
        client = self.client()
        request = client.build_request(
            method,
            url,
            content=body or None,
            headers=upstream_headers(settings),
            timeout=httpx.Timeout(settings.timeout_s, connect=CONNECT_TIMEOUT_S),  # per request: the setting is live
        )
        try:
            response = await client.send(request, stream=True)
        except httpx.HTTPError as exc:
            await send_error(send, protocol, 502, _unreachable(settings.upstream, exc))
            if turn is not None:
                await turn.recorded_user()
            return
        try:
            await self._relay(response, receive, send, turn, chat, convert)
        finally:
            await response.aclose()

    async def prepare(self, scope: Scope, chat: ChatKind, body: bytes, settings: ProxySettings) -> ChatTurn:
        """Name the conversation, recall and inject, and start recording the user's turn."""
        parsed = json_object(body)
        turn = ChatTurn(self.memory, body)
        if parsed is None:
            return turn  # not a request the upstream will accept either; it says why
        header = _header(scope, CONVERSATION_HEADER)
        exchange = Exchange(
            conversation_id=header or derived_conversation_id(chat, parsed),
            protocol=protocol_of(scope["path"]),
            model=str(parsed.get("model") or ""),
        )
        turn.exchange = exchange
        user = user_turn(chat, parsed)
        if user is None:
            return turn
        if settings.mode in ("inject", "both"):
            started = time.perf_counter()
            context = await self.memory.recall(exchange, user.text)
            turn.recall_ms = (time.perf_counter() - started) * 1000
            if context is None:
                turn.status = "unavailable"
            elif context:
                turn.body = json.dumps(with_memory(chat, parsed, context), ensure_ascii=False).encode("utf-8")
                turn.status = "injected"
            else:
                turn.status = "nothing-recalled"
        if settings.mode in ("record", "both"):
            turn.user_task = asyncio.ensure_future(self.memory.record(exchange, "user", user.text, index=user.index))
            if turn.status == "untouched":
                turn.status = "recorded"
        return turn

    async def _relay(
        self,
        response: httpx.Response,
        receive: Receive,
        send: Send,
        turn: ChatTurn | None,
        chat: ChatKind | None,
        convert: Answer | None,
    ) -> None:
        """The upstream's answer to the client as it arrives, then the reply recorded.

        A client that leaves mid-answer (the user pressed Stop) ends the upstream's answer too: its connection is
        closed, which is how Ollama and the OpenAI-compatible servers learn to stop generating.  The part-reply
        is not recorded.
        """
        headers = [(name.lower(), value) for name, value in response.headers.raw if name.lower() not in _HOP_HEADERS]
        if convert is not None:
            kind = convert.start(response.status_code, response.headers.get("content-type", ""))
            headers = [(b"content-type", kind)]
        reader = None
        if turn is not None:
            headers.append((MEMORY_HEADER, turn.status.encode("ascii")))
            if turn.recall_ms is not None:  # what the answer waited for recall (the standard Server-Timing header)
                headers.append((b"server-timing", f"recall;dur={turn.recall_ms:.2f}".encode("ascii")))
            if chat is not None and turn.records and response.status_code == 200:
                reader = ReplyReader(chat, _framing(_content_type(headers)))
        await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
        gone = asyncio.ensure_future(_disconnect(receive))
        try:
            async for chunk in response.aiter_bytes():
                if gone.done():
                    reader = None
                    break
                out = convert.feed(chunk) if convert is not None else chunk
                if reader is not None:
                    reader.feed(out)
                if out:
                    await send({"type": "http.response.body", "body": out, "more_body": True})
            if convert is not None and not gone.done():
                out = convert.finish()
                if reader is not None:
                    reader.feed(out)
                await send({"type": "http.response.body", "body": out, "more_body": True})
        except httpx.HTTPError as exc:
            # The answer has started: all that can be done is to end it; the client sees a cut-off reply.
            log.warning("memory proxy: the upstream's answer broke off (%s)", type(exc).__name__)
            reader = None
        finally:
            gone.cancel()
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        if turn is not None:
            # After the last byte: the client has its whole answer and may send its next request while the
            # turns are committed (on a kept-alive connection too: the server reads it once this answer ended).
            await turn.finish(reader)

    def client(self) -> httpx.AsyncClient:
        """The upstream client of the running event loop (one per loop: httpx clients are bound to theirs)."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = httpx.AsyncClient(
                trust_env=False,  # never an HTTP(S)_PROXY from the environment: only the configured address
                follow_redirects=False,
            )
        return client

    async def aclose(self) -> None:
        """Close the upstream client of the running loop (the app's lifespan ends)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()


class ChatTurn:
    """One chat request's memory work: its (possibly injected) body, the recording of both turns."""

    def __init__(self, memory: ProxyMemory, body: bytes) -> None:
        self.memory = memory
        self.body = body
        self.exchange: Exchange | None = None
        #: What the ``X-Cairn-Memory`` header says: ``injected``, ``nothing-recalled``, ``recorded`` (record mode),
        #: ``unavailable`` (recall failed: forwarded without memory) or ``untouched`` (no new user turn in it).
        #: With ``proxy.mode = off`` there is no header.
        self.status = "untouched"
        self.user_task: asyncio.Future[bool] | None = None
        #: Milliseconds spent in recall (None: no recall ran).
        self.recall_ms: float | None = None

    @property
    def records(self) -> bool:
        """Whether this turn is being recorded."""
        return self.user_task is not None

    async def recorded_user(self) -> bool:
        """Wait for the user's turn to be stored (it started before forwarding)."""
        return await self.user_task if self.user_task is not None else False

    async def finish(self, reader: ReplyReader | None) -> None:
        """Record the reply once the user's turn is in, so the two keep their order."""
        recorded = await self.recorded_user()
        if reader is None or self.exchange is None:
            return
        reader.finish()
        if recorded and reader.complete and reader.text.strip():
            await self.memory.record(self.exchange, "assistant", reader.text)


# -- helpers ---------------------------------------------------------------------------------------------------
async def _read_body(receive: Receive) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    while True:
        message: Message = await receive()
        if message["type"] != "http.request":
            return b"", False
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks), True


async def _disconnect(receive: Receive) -> None:
    """Returns once the client has gone (the request's body was already read: nothing else can arrive)."""
    while (await receive())["type"] != "http.disconnect":
        pass


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", ()):
        if bytes(key).lower() == name:
            return bytes(value).decode("utf-8", "replace").strip()[:256]
    return ""


def _content_type(headers: list[tuple[bytes, bytes]]) -> str:
    for name, value in headers:
        if name == b"content-type":
            return value.decode("latin-1")
    return ""


def _framing(content_type: str) -> Literal["ndjson", "sse", "json"]:
    media = content_type.split(";", 1)[0].strip().lower()
    if media == "text/event-stream":
        return "sse"
    if media in ("application/x-ndjson", "application/ndjson"):
        return "ndjson"
    return "json"


def _unreachable(upstream: str, exc: httpx.HTTPError) -> str:
    return (
        f"Cairn's memory proxy could not reach the model server at {upstream} ({type(exc).__name__}). "
        "Is it running? (proxy.upstream in Cairn's settings)"
    )
