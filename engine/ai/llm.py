"""The LLM seam and provider resolution (DESIGN §7).

``llm.provider = auto`` uses Ollama when it is reachable and has the configured model, else the
rule path ("simple").  A model that fails later degrades that one job to the rule path with a
visible warning; it never blocks ingest or recall.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from engine.ai.ollama import OllamaClient, OllamaStatus
from engine.ai.openai_compat import OpenAICompatClient, OpenAILLM
from engine.config import Settings
from engine.errors import ModelAnswerUnusable, ModelUnavailable

log = logging.getLogger(__name__)

#: After a model failure, it is skipped for this long (doubling per failure up to the max) before it is tried
#: again: a model server that is down must not cost every job its timeout.
FIRST_SKIP_S = 5.0
MAX_SKIP_S = 300.0


@runtime_checkable
class LLM(Protocol):
    """A model that answers with JSON matching a schema."""

    name: str

    def complete_json(
        self, system: str, user: str, schema: Mapping[str, Any], *, timeout_s: float | None = None
    ) -> Any:
        """Return the model's parsed JSON answer; raise :class:`ModelUnavailable` on any failure."""
        ...


class OllamaLLM:
    """An Ollama chat model used through structured outputs."""

    def __init__(self, client: OllamaClient, model: str) -> None:
        self._client = client
        self.model = model
        self.name = f"ollama:{model}"

    def complete_json(
        self, system: str, user: str, schema: Mapping[str, Any], *, timeout_s: float | None = None
    ) -> Any:
        """Ask the model; see :meth:`OllamaClient.chat_json`."""
        return self._client.chat_json(self.model, system, user, schema, timeout_s=timeout_s)


@dataclass(frozen=True, slots=True)
class LLMChoice:
    """The model in use (``None`` = rule path only), its engine name and why."""

    llm: LLM | None
    engine: str
    reason: str


def resolve_llm(
    settings: Settings,
    client: OllamaClient | None,
    status: OllamaStatus | None,
    *,
    openai_client: OpenAICompatClient | None = None,
) -> LLMChoice:
    """Choose the LLM per ``settings.llm.provider``.

    An explicit server (``ollama``, ``openai``) is used even while it is down: each job falls back to the rule path
    with a warning, and the guard (:class:`GuardedLLM`) notices when it answers again.
    """
    cfg = settings.llm
    if cfg.provider == "openai":
        if openai_client is None:
            return LLMChoice(None, "simple", "no client for the OpenAI-compatible server")
        llm = OpenAILLM(openai_client, cfg.openai_model)
        found = openai_client.probe()
        if not found.reachable:
            return LLMChoice(llm, llm.name, f"{found.base_url} unavailable now ({found.error})")
        if not found.has_model(cfg.openai_model):
            listed = ", ".join(found.models[:5])
            return LLMChoice(llm, llm.name, f"{found.base_url} does not list {cfg.openai_model} (it has {listed})")
        return LLMChoice(llm, llm.name, f"OpenAI-compatible server at {found.base_url}")
    if cfg.provider == "simple" or client is None:
        return LLMChoice(None, "simple", "llm.provider is 'simple'" if cfg.provider == "simple" else "no client")
    probe = status or client.probe()
    if probe.reachable and probe.has_model(cfg.model):
        return LLMChoice(
            OllamaLLM(client, cfg.model),
            f"ollama:{cfg.model}",
            f"Ollama {probe.version} at {probe.host}",
        )
    why = probe.error or f"model {cfg.model} is not installed"
    if cfg.provider == "ollama":
        # Explicit choice: keep trying Ollama per job (each failure falls back with a warning).
        return LLMChoice(OllamaLLM(client, cfg.model), f"ollama:{cfg.model}", f"Ollama unavailable now ({why})")
    return LLMChoice(None, "simple", f"Ollama not used: {why}")


def model_error_text(exc: ModelUnavailable, instead: str = "the rule path") -> str:
    """A one-line warning for a job that fell back to the rule path."""
    what = "model answer not usable" if isinstance(exc, ModelAnswerUnusable) else "model unavailable"
    return f"{what}, used {instead}: {exc.message}"


class GuardedLLM:
    """A model whose failures are remembered: after one, calls are skipped at once (``ModelUnavailable``, so each
    job falls back to the rule path without waiting out a timeout) until a back-off has passed — 5 s, doubling to
    5 min — and the next call probes the model again.  The last error and its time are what ``cairn doctor``,
    ``/v6/jobs`` and the Settings view show; an answer of the wrong shape is recorded too (:meth:`note_error`)."""

    def __init__(
        self, inner: LLM, *, first_skip_s: float = FIRST_SKIP_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self._first_skip_s = first_skip_s
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._skip_until = 0.0
        self.last_error: tuple[str, float] | None = None
        self.recovered_at: float | None = None

    def complete_json(
        self, system: str, user: str, schema: Mapping[str, Any], *, timeout_s: float | None = None
    ) -> Any:
        """Ask the model, or raise :class:`ModelUnavailable` (at once while a failure is being backed off from)."""
        with self._lock:
            skipping = self._failures > 0 and self._clock() < self._skip_until
        if skipping:
            raise ModelUnavailable(
                f"{self.name} skipped after a failure: {self.last_error[0] if self.last_error else ''}"
            )
        try:
            answer = self.inner.complete_json(system, user, schema, timeout_s=timeout_s)
        except ModelAnswerUnusable as exc:
            self.note_error(exc.message)  # it answered: not down, so not skipped
            raise
        except ModelUnavailable as exc:
            with self._lock:
                self._failures += 1
                skip = min(MAX_SKIP_S, self._first_skip_s * 2 ** (self._failures - 1))
                self._skip_until = self._clock() + skip
                self.last_error = (exc.message, time.time())
            log.warning("model %s failed (%s); skipped for %.0f s", self.name, exc.message, skip)
            raise
        if self._failures:
            with self._lock:
                self._failures = 0
                self.recovered_at = time.time()
            log.info("model %s answers again", self.name)
        return answer

    def note_error(self, message: str) -> None:
        """Record an answer that could not be used (it does not make the model skipped)."""
        self.last_error = (message, time.time())
