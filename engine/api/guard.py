"""The endpoint's guard: a pure ASGI middleware around the whole app, refusing before routing.

Checks run in this order, and the first that fails answers (HARDENING.md, "Localhost endpoint"):

1. **Host** is exactly ``127.0.0.1:PORT``, ``localhost:PORT`` or ``[::1]:PORT`` (host part
   case-insensitive) → else 421.  This is what defeats DNS rebinding: a page on ``evil.com`` that
   re-points its name at 127.0.0.1 still sends ``Host: evil.com``.  Missing, empty, ``:PORT``,
   look-alikes and the wildcard address all fail.
2. **Origin**, when the header is present at all (the literal ``null`` included), is on the
   allow-list, which is empty by default → else 403.
3. **Bearer token**, ``Authorization: Bearer <token>``, compared in constant time; only the public
   routes (health), and the requests ``tokenless`` admits (the Ollama proxy routes while the user's
   ``proxy.ollama_without_token`` is on), go without → else 401.
4. **Content type** of a state-changing request (POST/PUT/PATCH/DELETE) is JSON or multipart
   whenever it has a body or declares a type at all → else 415.  Browsers send text/plain and form
   posts cross-site without a preflight — with or without a body (``fetch(url, {method: "POST",
   mode: "no-cors"})`` to a restore or close route needs none); refusing them closes that door even
   if everything above were bypassed.  Only a request with neither body nor Content-Type passes
   unlabelled, so ``curl -X DELETE`` still works.
5. **Body size**: a declared ``Content-Length`` above the cap → 413 at once; a chunked body is
   counted while it streams and cut off with 413 when it passes the cap.
6. **Concurrency**: 503 while the vault is closing; 429 when every request slot is taken, both with
   ``Retry-After``.  Long-lived streams (SSE, MCP's GET stream) draw from their own small pool of
   slots, so a handful of open streams can never starve ordinary requests, and vice versa.
7. **Body deadline**: the whole body must have arrived :data:`BODY_TIMEOUT_S` after the request
   reached the guard → else 408, and the connection is closed.  A client that sends its headers and
   then trickles the body (or stops) would otherwise hold a request slot for as long as it likes;
   64 of them would shut everyone else out.

Whenever the answer starts before the request's body has been read to its end — a refusal above,
the 408, a route that answers without reading the body — it says ``Connection: close``, and the
server closes the connection once it is sent: the rest of the body would otherwise keep arriving
on a kept-alive connection that no timer ends.  (The deadline for the headers is the server's,
:data:`engine.api.server.HEADERS_TIMEOUT_S`: no request reaches the guard before they are complete.)

Because the guard wraps the app from outside, it protects every path, including ones that do not
exist (the 404 comes after the guard) and apps mounted later (``/mcp``).  It also strips any
``Access-Control-*`` header from every response (the endpoint never speaks CORS) and, as the last
line, turns an exception that escaped the app into the generic JSON 500 — logging the exception's
type only.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engine.api.errors import RETRY_AFTER_BUSY_S, RETRY_AFTER_UNAVAILABLE_S, error_payload

log = logging.getLogger(__name__)

LOOPBACK_HOST_NAMES = ("127.0.0.1", "localhost", "[::1]")
STATE_CHANGING_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
ACCEPTED_BODY_TYPES = frozenset({b"application/json", b"multipart/form-data"})
EVENT_STREAM = b"text/event-stream"
#: Seconds from the request reaching the guard until its whole body must have arrived.  Clients are local: even a
#: body at the size cap arrives over loopback in well under a second, so this only ends bodies that are trickled
#: or never finished — generously, since a slow client machine must not see its upload refused.
BODY_TIMEOUT_S = 60.0

#: Added to every response: answers carry personal data, so no cache may keep them, and no browser
#: may sniff them into something executable.
_RESPONSE_HEADERS = ((b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff"))


def _always_available() -> bool:
    return False


def _never_tokenless(method: str, path: str) -> bool:
    return False


class _BodyGate:
    """One request's body, counted and timed as the app reads it, and its answer's headers filtered.

    The two sides share what they know: a body cut off (too large, too slow) means the guard answered itself and the
    app's own answer is swallowed; an answer started before the body ended means the connection closes after it.
    """

    def __init__(
        self, receive: Receive, send: Send, *, limit: int, timeout_s: float, deadline: float, has_body: bool
    ) -> None:
        self._receive = receive
        self._send = send
        self._limit = limit
        self._timeout_s = timeout_s
        self._deadline = deadline
        self.received = 0
        self.body_done = not has_body
        self.started = False
        self.cut_off = False

    async def receive(self) -> Message:
        """The app's ``receive``: the client's messages until the body is too large or too slow."""
        if self.cut_off:
            return {"type": "http.disconnect"}
        if self.body_done:  # nothing more to time: what follows is waiting for the client to leave
            return await self._receive()
        try:
            async with asyncio.timeout_at(self._deadline):
                message = await self._receive()
        except TimeoutError:
            # Answer 408 ourselves (closing the connection), then tell the app the client went away, as for
            # the 413 below.
            return await self._cut(_too_slow(self._timeout_s))
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            self.body_done = not message.get("more_body", False)
            if self.received > self._limit:
                # Answer 413 ourselves, then tell the app the client went away: whatever the app
                # makes of a vanished client (FastAPI turns it into a 400) is swallowed by send below.
                return await self._cut(_too_large(self._limit))
        return message

    async def _cut(self, rejection: Rejection) -> Message:
        self.cut_off = True
        if not self.started:
            await _send_rejection(self._send, rejection, close=True)
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        """The app's ``send``: nothing once the body was cut off; the response's headers filtered."""
        if self.cut_off:
            return
        if message["type"] == "http.response.start":
            self.started = True
            headers = _filter_response_headers(message.get("headers", []))
            if not self.body_done:  # answered before the body was read to its end: see the module docstring
                headers.append((b"connection", b"close"))
            message = {**message, "headers": headers}
        await self._send(message)


@dataclass(frozen=True, slots=True)
class GuardConfig:
    """What the guard enforces.

    Attributes:
        port: the port the server listens on; part of every accepted Host.
        token: returns the current bearer token (None: no token is valid, everything but public
            routes gets 401).  Called on every request, so a rotated token takes effect at once.
        allowed_origins: browser origins allowed to call (``scheme://host[:port]``); empty
            refuses every Origin.
        max_body_bytes: largest request body accepted.
        max_concurrency: ordinary requests handled at once.
        max_streams: long-lived streams open at once (a separate pool).
        public_routes: ``(method, path)`` pairs served without a token.
        stream_paths: paths whose GET opens a long-lived stream; a GET asking for
            ``text/event-stream`` counts too.
        unavailable: True while the vault cannot serve (closing); requests then get 503.
        body_timeout_s: seconds from the request reaching the guard until its body must be complete
            (else 408 and the connection is closed).
        tokenless: ``(method, path)`` → whether this request goes without a token; asked at each
            request, so a setting that opens routes applies (and closes them) at once.  Every other
            check still applies.
    """

    port: int
    token: Callable[[], str | None]
    allowed_origins: frozenset[str] = frozenset()
    max_body_bytes: int = 25 * 1024 * 1024
    max_concurrency: int = 64
    max_streams: int = 8
    public_routes: frozenset[tuple[str, str]] = frozenset()
    stream_paths: frozenset[str] = frozenset()
    unavailable: Callable[[], bool] = _always_available
    body_timeout_s: float = BODY_TIMEOUT_S
    tokenless: Callable[[str, str], bool] = _never_tokenless


@dataclass(frozen=True, slots=True)
class Rejection:
    """A refusal decided by the guard, sent as the endpoint's JSON error."""

    status: int
    code: str
    message: str
    fix: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)
    headers: tuple[tuple[str, str], ...] = ()


