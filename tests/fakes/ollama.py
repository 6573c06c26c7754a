"""A fake Ollama server for tests: Ollama's HTTP API on loopback, programmable replies and faults.

Ollama cannot be installed where the tests run, so the engine's real client code (and the official
``ollama`` package under it) is exercised against this server over real HTTP.  This module owns:

* the routes Cairn and the ``ollama`` package use: ``GET /``, ``GET /api/version``,
  ``GET /api/tags``, ``POST /api/show``, ``GET /api/ps``, ``POST /api/chat``,
  ``POST /api/generate``, ``POST /api/embed`` and the legacy ``POST /api/embeddings``, with the
  response shapes, status codes and error bodies of Ollama 0.12 (``{"error": "..."}``; NDJSON
  streams over chunked transfer, ending with ``done: true``);
* Ollama's OpenAI compatibility under ``/v1`` (chat completions, models, embeddings;
  :mod:`tests.fakes.ollama_openai`);
* replies: a queue of canned replies, a programmable responder, else a deterministic default
  (for a JSON-schema ``format``, a minimal instance of the schema);
* deterministic embeddings: a bag of per-word random vectors seeded by a hash, so equal texts get
  equal vectors and texts sharing words are similar, which keeps recall tests meaningful;
* a thread-safe record of every request (method, path, parsed JSON body), so tests can assert what
  was sent, e.g. that redacted text rather than personal data reached the model;
* faults: ``fail_next`` (an HTTP error), ``drop_next`` (connection closed without an answer),
  ``delay`` (to trigger client timeouts), ``stop`` (connection refused afterwards) and ``pace`` (a pause between
  streamed pieces, as a model generating; :attr:`FakeOllama.streams_cut` counts streams whose reader hung up
  before the end — what a real Ollama sees, and stops generating on, when a client presses Stop).

Usage::

    with running_fake_ollama(models=["llama3.2:latest"]) as fake:
        fake.queue_chat({"facts": []})
        client = OllamaClient(fake.url, timeout_s=2)
        ...
        assert fake.requests_to("/api/chat")[0].body["model"] == "llama3.2"

or the ``fake_ollama`` fixture (``fake_ollama_fixture`` at the end of this module).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import json
import logging
import re
import socket
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from engine.config import Settings

log = logging.getLogger(__name__)

Reply = str | Mapping[str, Any] | list[Any]
"""A model answer: a string is sent verbatim, anything else is serialised to JSON."""

Responder = Callable[[dict[str, Any]], Reply]
"""Called with the parsed request body of ``/api/chat`` or ``/api/generate``; returns the answer."""

Embedder = Callable[[str, str], Sequence[float]]
"""Called with ``(text, model)`` for each text sent to ``/api/embed``; returns its raw vector."""

DEFAULT_MODELS: tuple[str, ...] = ("llama3.2:latest", "nomic-embed-text:latest")
DEFAULT_VERSION = "0.12.0"
DEFAULT_EMBEDDING_DIM = 768

# Ollama answers in nanoseconds; fixed values keep responses deterministic.
_TIMINGS: dict[str, int] = {
    "total_duration": 412_000_000,
    "load_duration": 21_000_000,
    "prompt_eval_duration": 96_000_000,
    "eval_duration": 280_000_000,
}
_MODIFIED_AT = "2025-09-01T10:00:00.123456789+00:00"
_TOKEN = re.compile(r"\w+|[^\w\s]")
_WORD = re.compile(r"\w+")


# -- models -------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class FakeModel:
    """An installed model as ``/api/tags`` and ``/api/show`` describe it.

    Empty fields are filled in from the name (``nomic-embed-text`` is an embedding model of family
    ``nomic-bert``; ``llama3.2`` a 3.2B ``llama`` chat model), so a plain name is usually enough.
    """

    name: str
    family: str = ""
    parameter_size: str = ""
    quantization_level: str = ""
    capabilities: tuple[str, ...] = ()
    embedding_dim: int | None = None
    """Length of this model's vectors; ``None`` uses the server's ``embedding_dim``."""

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.name.encode()).hexdigest()

    @property
    def size(self) -> int:
        # Deterministic and plausible: a few hundred MB to a few GB.
        return 200_000_000 + int(self.digest[:8], 16) % 3_000_000_000

    def details(self) -> dict[str, Any]:
        return {
            "parent_model": "",
            "format": "gguf",
            "family": self.family,
            "families": [self.family],
            "parameter_size": self.parameter_size,
            "quantization_level": self.quantization_level,
        }


_KNOWN_FAMILIES: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    # base name → (family, parameter size, quantisation, capabilities), as a real install reports
    "llama3.2": ("llama", "3.2B", "Q4_K_M", ("completion", "tools")),
    "llama3.1": ("llama", "8.0B", "Q4_K_M", ("completion", "tools")),
    "qwen3": ("qwen3", "8.2B", "Q4_K_M", ("completion", "tools", "thinking")),
    "mistral": ("llama", "7.2B", "Q4_K_M", ("completion", "tools")),
    "gemma3": ("gemma3", "4.3B", "Q4_K_M", ("completion", "vision")),
    "nomic-embed-text": ("nomic-bert", "137M", "F16", ("embedding",)),
    "mxbai-embed-large": ("bert", "334M", "F16", ("embedding",)),
    "all-minilm": ("bert", "23M", "F16", ("embedding",)),
}


def canonical_name(name: str) -> str:
    """Ollama's short form of a model name: lower case, with a tag (``:latest`` by default)."""
    name = name.strip().lower()
    last = name.rsplit("/", 1)[-1]
    return name if ":" in last else f"{name}:latest"


