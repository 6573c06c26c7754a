"""The Ollama client wrapper: short explicit timeouts, errors turned into :class:`ModelUnavailable`.

The ``ollama`` package's default timeout is infinite and a timeout surfaces as a raw ``httpx``
exception, so every call here goes through a client built with ``httpx.Timeout(read, connect=…)``
and a single error translation.  Nothing here talks to any host other than the configured Ollama
address: proxy environment variables are ignored, because ``httpx`` would otherwise send prompts
(which contain the user's memories) through ``HTTP_PROXY`` even for a loopback address.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from engine.errors import ModelAnswerUnusable, ModelUnavailable

if TYPE_CHECKING:
    import ollama

log = logging.getLogger(__name__)


def canonical_model_name(name: str) -> str:
    """Ollama's form of a model name: lower case, with a tag (``:latest`` when none is given).

    The tag is what follows a colon in the last path segment, so a registry address with a port
    (``host:5000/library/llama3``) still gets ``:latest``.
    """
    name = name.strip().lower()
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


@dataclass(frozen=True, slots=True)
class OllamaStatus:
    """What a probe of the Ollama server found."""

    host: str
    reachable: bool
    version: str = ""
    models: tuple[str, ...] = ()
    error: str = ""

    def has_model(self, name: str) -> bool:
        """True when ``name`` (with or without a ``:tag``, any case) is installed."""
        wanted = canonical_model_name(name)
        return any(canonical_model_name(m) == wanted for m in self.models)


class OllamaClient:
    """Thin, typed access to the Ollama HTTP API (chat with JSON schema, embed, tags, version)."""

    def __init__(self, host: str, *, timeout_s: float = 60.0, connect_timeout_s: float = 2.0) -> None:
        # Ollama's own convention allows "127.0.0.1:11434" without a scheme; httpx does not.
        host = host.strip().rstrip("/")
        self.host = host if "://" in host else f"http://{host}"
        self._connect_timeout = connect_timeout_s
        # One connection pool for every client made here: a client with another timeout then costs
        # a fraction of a millisecond instead of a new pool and TLS context (~50 ms) each time,
        # and no pool is left behind unclosed.  httpx applies the timeout per request.
        self._transport = httpx.HTTPTransport()
        self._client = self._new_client(timeout_s)

    def _new_client(self, timeout_s: float) -> ollama.Client:
        import ollama  # imported late: the package is only needed when a model is used

        timeout = httpx.Timeout(timeout_s, connect=self._connect_timeout)
        return ollama.Client(host=self.host, timeout=timeout, trust_env=False, transport=self._transport)

    def close(self) -> None:
        """Close pooled connections; later calls open new ones."""
        self._transport.close()

    def probe(self) -> OllamaStatus:
        """Check reachability, version and installed models without raising."""
        timeout = httpx.Timeout(self._connect_timeout * 2, connect=self._connect_timeout)
        try:
            with httpx.Client(timeout=timeout, trust_env=False) as h:
                version = _json_object(h.get(f"{self.host}/api/version")).get("version", "")
                tags = _json_object(h.get(f"{self.host}/api/tags")).get("models")
        except (httpx.HTTPError, ValueError, OSError) as exc:
            return OllamaStatus(self.host, False, error=_describe(exc))
        if not isinstance(tags, list):
            return OllamaStatus(self.host, False, error="/api/tags did not list models")
        names = tuple(
            sorted(
                str(m.get("name") or m.get("model") or "")
                for m in tags
                if isinstance(m, dict) and (m.get("name") or m.get("model"))
            )
        )
        return OllamaStatus(self.host, True, version=str(version), models=names)

    def chat_json(
        self,
        model: str,
        system: str,
        user: str,
        schema: Mapping[str, Any],
        *,
        timeout_s: float | None = None,
    ) -> Any:
        """Ask ``model`` for JSON matching ``schema`` (Ollama structured outputs), parsed.

        Raises:
            ModelUnavailable: the server is down, the model missing, the call timed out, or the
                answer is not JSON.
        """
        # A per-call timeout (query analysis during recall) needs a client of its own; it shares
        # the connection pool, so it is cheap and must not be closed (that would close the pool).
        client = self._client if timeout_s is None else self._new_client(timeout_s)
        try:
            response = client.chat(
                model=model,
                messages=[
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                ],
                format=dict(schema),
                options={"temperature": 0},
                stream=False,
            )
        except Exception as exc:
            raise _unavailable(self.host, model, exc, endpoint="/api/chat") from exc
        content = response.message.content or ""
        try:
            return json.loads(content)
        except json.JSONDecodeError as exc:
            raise ModelAnswerUnusable(
                f"Ollama model {model} answered with text that is not JSON.",
                fix="Try another model, or set llm.provider = 'simple'.",
                details={"answer_start": content[:80]},
            ) from exc

    def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]:
        """Embed ``texts`` with ``model`` (``/api/embed``); one vector per text, in order.

        Raises:
            ModelUnavailable: as :meth:`chat_json`, or the server returned a different number of
                vectors than texts sent.
        """
        try:
            response = self._client.embed(model=model, input=list(texts))
        except Exception as exc:
            raise _unavailable(self.host, model, exc, endpoint="/api/embed") from exc
        vectors = [list(map(float, v)) for v in response.embeddings]
        if len(vectors) != len(texts):
            # Ollama drops an empty single input instead of embedding it; a silent mismatch would
            # attach vectors to the wrong texts.
            raise ModelUnavailable(
                f"Ollama model {model} returned {len(vectors)} embeddings for {len(texts)} texts.",
                fix="Choose another embedding model, or set embedder.provider = 'auto'.",
            )
        return vectors


def _json_object(response: httpx.Response) -> dict[str, Any]:
    """The JSON object of a successful response; raises for an HTTP error or a non-object body."""
    response.raise_for_status()
    data = response.json()
    if not isinstance(data, dict):
        raise ValueError(f"{response.url.path} did not answer with a JSON object")
    return data


def _describe(exc: BaseException) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return "timed out"
    if isinstance(exc, (httpx.ConnectError, ConnectionError)):
        return "connection refused"
    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code} from {exc.request.url.path}"
    return type(exc).__name__ + (f": {exc}" if str(exc) else "")


def _unavailable(host: str, model: str, exc: BaseException, *, endpoint: str = "") -> ModelUnavailable:
    status = getattr(exc, "status_code", None)
    text = str(getattr(exc, "error", "") or exc)
    lowered = text.lower()
    # Ollama says `model "x" not found, try pulling it first` (chat, embed) or `model 'x' not
    # found` (show); a 404 without "model" is a route the server lacks (not Ollama, or too old).
    if "model" in lowered and "not found" in lowered:
        return ModelUnavailable(
            f"The Ollama model {model!r} is not installed on {host}.",
            fix=f"Run `ollama pull {model}`, or choose an installed model in Settings.",
        )
    if status == 404:
        return ModelUnavailable(
            f"{host} does not offer {endpoint or 'the Ollama API'} (HTTP 404).",
            fix="Check llm.ollama_host, or update Ollama (https://ollama.com/download).",
        )
    if status == 400 and "does not support" in lowered:
        return ModelUnavailable(
            f"The Ollama model {model!r} cannot do this: {text}.",
            fix="Use a chat model for llm.model and an embedding model for embedder.ollama_model.",
        )
    if isinstance(exc, httpx.TimeoutException):
        return ModelUnavailable(
            f"Ollama at {host} did not answer in time.",
            fix="Check that Ollama is not overloaded, or raise llm.timeout_s.",
        )
    if isinstance(exc, (httpx.ConnectError, ConnectionError)):
        return ModelUnavailable(
            f"Ollama is not running at {host}.",
            fix="Start Ollama (`ollama serve`) or set llm.provider = 'simple'.",
        )
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, OSError)):
        return ModelUnavailable(
            f"Ollama at {host} closed the connection without answering.",
            fix="See Ollama's own log: the model may have crashed or run out of memory.",
        )
    return ModelUnavailable(f"Ollama at {host} failed: {_describe(exc)}", fix="See Ollama's own log.")
