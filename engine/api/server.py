"""Serving the endpoint with uvicorn on loopback only (127.0.0.1 and, when the OS has it, ::1).

The sockets are bound here, explicitly to loopback addresses, and handed to uvicorn; no code path
can bind a wildcard address.  :meth:`EndpointServer.start` runs the server in a background thread
(the GUI process); :meth:`EndpointServer.run` blocks in the calling thread until SIGINT/SIGTERM
(``cairn serve``).

Shutdown: an app with a ``begin_shutdown()`` method (the endpoint app) is called before uvicorn
waits for open connections, so long-lived streams end at once instead of holding the shutdown.

Deadlines: a connection that sends no request, or only part of its headers, is closed after
:data:`HEADERS_TIMEOUT_S` (uvicorn's httptools protocol has no such timer: such a connection was kept
for ever, holding a socket and a file descriptor); an idle keep-alive connection after
:data:`KEEP_ALIVE_TIMEOUT_S`.  Reading the body has its own deadline in the guard
(:data:`engine.api.guard.BODY_TIMEOUT_S`), where the client can still be answered 408.

Signals: uvicorn's own handling re-raises the caught signal once it has shut down, which would kill
``cairn serve`` by SIGTERM (or raise KeyboardInterrupt) before it closes the vault.
:func:`_server_class` keeps uvicorn's graceful shutdown (a second Ctrl-C still forces it) but lets
:meth:`EndpointServer.run` simply return, so the caller closes the vault and exits 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from engine.errors import EnvironmentProblem

#: How long a thread may keep the interpreter while another waits (see :class:`EndpointServer`).
SWITCH_INTERVAL_S = 0.001
#: Seconds a connection may take to send a request's headers, counted from when it opens (or, on a kept-alive
#: connection, from the request's first byte).  Clients are local programs whose headers arrive in one write; a
#: connection still without complete headers after this long is idle or hostile, and is closed.
HEADERS_TIMEOUT_S = 10.0
#: Seconds a kept-alive connection may sit idle between requests before it is closed (uvicorn's default, stated).
KEEP_ALIVE_TIMEOUT_S = 5

log = logging.getLogger(__name__)

LOOPBACK_V4 = "127.0.0.1"
LOOPBACK_V6 = "::1"


def bind_loopback(port: int) -> list[socket.socket]:
    """Listening sockets on 127.0.0.1 and ::1 (when IPv6 is available) for ``port`` (0 = any free
    port).

    With ``port=0`` the IPv6 socket takes the port the IPv4 one got, so both share one address.

    Raises:
        EnvironmentProblem: the port is in use (with the fix).
    """
    sockets: list[socket.socket] = []
    # IPPROTO_TCP explicitly: asyncio turns Nagle off (TCP_NODELAY) only on sockets that say they
    # are TCP; with Nagle on, every keep-alive response stalls ~40 ms behind a delayed ACK.
    v4 = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    v4.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        v4.bind((LOOPBACK_V4, port))
    except OSError as exc:
        v4.close()
        raise EnvironmentProblem(
            f"Port {port} on {LOOPBACK_V4} is already in use, so the endpoint cannot start.",
            fix="Stop the other program, or choose another port (endpoint.port / --port / CAIRN_ENDPOINT_PORT).",
        ) from exc
    v4.listen(128)
    v4.set_inheritable(True)
    sockets.append(v4)
    actual = v4.getsockname()[1]
    if socket.has_ipv6:
        v6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            v6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            v6.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            v6.bind((LOOPBACK_V6, actual))
            v6.listen(128)
            sockets.append(v6)
        except OSError:
            v6.close()  # no IPv6 loopback on this machine: IPv4 alone is fine
    return sockets


class EndpointServer:
    """One uvicorn server on loopback sockets.

    ``make_app(port)`` builds the ASGI app once the port is known (the Host allow-list includes the
    port, and ``port=0`` picks a free one).  ``headers_timeout_s`` bounds how long a connection may take
    to send a request's headers (tests shorten it).
    """

    def __init__(
        self, make_app: Callable[[int], Any], port: int, *, headers_timeout_s: float = HEADERS_TIMEOUT_S
    ) -> None:
        import uvicorn  # only processes that serve pay for uvicorn

        if not headers_timeout_s > 0:
            raise ValueError("headers_timeout_s must be a positive number of seconds")

        self.sockets = bind_loopback(port)
        self.port = int(self.sockets[0].getsockname()[1])
        try:
            self.app = make_app(self.port)
        except BaseException:
            for sock in self.sockets:
                sock.close()
            raise
        config = uvicorn.Config(
            self.app,
            log_level="warning",
            # uvicorn's records go through the app's handlers (and their secret filter)
            log_config=None,
            access_log=False,  # paths and queries can carry memory content; never log them
            lifespan="on",
            timeout_graceful_shutdown=5,
            server_header=False,
            date_header=False,
            # Loopback only, no proxy in front: X-Forwarded-* headers are never to be believed, and the
            # middleware reading them costs every request.
            proxy_headers=False,
            # httptools parses HTTP in C: with the pure-Python h11 parser, parsing and answering a single-event
            # ingest cost more interpreter time than storing it (1,771 vs 2,200 acknowledgements/s at 32 clients,
            # BENCHMARKS.md).  The plain asyncio loop whatever else is installed (the chroma extra brings uvloop,
            # which measured no faster here): the server that is tested is the one that ships.
            loop="asyncio",
            http=_protocol_class(headers_timeout_s),
            timeout_keep_alive=KEEP_ALIVE_TIMEOUT_S,
        )
        # The event loop answers many short requests while worker threads (enrichment, the writer) run
        # Python too; with the interpreter's default 5 ms switch interval a request may wait that long for
        # each busy thread before it is even parsed.
        if sys.getswitchinterval() > SWITCH_INTERVAL_S:
            sys.setswitchinterval(SWITCH_INTERVAL_S)
        self._server: Any = _server_class()(config)
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> str:
        """The base URL clients use."""
        return f"http://{LOOPBACK_V4}:{self.port}"

    @property
    def bound_addresses(self) -> list[tuple[str, int]]:
        """Every (host, port) the server listens on."""
        return [(str(s.getsockname()[0]), int(s.getsockname()[1])) for s in self.sockets]

    @property
    def stop_signal(self) -> int | None:
        """The signal that ended :meth:`run` (None when stopped otherwise or still running)."""
        captured: list[int] = self._server.captured
        return captured[0] if captured else None

    def run(self) -> None:
        """Serve in this thread until SIGINT/SIGTERM, then return after a graceful shutdown.

        The signal handlers are installed only while serving, and only on the main thread.  What start-up made is
        set aside first (:func:`set_aside_startup_heap`): this is the process's server for the rest of its life.
        """
        set_aside_startup_heap()
        self._server.run(sockets=self.sockets)

    def start(self, timeout: float = 10.0) -> None:
        """Serve in a background thread; returns once the server accepts connections."""
        # uvicorn installs signal handlers only on the main thread, so a background server leaves
        # them alone.
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": self.sockets}, name="endpoint", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise EnvironmentProblem("The endpoint did not start.", fix="See the log in the vault's logs/.")
            time.sleep(0.01)

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the server to finish in-flight requests and stop."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
        for sock in self.sockets:
            try:
                sock.close()
            except OSError:
                pass


#: The collector's first threshold in a serving process: a young collection after this many new container objects
#: (Python's default is 700).  Requests make and drop thousands of objects a second, nearly all freed by reference
#: counting before any collection; at 700 the server ran ~2,900 young collections in one endpoint benchmark (1.3–1.4 s
#: of the interpreter, plus 0.4 s of middle-generation ones), at 10,000 ~470 (0.2–0.4 s, and 0.1 s), with no longer a
#: pause (BENCHMARKS.md "Endpoint").
GEN0_THRESHOLD = 10_000


def set_aside_startup_heap() -> None:
    """Collect once, move every object alive to the collector's permanent generation (``gc.freeze``), and collect
    the young generation less often (:data:`GEN0_THRESHOLD`).

    A server process holds ~160,000 objects the collector tracks once its modules are imported and its vault is open
    (FastAPI's, pydantic's and SQLAlchemy's functions, types and caches, which live as long as the process).  Each
    full collection traversed all of them: 120–200 ms on a two-core machine, holding the interpreter lock while
    every request waited, ten times in one run of the endpoint benchmark.  Frozen, they are never traversed again:
    a full collection then took ~16 ms.  The desktop app freezes its start-up heap too, after its first paint
    (``app.desktop``); recall's helper processes once their vectors are loaded (:mod:`engine.recall.processes`).
    """
    gc.collect()
    gc.freeze()
    _gen0, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(GEN0_THRESHOLD, gen1, gen2)


def _protocol_class(headers_timeout_s: float) -> type[Any]:
    """The HTTP protocol uvicorn serves each connection with: httptools, with the headers deadline."""
    base = _deadline_protocol()
    return type(base.__name__, (base,), {"headers_timeout_s": headers_timeout_s})


@functools.cache
def _deadline_protocol() -> type[Any]:
    """uvicorn's httptools protocol, closing a connection whose request headers do not arrive in time.

    uvicorn arms a timer only once a response is complete (keep-alive), and cancels it on any byte received; a
    connection that sends nothing, or stops halfway through its headers, is otherwise kept for ever.  The timer
    here starts when the connection opens and again when a request's first byte arrives, and stops when the
    headers are complete; when it fires there is no request to answer yet, so the connection is just closed.
    Built on first use, like :func:`_server_class`.
    """
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class _DeadlineProtocol(HttpToolsProtocol):
        headers_timeout_s: float = HEADERS_TIMEOUT_S

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._headers_deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm_headers_deadline()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._arm_headers_deadline()

        def on_headers_complete(self) -> None:
            self._disarm_headers_deadline()
            super().on_headers_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm_headers_deadline()
            super().connection_lost(exc)

        def _arm_headers_deadline(self) -> None:
            if self._headers_deadline is None:
                self._headers_deadline = self.loop.call_later(self.headers_timeout_s, self._headers_timed_out)

        def _disarm_headers_deadline(self) -> None:
            if self._headers_deadline is not None:
                self._headers_deadline.cancel()
                self._headers_deadline = None

        def _headers_timed_out(self) -> None:
            self._headers_deadline = None
            if not self.transport.is_closing():
                log.debug("closed a connection that sent no complete request headers in %s s", self.headers_timeout_s)
                self.transport.close()

    return _DeadlineProtocol


@functools.cache
def _server_class() -> type[Any]:
    """uvicorn's Server, with signal handling that ends :meth:`run` instead of re-raising the
    signal.

    Built on first use so that importing this module does not import uvicorn.
    """
    import uvicorn

    class _Server(uvicorn.Server):
        def __init__(self, config: uvicorn.Config) -> None:
            super().__init__(config)
            self.captured: list[int] = []

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                # only the main thread can handle signals; a background server is ended by stop()
                yield
                return
            handled = [signal.SIGINT, signal.SIGTERM]
            originals = {sig: signal.signal(sig, self._on_signal) for sig in handled}
            try:
                yield
            finally:
                for sig, handler in originals.items():
                    signal.signal(sig, handler)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            # uvicorn waits for open connections before it tells the app (lifespan) anything, so
            # an app with endless responses (the change stream) is told first that it must end
            # them; otherwise every open stream would hold the shutdown for the full timeout.
            begin_shutdown = getattr(self.config.app, "begin_shutdown", None)
            if callable(begin_shutdown):
                begin_shutdown()
            await super().shutdown(sockets)

        def _on_signal(self, sig: int, frame: object) -> None:
            self.captured.append(sig)
            if self.should_exit and sig == signal.SIGINT:
                self.force_exit = True  # a second Ctrl-C: stop waiting for open connections
            self.should_exit = True

    return _Server
