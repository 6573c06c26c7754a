"""MCP sessions past the limit: the least recently used one is ended, instead of the new client refused.

The SDK's session manager refuses a new session with 503 "Too many open sessions" while ``max_sessions`` are open,
until one is ended by its client or idles out — after 30 minutes.  Sixty-four ``initialize`` calls (one client
reconnecting in a loop, or a script) then lock every other MCP client out for half an hour; on a single-person
machine the client being refused is usually the one the person is using right now.

:class:`SessionLru` sits in front of the SDK's handler at ``/mcp``.  It notes which session each request uses, in
order of use, and once a new session is opened past its limit it ends the least recently used one the way a client
ends its own: a ``DELETE`` with the session's id, the transport's documented termination (no private SDK state is
touched).  The evicted client's next request is answered 404, which MCP clients take as the sign to initialize
again.  Sessions that idled out in the SDK are the least recently used ones, so they are the first "evicted"
(their ``DELETE`` finds nothing) and the count stays honest.

The SDK's own limit stays, as a backstop above this one: room for the sessions kept here plus every request that
may be opening one at the same moment (see :func:`engine.api.app.create_app`).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger(__name__)

#: The header carrying a session's id, in requests and in the answer that opens the session.
SESSION_HEADER = b"mcp-session-id"


class SessionLru:
    """ASGI middleware keeping at most ``limit`` MCP sessions, ending the least recently used one past it.

    Args:
        app: the SDK's streamable HTTP handler (the ``/mcp`` route's endpoint).
        limit: sessions kept open; the next one opened ends the least recently used.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        if limit < 1:
            raise ValueError("the MCP session limit must be at least 1")
        self.app = app
        self.limit = limit
        #: Session ids in order of use, least recent first.
        self._sessions: OrderedDict[str, None] = OrderedDict()
        #: Sessions ended to make room (for tests and the logs).
        self.evicted = 0

    @property
    def open_sessions(self) -> int:
        """Sessions kept (some may have idled out in the SDK since their last use)."""
        return len(self._sessions)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Note the session each HTTP request opens or uses, ending the least recently used past ``limit``; anything
        but HTTP goes straight to the app."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        session = _header(scope.get("headers", ()), SESSION_HEADER)
        if session is None:
            await self._opening(scope, receive, send)
        else:
            await self._using(session, scope, receive, send)

    async def _using(self, session: str, scope: Scope, receive: Receive, send: Send) -> None:
        """A request within a session: it is the most recently used, now and when the request ends (a GET stream
        uses its session for as long as it is open)."""
        self._touch(session)
        status = 0

        async def watched(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, watched)
        finally:
            if status == 404 or (scope["method"] == "DELETE" and 200 <= status < 300):
                self._sessions.pop(session, None)  # unknown, expired, or ended by its client
            else:
                self._touch(session)

    async def _opening(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A request without a session: if it opens one (an accepted ``initialize``), make room for it."""
        opened: str | None = None

        async def watched(message: Message) -> None:
            nonlocal opened
            if message["type"] == "http.response.start" and int(message["status"]) < 400:
                opened = _header(message.get("headers", ()), SESSION_HEADER)
                if opened is not None:
                    self._sessions[opened] = None
                    self._sessions.move_to_end(opened)
            await send(message)
            if opened is not None and message["type"] == "http.response.start":
                await self._evict(keep=opened)

        await self.app(scope, receive, watched)

    def _touch(self, session: str) -> None:
        if session in self._sessions:  # never re-add one that was evicted or ended meanwhile
            self._sessions.move_to_end(session)

    async def _evict(self, keep: str) -> None:
        """End the least recently used sessions until no more than ``limit`` are kept (never ``keep``)."""
        while len(self._sessions) > self.limit:
            oldest = next(iter(self._sessions))
            if oldest == keep:  # sessions opened meanwhile are newer; their openings make the room
                return
            del self._sessions[oldest]  # before awaiting: a concurrent opening picks the next one
            self.evicted += 1
            status = await self._end(oldest)
            log.info("ended the least recently used MCP session to make room for a new one (%s)", status)

    async def _end(self, session: str) -> int:
        """``DELETE`` the session through the SDK, as its client would; returns the status it answered
        (200 ended, 404 it had already ended)."""
        scope: Scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": "DELETE",
            "scheme": "http",
            "path": "/mcp",
            "raw_path": b"/mcp",
            "query_string": b"",
            "root_path": "",
            "headers": [(SESSION_HEADER, session.encode("latin-1"))],
            "client": None,
            "server": None,
            "state": {},
        }
        sent = False
        status = 0

        async def receive() -> Message:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])

        await self.app(scope, receive, send)
        return status


def _header(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> str | None:
    """The value of header ``name`` (lower-case) among ASGI ``(name, value)`` pairs, or None."""
    for key, value in headers:
        if bytes(key).lower() == name:
            return bytes(value).decode("latin-1")
    return None
