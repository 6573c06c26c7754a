"""OpenAI-compatible local model servers as a provider (DESIGN §7): LM Studio, llama.cpp's server, vLLM, LocalAI, Jan.

They all speak the same three routes — ``GET /v1/models``, ``POST /v1/chat/completions`` and ``POST /v1/embeddings``
— and differ in how they take structured output: most follow OpenAI's ``response_format: {"type": "json_schema"}``,
some (llama-cpp-python, LocalAI) want ``{"type": "json_object", "schema": …}``.  :class:`OpenAICompatClient` asks
the standard way first and, when the server refuses that request shape (HTTP 400/422), asks the other way and
remembers what worked for the rest of the run.

Every failure — refused connection, timeout, an HTTP error, an answer that is not JSON — becomes
:class:`ModelUnavailable` (not JSON: :class:`ModelAnswerUnusable`), so callers degrade exactly as they do for Ollama.
The official ``openai`` package is the client; it never retries on its own (``max_retries=0``): the jobs' back-off
decides when a model is asked again.  It is imported only when such a server is configured: it takes seconds to
import, which every start would pay otherwise.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engine.errors import ModelAnswerUnusable, ModelUnavailable

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__name__)

#: Sent when no key is configured: local servers ignore it, and the ``openai`` package refuses to start without one.
#: (The user's ``OPENAI_API_KEY`` is deliberately never read: it must not be sent to whatever server is configured.)
NO_KEY = "no-key"

_FENCE = ("```json", "```JSON", "```")

#: An answer is cut off after this many tokens: Cairn's answers are short JSON, and a small model that loops inside
#: a JSON grammar would otherwise write until its context is full (the cut answer is not JSON: the rule path is used).
MAX_ANSWER_TOKENS = 1024


@dataclass(frozen=True, slots=True)
class OpenAIStatus:
    """What a probe of ``GET /v1/models`` found."""

    base_url: str
    reachable: bool
    models: tuple[str, ...] = ()
    error: str | None = None

    def has_model(self, name: str) -> bool:
        """Whether the server lists ``name`` (servers that list nothing are taken at their word when asked)."""
        return not self.models or name in self.models


@dataclass(slots=True)
class _Mode:
    """How this server takes structured output, learned on first use."""

    schema_style: str = "json_schema"  # or "json_object": llama-cpp-python, LocalAI
    lock: threading.Lock = field(default_factory=threading.Lock)


class OpenAICompatClient:
    """One OpenAI-compatible server (``base_url`` ends in ``/v1``), through the official ``openai`` package."""

    def __init__(
        self, base_url: str, *, api_key: str = "", timeout_s: float = 60.0, connect_timeout_s: float = 2.0
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._timeout_s = timeout_s
        self._connect_timeout_s = connect_timeout_s
        import openai

        self._client = openai.OpenAI(
            base_url=self.base_url,
            api_key=api_key or NO_KEY,
            max_retries=0,
            timeout=openai.Timeout(timeout_s, connect=connect_timeout_s),
        )
        self._mode = _Mode()

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()

    def _timed(self, timeout_s: float | None) -> openai.OpenAI:
        import openai

        if timeout_s is None:
            return self._client
        return self._client.with_options(timeout=openai.Timeout(timeout_s, connect=self._connect_timeout_s))

    def probe(self) -> OpenAIStatus:
        """List the server's models (``GET /v1/models``); never raises."""
        try:
            page = self._timed(min(self._timeout_s, 10.0)).models.list()
            models = tuple(sorted(str(m.id) for m in page.data))
        except Exception as exc:
            return OpenAIStatus(self.base_url, False, error=unavailable(self.base_url, "", exc).message)
        return OpenAIStatus(self.base_url, True, models)

    def chat_json(
        self, model: str, system: str, user: str, schema: Mapping[str, Any], *, timeout_s: float | None = None
    ) -> Any:
        """The model's answer to ``user`` as parsed JSON, asked for in the shape of ``schema``.

        Raises:
            ModelUnavailable: the server could not be reached, refused, or failed.
            ModelAnswerUnusable: it answered with text that is not JSON.
        """
        import openai

        messages: list[Any] = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        client = self._timed(timeout_s)
        style = self._mode.schema_style
        try:
            response = self._create(client, model, messages, schema, style)
        except openai.APIStatusError as exc:
            if not _refused_format(exc):
                raise unavailable(self.base_url, model, exc) from exc
            other = "json_object" if style == "json_schema" else "json_schema"
            try:
                response = self._create(client, model, messages, schema, other)
            except Exception as again:
                raise unavailable(self.base_url, model, exc) from again
            with self._mode.lock:
                self._mode.schema_style = other
            log.info("%s takes structured output as %s", self.base_url, other)
        except Exception as exc:
            raise unavailable(self.base_url, model, exc) from exc
        content = response.choices[0].message.content if response.choices else None
        return parse_json_answer(content or "", f"{model} at {self.base_url}")

    @staticmethod
    def _create(client: openai.OpenAI, model: str, messages: list[Any], schema: Mapping[str, Any], style: str) -> Any:
        if style == "json_schema":
            response_format: Any = {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": dict(schema), "strict": False},
            }
        else:
            response_format = {"type": "json_object", "schema": dict(schema)}
        return client.chat.completions.create(
            model=model,
            messages=messages,
            temperature=0,
            max_tokens=MAX_ANSWER_TOKENS,
            response_format=response_format,
            stream=False,
        )

    def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order (``POST /v1/embeddings``, floats).

        Raises:
            ModelUnavailable: as :meth:`chat_json`, or a different number of vectors than texts came back.
        """
        try:
            response = self._client.embeddings.create(model=model, input=list(texts), encoding_format="float")
        except Exception as exc:
            raise unavailable(self.base_url, model, exc) from exc
        rows = sorted(response.data, key=lambda item: item.index)
        if len(rows) != len(texts):
            raise ModelUnavailable(
                f"{self.base_url} returned {len(rows)} embeddings for {len(texts)} texts ({model}).",
                fix="Choose another embedding model, or set embedder.provider = 'auto'.",
            )
        return [_pooled(row.embedding) for row in rows]


def _pooled(embedding: Any) -> list[float]:
    """One vector: as sent, or the mean of per-token vectors (llama.cpp's server sends those for a model without a
    pooling layer, such as a chat model served with ``--embedding``)."""
    if embedding and isinstance(embedding[0], list):
        rows = [list(map(float, token)) for token in embedding]
        return [sum(column) / len(rows) for column in zip(*rows, strict=True)]
    return list(map(float, embedding))


def parse_json_answer(content: str, who: str) -> Any:
    """The JSON in a model's answer, tolerating a Markdown code fence around it (small models add one).

    Raises:
        ModelAnswerUnusable: there is no JSON in it.
    """
    text = content.strip()
    for fence in _FENCE:
        if text.startswith(fence) and text.endswith("```") and len(text) > len(fence) + 3:
            text = text[len(fence) : -3].strip()
            break
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ModelAnswerUnusable(
            f"{who} answered with text that is not JSON.",
            fix="Try another model, or set llm.provider = 'simple'.",
            details={"answer_start": content[:80]},
        ) from exc


def _refused_format(exc: openai.APIStatusError) -> bool:
    """Whether the server refused the request's shape rather than failed: a 400 or 422, or a 500 that names
    ``response_format`` (llama-cpp-python answers its own validation error with a 500)."""
    text = _message(exc).lower()
    if "model" in text and ("not found" in text or "does not exist" in text):
        return False
    if exc.status_code in (400, 422):
        return True
    return exc.status_code == 500 and ("response_format" in text or "json_schema" in text)


def _message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return str(getattr(exc, "message", "") or exc)


def unavailable(base_url: str, model: str, exc: BaseException) -> ModelUnavailable:
    """The user-facing problem for a failed call, with what to do about it."""
    import openai

    what = f"the model {model!r}" if model else "the server"
    if isinstance(exc, openai.APITimeoutError):
        return ModelUnavailable(
            f"The model server at {base_url} did not answer in time.",
            fix="Check that the server is not overloaded, or raise llm.timeout_s.",
        )
    if isinstance(exc, openai.APIConnectionError):
        return ModelUnavailable(
            f"No model server is answering at {base_url}.",
            fix="Start the server (LM Studio, llama.cpp, vLLM, LocalAI, Jan) or correct llm.openai_base_url.",
        )
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return ModelUnavailable(
            f"The model server at {base_url} refused the API key (HTTP {exc.status_code}).",
            fix="Set llm.openai_api_key to the key the server expects.",
        )
    if isinstance(exc, openai.APIStatusError):
        text = _message(exc)
        if exc.status_code == 404:
            if "model" in text.lower():
                return ModelUnavailable(
                    f"The model server at {base_url} does not have {what}: {text}",
                    fix="Load the model in the server, or choose one it lists in Settings.",
                )
            return ModelUnavailable(
                f"{base_url} does not offer the OpenAI API here (HTTP 404).",
                fix="llm.openai_base_url usually ends in /v1, e.g. http://127.0.0.1:1234/v1.",
            )
        return ModelUnavailable(
            f"The model server at {base_url} failed on {what} (HTTP {exc.status_code}): {text}",
            fix="See the model server's own log.",
        )
    return ModelUnavailable(
        f"The model server at {base_url} failed: {type(exc).__name__}: {exc}", fix="See the model server's own log."
    )


class OpenAILLM:
    """A chat model on an OpenAI-compatible server, asked for structured JSON."""

    def __init__(self, client: OpenAICompatClient, model: str) -> None:
        self._client = client
        self.model = model
        self.name = f"openai:{model}"

    def complete_json(
        self, system: str, user: str, schema: Mapping[str, Any], *, timeout_s: float | None = None
    ) -> Any:
        """Ask the model; see :meth:`OpenAICompatClient.chat_json`."""
        return self._client.chat_json(self.model, system, user, schema, timeout_s=timeout_s)