class _Slots:
    """Requests in flight with a hard limit; never waits (a full pool is an immediate 429)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._in_use = 0
        # The guard normally runs on one event loop, but the in-process test client and an app
        # shared between servers may call it from several threads; the lock keeps the count exact
        # either way.
        self._lock = threading.Lock()

    @property
    def in_use(self) -> int:
        """Requests currently holding a slot."""
        return self._in_use

    def try_acquire(self) -> bool:
        with self._lock:
            if self._in_use >= self.limit:
                return False
            self._in_use += 1
            return True

    def release(self) -> None:
        with self._lock:
            self._in_use -= 1


class Guard:
    """ASGI middleware enforcing :class:`GuardConfig` on every request and WebSocket handshake."""

    def __init__(self, app: ASGIApp, config: GuardConfig) -> None:
        self.app = app
        self.config = config
        self._hosts = frozenset(f"{name}:{config.port}".encode("ascii") for name in LOOPBACK_HOST_NAMES)
        self._origins = frozenset(_normalise_origin(o) for o in config.allowed_origins)
        self.requests = _Slots(config.max_concurrency)
        self.streams = _Slots(config.max_streams)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check each HTTP request and WebSocket handshake before the app sees it; lifespan goes straight on."""
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
        else:  # lifespan: start-up and shut-down of the app itself, not a request
            await self.app(scope, receive, send)

    # -- HTTP --------------------------------------------------------------------------------------
    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = _headers(scope)
        rejection = self._check_caller(scope, headers) or self._check_body(scope, headers)
        if rejection is None and self.config.unavailable():
            rejection = Rejection(
                503,
                "unavailable",
                "The vault is closing and takes no more requests.",
                fix="Retry once Cairn is running again.",
                headers=(("Retry-After", str(RETRY_AFTER_UNAVAILABLE_S)),),
            )
        has_body = _has_body(headers)
        if rejection is not None:
            await _send_rejection(send, rejection, close=has_body)
            return
        pool = self.streams if _is_stream(scope, headers, self.config.stream_paths) else self.requests
        if not pool.try_acquire():
            await _send_rejection(send, _busy(pool), close=has_body)
            return
        try:
            await self._forward(scope, receive, send, has_body)
        finally:
            pool.release()

    def _check_caller(self, scope: Scope, headers: Mapping[bytes, list[bytes]]) -> Rejection | None:
        """Host, then Origin, then the token: who is asking, before what is asked."""
        hosts = headers.get(b"host", [])
        if len(hosts) != 1 or hosts[0].lower() not in self._hosts:
            return Rejection(
                421,
                "misdirected_request",
                "This endpoint answers only requests addressed to it on the loopback interface.",
                fix=f"Call http://127.0.0.1:{self.config.port} (or localhost / [::1], same port).",
                details={"allowed_hosts": sorted(h.decode("ascii") for h in self._hosts)},
            )
        origins = headers.get(b"origin")
        if origins is not None and (
            len(origins) != 1 or _normalise_origin(origins[0].decode("latin-1")) not in self._origins
        ):
            return Rejection(
                403,
                "origin_not_allowed",
                "Requests from web pages are refused unless their origin is explicitly allowed.",
                fix="Add the page's origin to endpoint.allowed_origins in settings.toml.",
            )
        if (scope["method"], scope["path"]) in self.config.public_routes:
            return None
        if self.config.tokenless(scope["method"], scope["path"]):
            return None
        if not self._token_matches(headers.get(b"authorization", [])):
            return Rejection(
                401,
                "unauthorized",
                "A valid bearer token is required.",
                fix="Send 'Authorization: Bearer <token>'; `cairn token` prints the token.",
                headers=(("WWW-Authenticate", 'Bearer realm="cairn"'),),
            )
        return None

    def _token_matches(self, values: list[bytes]) -> bool:
        if len(values) != 1:
            return False
        scheme, _, credential = values[0].strip().partition(b" ")
        credential = credential.strip()
        expected = self.config.token()
        if scheme.lower() != b"bearer" or not credential or not expected:
            return False
        return hmac.compare_digest(credential, expected.encode("utf-8"))

    def _check_body(self, scope: Scope, headers: Mapping[bytes, list[bytes]]) -> Rejection | None:
        """Content type of state-changing requests, then the declared size."""
        lengths = headers.get(b"content-length", [])
        if len(set(lengths)) > 1 or any(not value.strip().isdigit() for value in lengths):
            return Rejection(400, "bad_request", "The Content-Length header is not a single whole number.")
        declared = int(lengths[0]) if lengths else None
        has_body = (declared or 0) > 0 or b"transfer-encoding" in headers
        types = headers.get(b"content-type", [])
        if scope["method"] in STATE_CHANGING_METHODS and (has_body or types):
            media_type = types[0].split(b";", 1)[0].strip().lower() if len(types) == 1 else b""
            if media_type not in ACCEPTED_BODY_TYPES:
                return Rejection(
                    415,
                    "unsupported_media_type",
                    "A request that changes something must send JSON or multipart/form-data.",
                    fix="Send 'Content-Type: application/json' (files: multipart/form-data); a request "
                    "without a body may leave Content-Type out.",
                )
        if declared is not None and declared > self.config.max_body_bytes:
            return _too_large(self.config.max_body_bytes)
        return None

    async def _forward(self, scope: Scope, receive: Receive, send: Send, has_body: bool) -> None:
        """Run the app with the body counted and timed as it arrives and every response header filtered."""
        gate = _BodyGate(
            receive,
            send,
            limit=self.config.max_body_bytes,
            timeout_s=self.config.body_timeout_s,
            deadline=asyncio.get_running_loop().time() + self.config.body_timeout_s,
            has_body=has_body,
        )
        try:
            await self.app(scope, gate.receive, gate.send)
        except Exception as exc:
            if gate.cut_off:
                return  # the app tripped over the body we cut off; the client already has its 413
            if gate.started:
                # Starlette's error middleware already answered (its handler logged the type) and
                # re-raised; re-raising further would only make the server log a full traceback.
                log.debug("exception after the response started: %s", type(exc).__name__)
                return
            log.error("request failed outside the app's handlers: %s", type(exc).__name__)
            await _send_rejection(
                send,
                Rejection(500, "internal_error", "Cairn failed while handling this request."),
            )

    # -- WebSocket ---------------------------------------------------------------------------------
    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The caller checks for a WebSocket handshake; a refusal closes it before acceptance."""
        rejection = self._check_caller({**scope, "method": "GET"}, _headers(scope))
        if rejection is not None:
            await send({"type": "websocket.close", "code": 1008, "reason": rejection.code})
            return
        await self.app(scope, receive, send)


def _headers(scope: Scope) -> dict[bytes, list[bytes]]:
    """Request headers by lower-cased name, every value kept (two Host headers must be seen)."""
    values: dict[bytes, list[bytes]] = {}
    for name, value in scope.get("headers", ()):
        values.setdefault(bytes(name).lower(), []).append(bytes(value))
    return values


def _normalise_origin(origin: str) -> str:
    return origin.strip().lower().rstrip("/")


def _has_body(headers: Mapping[bytes, list[bytes]]) -> bool:
    """Whether the request says a body follows: chunked, or a Content-Length other than 0."""
    if b"transfer-encoding" in headers:
        return True
    return any(value.strip().lstrip(b"0") for value in headers.get(b"content-length", []))


def _is_stream(scope: Scope, headers: Mapping[bytes, list[bytes]], stream_paths: frozenset[str]) -> bool:
    if scope["method"] != "GET":
        return False
    if scope["path"] in stream_paths:
        return True
    return any(EVENT_STREAM in value.lower() for value in headers.get(b"accept", []))


def _filter_response_headers(headers: Any) -> list[tuple[bytes, bytes]]:
    """Drop every ``Access-Control-*`` header (no CORS, ever); add the no-store/no-sniff ones."""
    kept = [(bytes(n), bytes(v)) for n, v in headers if not bytes(n).lower().startswith(b"access-control-")]
    present = {name.lower() for name, _ in kept}
    kept.extend((name, value) for name, value in _RESPONSE_HEADERS if name not in present)
    return kept


def _too_large(limit: int) -> Rejection:
    return Rejection(
        413,
        "payload_too_large",
        f"The request body is larger than the limit of {limit} bytes.",
        fix="Send a smaller body, or raise endpoint.max_body_bytes in settings.toml.",
        details={"max_body_bytes": limit},
    )


def _too_slow(timeout_s: float) -> Rejection:
    return Rejection(
        408,
        "request_timeout",
        f"The request body did not arrive within {timeout_s:g} s.",
        fix="Send the whole body at once; the connection was closed.",
        details={"body_timeout_s": timeout_s},
    )


def _busy(pool: _Slots) -> Rejection:
    return Rejection(
        429,
        "too_many_requests",
        "Too many requests are being handled at once.",
        fix=f"Retry after {RETRY_AFTER_BUSY_S} s; send fewer requests in parallel.",
        details={"limit": pool.limit},
        headers=(("Retry-After", str(RETRY_AFTER_BUSY_S)),),
    )


async def _send_rejection(send: Send, rejection: Rejection, *, close: bool = False) -> None:
    """Answer ``rejection`` as the endpoint's JSON error; ``close``: the request's body is still unread, so the
    server is told to close the connection after this answer."""
    # A foreign Host or Origin is what a web page probing the vault looks like: worth an INFO line.
    # Never the header values themselves; they are the caller's, and may be crafted to mislead.
    level = logging.INFO if rejection.status in (421, 403) else logging.DEBUG
    log.log(level, "refused a request: %s %s", rejection.status, rejection.code)
    details = dict(rejection.details)
    if rejection.fix:
        details.setdefault("fix", rejection.fix)
    body = error_payload(rejection.code, rejection.message, details)
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode("ascii")),
        *_RESPONSE_HEADERS,
        *((name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in rejection.headers),
    ]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": rejection.status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