def _complete(model: str | FakeModel) -> FakeModel:
    spec = model if isinstance(model, FakeModel) else FakeModel(name=model)
    name = canonical_name(spec.name)
    base = name.rsplit("/", 1)[-1].split(":", 1)[0]
    embedding = "embed" in base or "minilm" in base or base.startswith("bge")
    family, size, quant, caps = _KNOWN_FAMILIES.get(
        base,
        (
            "bert" if embedding else re.sub(r"[^a-z].*", "", base) or "llama",
            "335M" if embedding else "7.0B",
            "F16" if embedding else "Q4_K_M",
            ("embedding",) if embedding else ("completion",),
        ),
    )
    return FakeModel(
        name=name,
        family=spec.family or family,
        parameter_size=spec.parameter_size or size,
        quantization_level=spec.quantization_level or quant,
        capabilities=spec.capabilities or caps,
        embedding_dim=spec.embedding_dim,
    )


# -- recording ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as the fake received it."""

    method: str
    path: str
    body: Any
    """The parsed JSON body; ``None`` when there was no body or it was not JSON (see ``raw``)."""
    raw: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Request headers, names in lower case."""

    @property
    def model(self) -> str:
        """The ``model`` field of the body, or ``""``."""
        return str(self.body.get("model", "")) if isinstance(self.body, dict) else ""

    def texts(self) -> list[str]:
        """Every piece of text this request would show a model: messages, prompt, system, input."""
        body = self.body if isinstance(self.body, dict) else {}
        out: list[str] = []
        for message in body.get("messages") or []:
            if isinstance(message, dict) and isinstance(message.get("content"), str):
                out.append(message["content"])
        for key in ("system", "prompt", "suffix"):
            if isinstance(body.get(key), str):
                out.append(body[key])
        inputs = body.get("input")
        if isinstance(inputs, str):
            out.append(inputs)
        elif isinstance(inputs, list):
            out.extend(item for item in inputs if isinstance(item, str))
        return out


@dataclass(slots=True)
class _Fault:
    kind: str  # "error" or "drop"
    status: int
    message: str
    path: str | None
    remaining: int


class _HTTPError(Exception):
    """Raised inside a route to answer ``{"error": message}`` with ``status``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


