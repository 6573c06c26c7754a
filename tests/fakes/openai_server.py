"""A fake OpenAI-compatible model server for tests: the OpenAI API on loopback, as local servers speak it.

LM Studio, llama.cpp's server, vLLM, LocalAI and Jan cannot run where the tests run (a real one runs in the opt-in
``make test-llm``), so the engine's client — the official ``openai`` package — is exercised against this server over
real HTTP.  It owns:

* the routes: ``GET /v1/models``, ``POST /v1/chat/completions`` (``stream`` as server-sent events ending with
  ``data: [DONE]``, or one JSON object) and ``POST /v1/embeddings`` (``encoding_format`` ``float`` or ``base64``),
  with OpenAI's response shapes and its error body ``{"error": {"message", "type", "param", "code"}}``;
* structured output: ``response_format`` ``json_schema`` (``{"json_schema": {"schema": …}}``) or ``json_object``
  (with or without a ``schema``, as llama-cpp-python takes it); ``schema_styles`` says which this server accepts —
  a refused style answers 400 the way a server that does not know it does;
* replies: a queue of canned replies, a programmable responder, else a minimal instance of the requested schema;
* an API key, when given, that every request must carry (``Authorization: Bearer …``; else 401);
* faults: ``fail_next`` (an HTTP error with OpenAI's error body), ``stop`` (connection refused afterwards), and a
  thread-safe record of every request.

Usage::

    with running_fake_openai(models=["qwen2.5-7b-instruct"]) as fake:
        fake.queue_chat({"facts": []})
        client = OpenAICompatClient(fake.url)
        ...
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import struct
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import pytest

from tests.fakes.ollama import (
    RecordedRequest,
    Reply,
    Responder,
    _Fault,
    _Handler,
    _HTTPError,
    _Server,
    example_for_schema,
    fake_embedding,
)

log = logging.getLogger(__name__)

DEFAULT_MODELS: tuple[str, ...] = ("qwen2.5-7b-instruct", "text-embedding-nomic-embed-text-v1.5")
DEFAULT_EMBEDDING_DIM = 768
SCHEMA_STYLES: tuple[str, ...] = ("json_schema", "json_object")
_CREATED = 1_735_689_600  # fixed: responses stay deterministic


class FakeOpenAI:
    """A threaded HTTP server on 127.0.0.1 speaking the OpenAI API at ``/v1``; a context manager.

    Args:
        models: the models ``/v1/models`` lists and the others accept.
        api_key: when set, the key every request must send.
        schema_styles: the ``response_format`` types accepted (others answer 400).
        embedding_dim: the length of embedding vectors.
        refusal_status: the status of a refused ``response_format`` (llama-cpp-python answers its validation
            error with 500).
        token_embeddings: answer ``/v1/embeddings`` with one vector per word, as llama.cpp's server does for a
            model without pooling.
    """

    def __init__(
        self,
        models: Iterable[str] = DEFAULT_MODELS,
        *,
        api_key: str = "",
        schema_styles: Iterable[str] = SCHEMA_STYLES,
        embedding_dim: int = DEFAULT_EMBEDDING_DIM,
        refusal_status: int = 400,
        token_embeddings: bool = False,
    ) -> None:
        self.models = list(models)
        self.api_key = api_key
        self.schema_styles = tuple(schema_styles)
        self.embedding_dim = embedding_dim
        self.refusal_status = refusal_status
        self.token_embeddings = token_embeddings
        self._lock = threading.RLock()
        self._requests: list[RecordedRequest] = []
        self._errors: list[BaseException] = []
        self._replies: deque[Reply] = deque()
        self._responder: Responder | None = None
        self._faults: list[_Fault] = []
        self._accepted = 0
        self._stopped = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._port = 0

    # -- lifecycle ------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>/v1``, what a client takes as its base URL."""
        if not self._port:
            raise RuntimeError("FakeOpenAI has not been started")
        return f"http://127.0.0.1:{self._port}/v1"

    def start(self) -> FakeOpenAI:
        """Start serving; after a :meth:`stop` the server comes back on the same port."""
        with self._lock:
            if self._server is not None:
                return self
            self._stopped.clear()
            server = _Server(("127.0.0.1", self._port), _OpenAIHandler)
            server.fake = self  # type: ignore[assignment]  # the server only uses the lock, counters and errors
            self._server = server
            self._port = server.server_address[1]
            self._thread = threading.Thread(
                target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai", daemon=True
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
        self._stopped.set()
        server.shutdown()
        server.cut_connections()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- programming ----------------------------------------------------------------------------
    def on_chat(self, responder: Responder | None) -> None:
        """Answer chat requests with ``responder(body)`` (after the queue is empty)."""
        with self._lock:
            self._responder = responder

    def queue_chat(self, *replies: Reply) -> None:
        """Answer the next chat requests with these, in order."""
        with self._lock:
            self._replies.extend(replies)

    def fail_next(self, status: int, message: str, *, path: str | None = None, times: int = 1) -> None:
        """Answer the next ``times`` requests (to ``path``, or any) with ``status`` and OpenAI's error body."""
        with self._lock:
            self._faults.append(_Fault("error", status, message, path, times))

    # -- inspection -----------------------------------------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def requests_to(self, path: str) -> list[RecordedRequest]:
        """The requests to ``path`` (e.g. ``/v1/chat/completions``)."""
        return [r for r in self.requests if r.path == path]

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions inside the fake itself (a test should see none)."""
        with self._lock:
            return list(self._errors)

    def embedding(self, text: str, model: str = DEFAULT_MODELS[1]) -> list[float]:
        """The vector this server gives ``text``."""
        return fake_embedding(text, self.embedding_dim, model)

    # -- used by the handler ----------------------------------------------------------------------
    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _record_error(self, exc: BaseException) -> None:
        with self._lock:
            self._errors.append(exc)

    def _take_fault(self, path: str) -> _Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.path in (None, path) and fault.remaining > 0:
                    fault.remaining -= 1
                    if fault.remaining == 0:
                        self._faults.remove(fault)
                    return fault
        return None

    def _reply_for(self, body: dict[str, Any], schema: Mapping[str, Any] | None) -> str:
        with self._lock:
            if self._replies:
                reply = self._replies.popleft()
            elif self._responder is not None:
                reply = self._responder(body)
            elif schema is not None:
                reply = example_for_schema(schema)
            else:
                last = [m.get("content") for m in body.get("messages") or [] if isinstance(m, dict)]
                reply = f"You said: {last[-1] if last else ''}"
        return reply if isinstance(reply, str) else json.dumps(reply)


def _error(status: int, message: str, *, kind: str = "invalid_request_error", code: str | None = None) -> _HTTPError:
    """An :class:`_HTTPError` whose ``message`` is OpenAI's whole error object (the handler sends it as is)."""
    payload = {"message": message, "type": kind, "param": None, "code": code}
    return _HTTPError(status, json.dumps(payload))


class _OpenAIHandler(_Handler):
    """One connection; HTTP/1.1 with keep-alive; errors as OpenAI's ``{"error": {...}}``."""

    server_version = "FakeOpenAI"

    def _serve(self, method: str) -> None:
        fake: FakeOpenAI = self.server.fake  # type: ignore[assignment]
        path = self.path.split("?", 1)[0]
        raw = self._read_body()
        body: Any = None
        if raw.strip():
            with contextlib.suppress(ValueError, UnicodeDecodeError):
                body = json.loads(raw)
        headers = {name.lower(): value for name, value in self.headers.items()}
        fake._record(RecordedRequest(method, path, body, raw, headers))
        try:
            if fake.api_key and headers.get("authorization") != f"Bearer {fake.api_key}":
                raise _error(401, "Incorrect API key provided.", code="invalid_api_key")
            fault = fake._take_fault(path)
            if fault is not None:
                raise _error(fault.status, fault.message, kind="server_error" if fault.status >= 500 else "error")
            self._route_openai(fake, method, path, body, raw)
        except _HTTPError as exc:
            self._send_json(exc.status, {"error": json.loads(exc.message)})
        except OSError:
            self.close_connection = True
        except Exception as exc:
            fake._record_error(exc)
            log.exception("fake openai failed on %s %s", method, path)
            with contextlib.suppress(OSError):
                self._send_json(500, {"error": {"message": f"fake server error: {exc}", "type": "server_error"}})

    def _route_openai(self, fake: FakeOpenAI, method: str, path: str, body: Any, raw: bytes) -> None:
        routes = {"/v1/models": "GET", "/v1/chat/completions": "POST", "/v1/embeddings": "POST"}
        if path not in routes:
            raise _error(404, f"Unexpected endpoint or method. ({method} {path})")
        if method != routes[path]:
            raise _error(405, f"Method {method} not allowed for {path}")
        if path == "/v1/models":
            data = [
                {"id": m, "object": "model", "created": _CREATED, "owned_by": "organization_owner"} for m in fake.models
            ]
            self._send_json(200, {"object": "list", "data": data})
            return
        if not isinstance(body, dict):
            raise _error(400, "We could not parse the JSON body of your request.")
        model = str(body.get("model", ""))
        if model not in fake.models:
            raise _error(404, f"The model `{model}` does not exist.", code="model_not_found")
        if path == "/v1/embeddings":
            self._send_json(200, _embeddings(fake, model, body))
        else:
            self._chat(fake, model, body)

    def _chat(self, fake: FakeOpenAI, model: str, body: dict[str, Any]) -> None:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise _error(400, "'messages' must be a non-empty array.")
        schema = _schema_of(fake, body.get("response_format"))
        content = fake._reply_for(body, schema)
        ident = f"chatcmpl-{len(fake.requests)}"
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            pieces = [content[i : i + 8] for i in range(0, len(content), 8)] or [""]
            for index, piece in enumerate(pieces):
                delta = {"role": "assistant", "content": piece} if index == 0 else {"content": piece}
                self._event(_chunk(ident, model, delta, None))
            self._event(_chunk(ident, model, {}, "stop"))
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            return
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in messages if isinstance(m, dict))
        answer = {
            "id": ident,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": len(content.split()),
                "total_tokens": prompt_tokens + len(content.split()),
            },
        }
        self._send_json(200, answer)

    def _event(self, payload: Mapping[str, Any]) -> None:
        self.wfile.write(b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n")
        self.wfile.flush()


def _schema_of(fake: FakeOpenAI, response_format: Any) -> Mapping[str, Any] | None:
    """The JSON schema asked for, refusing a ``response_format`` type this server does not take."""
    if response_format is None:
        return None
    if not isinstance(response_format, dict):
        raise _error(400, "'response_format' must be an object.")
    kind = response_format.get("type")
    if kind == "text":
        return None
    if kind not in fake.schema_styles:
        expected = " or ".join(repr(k) for k in ("text", *fake.schema_styles))
        status = fake.refusal_status
        raise _error(status, f"1 validation error: ('body', 'response_format', 'type'): Input should be {expected}")
    if kind == "json_schema":
        spec = response_format.get("json_schema")
        if not isinstance(spec, dict) or not isinstance(spec.get("schema"), dict):
            raise _error(400, "'response_format.json_schema.schema' must be an object.")
        return dict(spec["schema"])
    schema = response_format.get("schema")
    return dict(schema) if isinstance(schema, dict) else {"type": "object"}


def _chunk(ident: str, model: str, delta: Mapping[str, Any], finish: str | None) -> dict[str, Any]:
    return {
        "id": ident,
        "object": "chat.completion.chunk",
        "created": _CREATED,
        "model": model,
        "choices": [{"index": 0, "delta": dict(delta), "logprobs": None, "finish_reason": finish}],
    }


def _embeddings(fake: FakeOpenAI, model: str, body: dict[str, Any]) -> dict[str, Any]:
    raw_input = body.get("input")
    if isinstance(raw_input, str):
        texts = [raw_input]
    elif isinstance(raw_input, list) and raw_input and all(isinstance(t, str) for t in raw_input):
        texts = list(raw_input)
    else:
        raise _error(400, "'input' must be a string or a non-empty array of strings.")
    encoding = body.get("encoding_format", "float")
    data = []
    for index, text in enumerate(texts):
        vector = fake.embedding(text, model)
        value: Any = vector
        if fake.token_embeddings:
            value = [fake.embedding(word, model) for word in text.split()] or [vector]
        elif encoding == "base64":
            value = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
        data.append({"object": "embedding", "index": index, "embedding": value})
    tokens = sum(len(t.split()) for t in texts)
    return {"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


# -- entry points -------------------------------------------------------------------------------
@contextlib.contextmanager
def running_fake_openai(**kwargs: Any) -> Iterator[FakeOpenAI]:
    """Run a :class:`FakeOpenAI` (``kwargs`` go to its constructor) for the ``with`` block."""
    with FakeOpenAI(**kwargs) as fake:
        yield fake


@pytest.fixture(name="fake_openai")
def fake_openai_fixture() -> Iterator[FakeOpenAI]:
    """A running fake OpenAI-compatible server with a chat and an embedding model."""
    with running_fake_openai() as fake:
        yield fake
