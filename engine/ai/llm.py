"""The LLM seam and provider resolution (DESIGN §7).

``llm.provider = auto`` uses Ollama when it is reachable and has the configured model, else the
rule path ("simple").  A model that fails later degrades that one job to the rule path with a
visible warning; it never blocks ingest or recall.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from engine.ai.ollama import OllamaClient, OllamaStatus
from engine.config import Settings
from engine.errors import ModelUnavailable


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


def resolve_llm(settings: Settings, client: OllamaClient | None, status: OllamaStatus | None) -> LLMChoice:
    """Choose the LLM per ``settings.llm.provider``."""
    cfg = settings.llm
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


def model_error_text(exc: ModelUnavailable) -> str:
    """A one-line warning for a job that fell back to the rule path."""
    return f"model unavailable, used the rule path: {exc.message}"