# -- the server ---------------------------------------------------------------------------------
class FakeOllama:
    """A threaded HTTP server on 127.0.0.1 that speaks Ollama's API; a context manager.

    Args:
        models: installed models, as names (``"llama3.2:latest"``; a missing tag means ``latest``)
            or :class:`FakeModel` specs.
        version: what ``/api/version`` reports.
        embedding_dim: length of embedding vectors unless a model says otherwise.
    """

    def __init__(
        self,
        models: Iterable[str | FakeModel] = DEFAULT_MODELS,
        *,
        version: str = DEFAULT_VERSION,
        embedding_dim: int = DEFAULT_EMBEDDING_DIM,
    ) -> None:
        self.version = version
        self.embedding_dim = embedding_dim
        self._lock = threading.RLock()
        self._models: dict[str, FakeModel] = {}
        for model in [models] if isinstance(models, str | FakeModel) else models:
            self.add_model(model)
        self._requests: list[RecordedRequest] = []
        self._errors: list[BaseException] = []
        self._replies: deque[Reply] = deque()
        self._responder: Responder | None = None
        self._embedder: Embedder | None = None
        self._faults: list[_Fault] = []
        self._delay_s = 0.0
        self._delay_path: str | None = None
        self._pace_s = 0.0
        self._streams_cut = 0
        self._loaded: dict[str, datetime] = {}
        self._accepted = 0
        self._stopped = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._port = 0

    # -- lifecycle ------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``; unchanged after :meth:`stop` (which refuses connections)."""
        if not self._port:
            raise RuntimeError("FakeOllama has not been started")
        return f"http://127.0.0.1:{self._port}"

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self) -> FakeOllama:
        """Start serving; after a :meth:`stop` the server comes back on the same port."""
        with self._lock:
            if self._server is not None:
                return self
            self._stopped.clear()
            server = _Server(("127.0.0.1", self._port), _Handler)
            server.fake = self
            self._server = server
            self._port = server.server_address[1]
            self._thread = threading.Thread(
                target=server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=f"fake-ollama-{self._port}",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: open connections are cut and new ones are refused.  Idempotent."""
        with self._lock:
            server, thread = self._server, self._thread
            self._server = self._thread = None
        if server is None:
            return
        self._stopped.set()  # wakes handlers sleeping in a delay
        server.shutdown()
        server.cut_connections()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- installed models -----------------------------------------------------------------------
    @property
    def models(self) -> tuple[str, ...]:
        """Canonical names of the installed models."""
        with self._lock:
            return tuple(self._models)

    def add_model(self, model: str | FakeModel) -> None:
        """Install a model (as if pulled)."""
        spec = _complete(model)
        with self._lock:
            self._models[spec.name] = spec

    def remove_model(self, name: str) -> None:
        """Uninstall a model; unknown names are ignored."""
        with self._lock:
            self._models.pop(canonical_name(name), None)

    def model(self, name: str) -> FakeModel | None:
        """The installed model ``name`` refers to, or ``None``."""
        with self._lock:
            return self._models.get(canonical_name(name))

    # -- replies --------------------------------------------------------------------------------
    def on_chat(self, responder: Responder | None) -> None:
        """Answer ``/api/chat`` and ``/api/generate`` with ``responder(request_json)``.

        The responder runs on a server thread; if it raises, the request gets HTTP 500 with the
        exception text as the error (and the exception is kept in :attr:`errors`).  Queued replies
        (:meth:`queue_chat`) are used first.  ``None`` restores the default reply.
        """
        with self._lock:
            self._responder = responder

    def queue_chat(self, *replies: Reply) -> None:
        """Answer the next chat/generate requests with these replies, in order, one each."""
        with self._lock:
            self._replies.extend(replies)

    def on_embed(self, embedder: Embedder | None) -> None:
        """Compute ``/api/embed`` vectors with ``embedder(text, model)`` instead of built-in ones.

        The vectors are normalised as Ollama does; their length is whatever ``embedder`` returns,
        so a test can make a model change dimension.  ``None`` restores the built-in vectors.
        """
        with self._lock:
            self._embedder = embedder

    # -- faults ---------------------------------------------------------------------------------
    def fail_next(
        self,
        status: int = 500,
        message: str = "fake failure",
        *,
        path: str | None = None,
        times: int = 1,
    ) -> None:
        """Answer the next ``times`` requests (to ``path`` if given) with an error.

        The answer is HTTP ``status`` with the body ``{"error": message}``, as Ollama sends errors.
        """
        with self._lock:
            self._faults.append(_Fault("error", status, message, path, times))

    def drop_next(self, *, path: str | None = None, times: int = 1) -> None:
        """Hang up on the next ``times`` requests (to ``path`` if given) without answering."""
        with self._lock:
            self._faults.append(_Fault("drop", 0, "", path, times))

    def delay(self, seconds: float, *, path: str | None = None) -> None:
        """Wait ``seconds`` before answering every following request (to ``path`` if given).

        ``delay(0)`` ends it.  :meth:`stop` interrupts a waiting request (its connection is closed).
        """
        with self._lock:
            self._delay_s = max(0.0, seconds)
            self._delay_path = path

    def pace(self, seconds: float) -> None:
        """Pause ``seconds`` before each streamed piece of a reply (``pace(0)`` ends it); :meth:`stop` cuts it short."""
        with self._lock:
            self._pace_s = max(0.0, seconds)

    @property
    def streams_cut(self) -> int:
        """Streamed replies whose reader hung up before the last piece."""
        with self._lock:
            return self._streams_cut

    def reset(self) -> None:
        """Forget recorded requests and connections, queued replies, responders, faults, delays, pacing."""
        with self._lock:
            self._pace_s = 0.0
            self._streams_cut = 0
            self._requests.clear()
            self._accepted = 0
            self._errors.clear()
            self._replies.clear()
            self._responder = None
            self._embedder = None
            self._faults.clear()
            self._delay_s, self._delay_path = 0.0, None

    # -- what was sent --------------------------------------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    def requests_to(self, path: str, method: str | None = None) -> list[RecordedRequest]:
        """The recorded requests to ``path`` (and ``method`` if given)."""
        return [r for r in self.requests if r.path == path and (method is None or r.method == method)]

    def texts_sent(self) -> list[str]:
        """Every text shown to a model so far (chat messages, prompts, embedding inputs)."""
        return [text for request in self.requests for text in request.texts()]

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    @property
    def connections_accepted(self) -> int:
        """TCP connections accepted so far (keep-alive reuse shows as fewer than requests)."""
        with self._lock:
            return self._accepted

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions raised by responders or by the fake itself (a healthy test has none)."""
        with self._lock:
            return list(self._errors)

    # -- convenience ----------------------------------------------------------------------------
    def settings(self, changes: Mapping[str, Any] | None = None) -> Settings:
        """Default :class:`Settings` aimed at this server with short timeouts, plus ``changes``."""
        base: dict[str, Any] = {
            "llm.ollama_host": self.url,
            "llm.timeout_s": 5.0,
            "llm.connect_timeout_s": 0.5,
            "llm.query_timeout_s": 1.0,
        }
        return Settings().updated({**base, **(changes or {})})

    def embedding(self, text: str, model: str = DEFAULT_MODELS[1]) -> list[float]:
        """The unit vector ``/api/embed`` returns for ``text`` with ``model``."""
        spec = self.model(model)
        dim = (spec.embedding_dim if spec else None) or self.embedding_dim
        return fake_embedding(text, dim, canonical_name(model))

    # -- internals used by the handler ----------------------------------------------------------
    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _record_error(self, exc: BaseException) -> None:
        with self._lock:
            self._errors.append(exc)

    def _take_fault(self, path: str) -> _Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.path is None or fault.path == path:
                    fault.remaining -= 1
                    if fault.remaining <= 0:
                        self._faults.remove(fault)
                    return fault
        return None

    def _delay_for(self, path: str) -> float:
        with self._lock:
            if self._delay_path is None or self._delay_path == path:
                return self._delay_s
        return 0.0

    def _reply_for(self, request: dict[str, Any]) -> str:
        with self._lock:
            queued = self._replies.popleft() if self._replies else None
            responder = self._responder
        if queued is not None:
            value: Reply = queued
        elif responder is not None:
            try:
                value = responder(request)
            except Exception as exc:
                self._record_error(exc)
                raise _HTTPError(500, f"responder failed: {exc}") from exc
        else:
            value = default_reply(request)
        if isinstance(value, str):
            return value
        return json.dumps(value if isinstance(value, list) else dict(value))

    def _require_model(self, body: dict[str, Any], capability: str | None, verb: str) -> FakeModel:
        name = body.get("model")
        if not isinstance(name, str) or not name.strip():
            raise _HTTPError(400, "model is required")
        spec = self.model(name)
        if spec is None:
            raise _HTTPError(404, f'model "{name}" not found, try pulling it first')
        if capability is not None and capability not in spec.capabilities:
            raise _HTTPError(400, f'"{name}" does not support {verb}')
        if body.get("think") and "thinking" not in spec.capabilities:
            raise _HTTPError(400, f'"{name}" does not support thinking')
        with self._lock:
            self._loaded[spec.name] = datetime.now(UTC)
        return spec

    def _loaded_models(self) -> list[tuple[FakeModel, datetime]]:
        with self._lock:
            return [(self._models[n], t) for n, t in self._loaded.items() if n in self._models]


class _Server(http.server.ThreadingHTTPServer):
    """Tracks open connections so :meth:`FakeOllama.stop` can cut keep-alive connections too.

    Without that, a client's pooled connection would keep reaching a handler thread after the
    listening socket is closed, and "server stopped" would not look like connection refused.
    """

    daemon_threads = True
    fake: FakeOllama

    def __init__(self, address: tuple[str, int], handler: type[_Handler]) -> None:
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        with self.fake._lock:
            self.fake._accepted += 1
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def cut_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hung up (timeout, stop()) is expected; anything else is a bug in the fake.
        exc = sys.exc_info()[1]
        if exc is not None and not isinstance(exc, OSError):
            self.fake._record_error(exc)


_ROUTES: dict[str, set[str]] = {
    "/": {"GET", "HEAD"},
    "/api/version": {"GET", "HEAD"},
    "/api/tags": {"GET", "HEAD"},
    "/api/ps": {"GET"},
    "/api/show": {"POST"},
    "/api/chat": {"POST"},
    "/api/generate": {"POST"},
    "/api/embed": {"POST"},
    "/api/embeddings": {"POST"},
}


class _Handler(http.server.BaseHTTPRequestHandler):
    """One connection; HTTP/1.1 with keep-alive like Ollama's Go server."""

    protocol_version = "HTTP/1.1"
    server: _Server
    server_version = "FakeOllama"

    def log_message(self, format: str, *args: Any) -> None:
        # The stdlib writes every request to stderr; keep it in the debug log instead.
        log.debug("fake ollama: %s", format % args)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_HEAD(self) -> None:
        self._serve("HEAD")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def do_PUT(self) -> None:
        self._serve("PUT")

    # -- plumbing -------------------------------------------------------------------------------
    def _serve(self, method: str) -> None:
        fake = self.server.fake
        path = self.path.split("?", 1)[0]
        raw = self._read_body()
        body: Any = None
        parse_error = ""
        if raw.strip():
            try:
                body = json.loads(raw)
            except (ValueError, UnicodeDecodeError) as exc:
                parse_error = _go_json_error(raw, exc)
        headers = {name.lower(): value for name, value in self.headers.items()}
        fake._record(RecordedRequest(method, path, body, raw, headers))

        delay = fake._delay_for(path)
        if delay > 0 and fake._stopped.wait(delay):
            self.close_connection = True  # stopped while waiting: hang up like a dying server
            return
        fault = fake._take_fault(path)
        if fault is not None and fault.kind == "drop":
            self.close_connection = True
            return
        try:
            if fault is not None:
                raise _HTTPError(fault.status, fault.message)
            self._route(method, path, body, raw, parse_error)
        except _HTTPError as exc:
            self._send_json(exc.status, {"error": exc.message}, head=method == "HEAD")
        except OSError:
            self.close_connection = True  # the client went away mid-answer
        except Exception as exc:
            fake._record_error(exc)
            log.exception("fake ollama failed on %s %s", method, path)
            with contextlib.suppress(OSError):
                self._send_json(500, {"error": f"fake server error: {exc}"})

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            return self.rfile.read(length)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return b""

    def _route(self, method: str, path: str, body: Any, raw: bytes, parse_error: str) -> None:
        if path.startswith("/v1/"):  # Ollama's OpenAI compatibility
            from tests.fakes import ollama_openai

            ollama_openai.serve(self, method, path, body)
            return
        allowed = _ROUTES.get(path)
        if allowed is None:
            self._send_text(404, "404 page not found")
            return
        if method not in allowed:
            self._send_text(405, "405 method not allowed")
            return
        head = method == "HEAD"
        fake = self.server.fake
        if path == "/":
            self._send_text(200, "Ollama is running", head=head)
            return
        if path == "/api/version":
            self._send_json(200, {"version": fake.version}, head=head)
            return
        if path == "/api/tags":
            self._send_json(200, {"models": _tags(fake)}, head=head)
            return
        if path == "/api/ps":
            self._send_json(200, {"models": _ps(fake)})
            return
        # Every remaining route is a POST with a JSON object body, checked like the Go server does.
        if parse_error:
            raise _HTTPError(400, parse_error)
        if not raw.strip():
            raise _HTTPError(400, "missing request body")
        if not isinstance(body, dict):
            kind = "array" if isinstance(body, list) else type(body).__name__
            raise _HTTPError(400, f"json: cannot unmarshal {kind} into Go value of type api.Request")
        if path == "/api/show":
            self._send_json(200, _show(fake, body))
        elif path == "/api/embed":
            self._send_json(200, _embed(fake, body))
        elif path == "/api/embeddings":
            self._send_json(200, _embeddings(fake, body))
        elif path == "/api/chat":
            self._generate(body, chat=True)
        else:
            self._generate(body, chat=False)

    def _generate(self, body: dict[str, Any], *, chat: bool) -> None:
        fake = self.server.fake
        name = str(body.get("model", ""))
        fake._require_model(body, "completion", "chat" if chat else "generate")
        stream = body.get("stream") is not False  # Ollama streams unless told not to
        if chat:
            messages = body.get("messages") or []
            if not isinstance(messages, list):
                raise _HTTPError(400, "json: cannot unmarshal into Go struct field messages")
            if not messages:  # an empty chat only loads the model
                self._send_json(200, _final(name, chat, "", done_reason="load", timings=False))
                return
        elif not body.get("prompt"):
            self._send_json(200, _final(name, chat, "", done_reason="load", timings=False))
            return
        content = fake._reply_for(body)
        prompt_tokens = sum(len(_TOKEN.findall(t)) for t in RecordedRequest("", "", body).texts())
        # Each streamed piece stands for one generated token.
        pieces = re.findall(r"\S+\s*|\s+", content)
        if not stream:
            self._send_json(200, _final(name, chat, content, prompt_tokens, len(pieces)))
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for piece in pieces:
                with fake._lock:
                    pause = fake._pace_s
                if pause and fake._stopped.wait(pause):
                    return  # stopped mid-reply: the connection is being cut
                self._write_chunk(_chunk(name, chat, piece))
            self._write_chunk(_final(name, chat, "", prompt_tokens, len(pieces)))
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            with fake._lock:
                fake._streams_cut += 1
            self.close_connection = True

    def _write_chunk(self, payload: Mapping[str, Any]) -> None:
        line = json.dumps(payload, separators=(",", ":")).encode() + b"\n"
        self.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
        self.wfile.flush()

    def _send_json(self, status: int, payload: Any, *, head: bool = False) -> None:
        data = json.dumps(payload, separators=(",", ":")).encode()
        self._send(status, "application/json; charset=utf-8", data, head=head)

    def _send_text(self, status: int, text: str, *, head: bool = False) -> None:
        self._send(status, "text/plain; charset=utf-8", text.encode(), head=head)

    def _send(self, status: int, content_type: str, data: bytes, *, head: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if not head:
            self.wfile.write(data)
        self.wfile.flush()


# -- response bodies ----------------------------------------------------------------------------
def _now() -> str:
    # Go's RFC 3339 with nanoseconds; Python has microseconds, padded the same way.
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f000Z")


def _tags(fake: FakeOllama) -> list[dict[str, Any]]:
    with fake._lock:
        specs = list(fake._models.values())
    return [
        {
            "name": spec.name,
            "model": spec.name,
            "modified_at": _MODIFIED_AT,
            "size": spec.size,
            "digest": spec.digest,
            "details": spec.details(),
        }
        for spec in specs
    ]


def _ps(fake: FakeOllama) -> list[dict[str, Any]]:
    return [
        {
            "name": spec.name,
            "model": spec.name,
            "size": spec.size,
            "digest": spec.digest,
            "details": spec.details(),
            "expires_at": (used + timedelta(minutes=5)).isoformat(),
            "size_vram": 0,
            "context_length": 4096,
        }
        for spec, used in fake._loaded_models()
    ]


def _show(fake: FakeOllama, body: dict[str, Any]) -> dict[str, Any]:
    name = body.get("model") or body.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _HTTPError(400, "model is required")
    spec = fake.model(name)
    if spec is None:
        raise _HTTPError(404, f"model '{name}' not found")
    info: dict[str, Any] = {
        "general.architecture": spec.family,
        "general.parameter_count": _parameter_count(spec.parameter_size),
        f"{spec.family}.context_length": 2048 if "embedding" in spec.capabilities else 131072,
    }
    if "embedding" in spec.capabilities:
        info[f"{spec.family}.embedding_length"] = spec.embedding_dim or fake.embedding_dim
    return {
        "license": "",
        "modelfile": f'# Modelfile generated by "ollama show"\nFROM {spec.name}\n',
        "parameters": "" if "embedding" in spec.capabilities else f'{"stop":<30} "<|eot_id|>"',
        "template": "{{ .Prompt }}",
        "details": spec.details(),
        "model_info": info,
        "capabilities": list(spec.capabilities),
        "modified_at": _MODIFIED_AT,
    }


def _parameter_count(size: str) -> int:
    match = re.fullmatch(r"([\d.]+)([KMB])", size)
    if not match:
        return 0
    return int(float(match[1]) * {"K": 1e3, "M": 1e6, "B": 1e9}[match[2]])


def _embed(fake: FakeOllama, body: dict[str, Any]) -> dict[str, Any]:
    # Real Ollama validates the input before the model, and lets any installed model embed.
    raw_input = body.get("input")
    if isinstance(raw_input, str):
        texts = [raw_input] if raw_input else []
    elif isinstance(raw_input, list):
        if not all(isinstance(item, str) for item in raw_input):
            raise _HTTPError(400, "invalid input type")
        texts = list(raw_input)
    elif raw_input is None:
        texts = []
    else:
        raise _HTTPError(400, "invalid input type")
    name = str(body.get("model", ""))
    spec = fake._require_model(body, None, "embedding")
    if not texts:
        return {"model": name, "embeddings": []}
    dim = spec.embedding_dim or fake.embedding_dim
    with fake._lock:
        embedder = fake._embedder
    if embedder is None:
        vectors = [fake_embedding(text, dim, spec.name) for text in texts]
    else:
        vectors = [_unit(np.asarray(embedder(text, spec.name), dtype=float)) for text in texts]
    wanted = body.get("dimensions")
    if isinstance(wanted, int) and wanted > 0:
        # Like Ollama: truncate to the requested length and normalise again.
        vectors = [_unit(np.asarray(v[:wanted])) if wanted < len(v) else v for v in vectors]
    return {
        "model": name,
        "embeddings": vectors,
        "total_duration": _TIMINGS["total_duration"],
        "load_duration": _TIMINGS["load_duration"],
        "prompt_eval_count": sum(len(_TOKEN.findall(t)) for t in texts),
    }


def _embeddings(fake: FakeOllama, body: dict[str, Any]) -> dict[str, Any]:
    spec = fake._require_model(body, None, "embedding")
    prompt = body.get("prompt")
    if not isinstance(prompt, str) or not prompt:
        return {"embedding": []}  # an empty request only loads the model
    # The legacy endpoint returns the model's raw vector; only /api/embed normalises.
    vector = fake_embedding(prompt, spec.embedding_dim or fake.embedding_dim, spec.name)
    return {"embedding": [x * 17.0 for x in vector]}


def _chunk(model: str, chat: bool, piece: str) -> dict[str, Any]:
    out: dict[str, Any] = {"model": model, "created_at": _now()}
    if chat:
        out["message"] = {"role": "assistant", "content": piece}
    else:
        out["response"] = piece
    out["done"] = False
    return out


def _final(
    model: str,
    chat: bool,
    content: str,
    prompt_tokens: int = 0,
    eval_tokens: int = 0,
    *,
    done_reason: str = "stop",
    timings: bool = True,
) -> dict[str, Any]:
    out = _chunk(model, chat, content)
    out["done"] = True
    out["done_reason"] = done_reason
    if timings:
        out.update(
            total_duration=_TIMINGS["total_duration"],
            load_duration=_TIMINGS["load_duration"],
            prompt_eval_count=prompt_tokens,
            prompt_eval_duration=_TIMINGS["prompt_eval_duration"],
            eval_count=eval_tokens,
            eval_duration=_TIMINGS["eval_duration"],
        )
        if not chat:
            out["context"] = list(range(1, prompt_tokens + eval_tokens + 1))[:64]
    return out


def _go_json_error(raw: bytes, exc: Exception) -> str:
    # The wording of Go's encoding/json, which Ollama passes through.
    if isinstance(exc, json.JSONDecodeError) and exc.pos < len(exc.doc):
        return f"invalid character {exc.doc[exc.pos]!r} looking for beginning of value"
    if isinstance(exc, json.JSONDecodeError):
        return "unexpected EOF"
    return f"invalid request body ({len(raw)} bytes)"


# -- replies and vectors ------------------------------------------------------------------------
def default_reply(request: Mapping[str, Any]) -> Reply:
    """The answer when nothing was queued or programmed.

    With a JSON-schema ``format``: a minimal instance of the schema; with ``format: "json"``:
    ``{}``; otherwise a sentence echoing the last user message.
    """
    fmt = request.get("format")
    if isinstance(fmt, Mapping):
        return json.dumps(example_for_schema(fmt))
    if fmt == "json":
        return "{}"
    last = ""
    for message in request.get("messages") or []:
        if isinstance(message, Mapping) and message.get("role") == "user":
            last = str(message.get("content") or "")
    if not request.get("messages"):
        last = str(request.get("prompt") or "")
    return f"You said: {last}"


def example_for_schema(schema: Mapping[str, Any], root: Mapping[str, Any] | None = None) -> Any:
    """A small deterministic value valid against ``schema`` (the JSON-Schema subset Ollama uses)."""
    root = schema if root is None else root
    if "$ref" in schema:
        ref = str(schema["$ref"])
        target: Any = root
        for part in ref.removeprefix("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, Mapping) else {}
        return example_for_schema(target, root)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        options = schema.get(key)
        if isinstance(options, Sequence) and options:
            return example_for_schema(options[0], root)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    if kind == "object":
        props = schema.get("properties") or {}
        return {name: example_for_schema(sub, root) for name, sub in props.items()}
    if kind == "array":
        items = schema.get("items") or {}
        return [example_for_schema(items, root) for _ in range(int(schema.get("minItems", 0)))]
    if kind == "string":
        return "x" * int(schema.get("minLength", 0))
    if kind == "integer":
        return int(schema.get("minimum", 0))
    if kind == "number":
        return float(schema.get("minimum", 0))
    if kind == "boolean":
        return False
    return None


@functools.lru_cache(maxsize=8192)
def _seeded(key: str, dim: int) -> np.ndarray[Any, np.dtype[np.float64]]:
    seed = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")
    vector = np.random.default_rng(seed).standard_normal(dim)
    vector.setflags(write=False)  # cached: shared between calls
    return vector


def _unit(vector: np.ndarray[Any, Any]) -> list[float]:
    norm = float(np.linalg.norm(vector))
    return [float(x) for x in (vector / norm if norm else vector)]


def fake_embedding(text: str, dim: int = DEFAULT_EMBEDDING_DIM, model: str = "") -> list[float]:
    """A deterministic unit vector for ``text``: per-word random vectors plus a whole-text part.

    Equal texts give equal vectors, texts sharing words are similar, and the model name is part of
    the seed (different models, different spaces).
    """
    total = np.zeros(dim)
    for word in _WORD.findall(text.lower()):
        total += _seeded(f"{model}\x00w\x00{word}", dim)
    total += 0.5 * _seeded(f"{model}\x00t\x00{text}", dim)
    return _unit(total)


# -- entry points -------------------------------------------------------------------------------
@contextlib.contextmanager
def running_fake_ollama(**kwargs: Any) -> Iterator[FakeOllama]:
    """Run a :class:`FakeOllama` (``kwargs`` go to its constructor) for the ``with`` block."""
    fake = FakeOllama(**kwargs)
    with fake:
        yield fake


# Registered under the name tests use (``fake_ollama``); the function has another name so that
# importing it into a conftest does not clash with test parameters named ``fake_ollama``.
@pytest.fixture(name="fake_ollama")
def fake_ollama_fixture() -> Iterator[FakeOllama]:
    """A running fake Ollama with ``llama3.2:latest`` and ``nomic-embed-text:latest`` installed."""
    with running_fake_ollama() as fake:
        yield fake
