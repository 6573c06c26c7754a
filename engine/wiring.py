"""How a vault is wired to its models and vectors at opening: the Ollama and OpenAI-compatible clients it needs,
the embedder it uses (the one its vectors were made with, or the configured one and a migration to it), and the
vector index over them.

Kept out of :mod:`engine.vault` so the door holds opening, closing and its sub-objects; these functions decide and
build, the vault only calls them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from engine import paths
from engine.ai.embedders import Embedder, EmbedderChoice, embedder_for, resolve_embedder
from engine.ai.ollama import OllamaClient, OllamaStatus
from engine.ai.openai_compat import OpenAICompatClient
from engine.config import Settings
from engine.errors import ModelUnavailable
from engine.store import Store
from engine.vectors import SqliteVecIndex, VectorIndex
from engine.vectors.chroma import ChromaIndex, chroma_target
from engine.vectors.migration import (
    DualEmbedder,
    GuardedEmbedder,
    MigratingIndex,
    SpaceRef,
    migration_info,
    record_active,
    recorded_active,
    start_migration,
)

log = logging.getLogger(__name__)


def probe_ollama(settings: Settings) -> tuple[OllamaClient | None, OllamaStatus | None]:
    """Build the Ollama client and probe it once, unless no provider would use it."""
    if settings.llm.provider in ("simple", "openai") and settings.embedder.provider in ("hashing", "onnx", "openai"):
        return None, None
    client = OllamaClient(
        settings.llm.ollama_host, timeout_s=settings.llm.timeout_s, connect_timeout_s=settings.llm.connect_timeout_s
    )
    return client, client.probe()


def build_openai_client(settings: Settings, store: Store) -> OpenAICompatClient | None:
    """The client of the OpenAI-compatible server, when a provider or the vault's vectors (a space being migrated
    from, say) use it; built without contacting the server."""
    spaces = [s.model_id for s in (recorded_active(store),) if s is not None]
    running = migration_info(store)
    if running is not None:
        spaces += [running.from_model, running.to_model]
    wanted = "openai" in (settings.llm.provider, settings.embedder.provider)
    if not wanted and not any(model_id.startswith("openai:") for model_id in spaces):
        return None
    cfg = settings.llm
    return OpenAICompatClient(
        cfg.openai_base_url,
        api_key=cfg.openai_api_key,
        timeout_s=cfg.timeout_s,
        connect_timeout_s=cfg.connect_timeout_s,
    )


def resolve_vault_embedder(
    store: Store,
    settings: Settings,
    ollama: OllamaClient | None,
    status: OllamaStatus | None,
    openai_client: OpenAICompatClient | None,
) -> EmbedderChoice:
    """The embedder the settings choose; when that is a server's model that cannot be reached now, the vault keeps
    the embedder its vectors were made with (an outage is not a reason not to open, nor to switch), and says so.

    Raises:
        ModelUnavailable: the chosen embedder cannot be used and the vault has no embedder of its own yet.
    """
    try:
        return resolve_embedder(settings, paths.models_dir(), ollama=ollama, status=status, openai_client=openai_client)
    except ModelUnavailable as exc:
        running = migration_info(store)
        current = SpaceRef(running.to_model, 0) if running is not None else recorded_active(store)
        if current is None:
            raise
        dim = current.dim or int(
            store.scalar("SELECT dim FROM vector_spaces WHERE model_id = ?", (current.model_id,)) or 0
        )
        kept = (
            embedder_for(current.model_id, dim, paths.models_dir(), ollama=ollama, openai_client=openai_client)
            if dim
            else None
        )
        if kept is None:
            raise
        log.warning("the chosen embedder cannot be used now (%s); staying on %s", exc.message, current.model_id)
        return EmbedderChoice(
            kept,
            f"{current.model_id}, the vault's embedder",
            (f"the chosen embedder cannot be used now: {exc.message}; staying on {current.model_id}",),
        )


@dataclass(frozen=True, slots=True)
class VectorWiring:
    """The active embedder (guarded) and its own index; during a migration also the index and embedder that search
    both spaces (what the rest of the vault is given)."""

    embedder: GuardedEmbedder
    index: VectorIndex
    migrating: MigratingIndex | None
    dual: DualEmbedder | None


def plan_vectors(
    store: Store,
    settings: Settings,
    vault_paths: paths.VaultPaths,
    choice: EmbedderChoice,
    ollama: OllamaClient | None,
    status: OllamaStatus | None,
    openai_client: OpenAICompatClient | None,
    *,
    forced: bool,
) -> tuple[EmbedderChoice, VectorIndex, VectorWiring]:
    """The embedder and vector index the vault runs with, and a migration started when the embedder changed.

    The vault's recorded space wins over an ``auto`` choice that only differs because Ollama is down now (an outage
    is not a change: new vectors wait in the backlog until it is back); any other difference starts a migration to
    the chosen embedder, said in the choice's warnings (``auto`` never switches silently).
    """
    backoff = settings.jobs.backoff_s
    new = GuardedEmbedder(choice.embedder, first_backoff_s=backoff)
    notes = list(choice.warnings)
    reason = choice.reason
    recorded = recorded_active(store)
    running = migration_info(store)
    current = SpaceRef(running.to_model, 0) if running is not None else recorded
    if current is None:
        record_active(store, SpaceRef(new.model_id, new.dim))
    elif current.model_id != new.model_id:
        kept = None
        if not forced and settings.embedder.provider == "auto" and current.model_id.startswith("ollama:"):
            model = current.model_id.removeprefix("ollama:")
            if status is None or not status.reachable or not status.has_model(model):
                dim = int(store.scalar("SELECT dim FROM vector_spaces WHERE model_id = ?", (current.model_id,)) or 0)
                kept = embedder_for(current.model_id, dim, paths.models_dir(), ollama=ollama) if dim else None
        if kept is not None:
            new = GuardedEmbedder(kept, first_backoff_s=backoff)
            reason = f"{current.model_id}, the vault's embedder (Ollama is unavailable now: new vectors wait for it)"
            notes.append(f"{current.model_id} is unavailable; vectors of new items are queued until it is back")
        else:
            old = SpaceRef(
                running.from_model if running is not None else current.model_id,
                running.from_dim if running is not None else current.dim,
            )
            info = start_migration(
                store, old, SqliteVecIndex(store, new.model_id, new.dim), f"{current.model_id} → {new.model_id}"
            )
            notes.append(
                f"the embedder changed from {current.model_id} to {new.model_id}: re-embedding {info.total} items "
                "in the background; searches use both until it is done"
            )
            log.warning(
                "embedder changed from %s to %s: re-embedding %s items", current.model_id, new.model_id, info.total
            )
    base = vector_index(store, settings, vault_paths, new)
    running = migration_info(store)
    if running is not None and running.to_model == new.model_id:
        maker = embedder_for(
            running.from_model, running.from_dim, paths.models_dir(), ollama=ollama, openai_client=openai_client
        )
        if maker is None:
            notes.append(
                f"{running.from_model} cannot be used here: items not yet re-embedded are found by keyword only"
            )
        old_index = SqliteVecIndex(store, running.from_model, running.from_dim)
        dual = DualEmbedder(new, GuardedEmbedder(maker, first_backoff_s=backoff) if maker is not None else None)
        migrating = MigratingIndex(store, base, old_index)
        wiring = VectorWiring(new, base, migrating, dual)
        return EmbedderChoice(dual, reason, tuple(notes)), migrating, wiring
    return EmbedderChoice(new, reason, tuple(notes)), base, VectorWiring(new, base, None, None)


def vector_index(store: Store, settings: Settings, vault_paths: paths.VaultPaths, embedder: Embedder) -> VectorIndex:
    """The vector index the settings choose; both record vectors in ``vault.db`` (see :mod:`engine.vectors.chroma`)."""
    if settings.vectors.backend == "chroma":
        target = chroma_target(settings.vectors.chroma_url, vault_paths.chroma)
        return ChromaIndex(store, embedder.model_id, embedder.dim, target)
    return SqliteVecIndex(store, embedder.model_id, embedder.dim)
