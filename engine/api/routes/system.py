"""The endpoint's own state: ``GET /v6/health`` (public), the job queue and retrying failures.

Health is the one route served without a token, so it says nothing personal: no vault path, no
counts of memories, nothing a web page probing localhost could use — only what a client needs to
know it may connect, and the vault's random id, so that whoever finds a Cairn on a port can tell
whether it serves the vault they mean.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from engine.api.deps import VaultDep
from engine.api.models.system import JobOut, JobsOut, ModelOut, RetryBody, RetryOut, VectorsOut
from engine.version import __version__

HEALTH_PATH = "/v6/health"

router = APIRouter(prefix="/v6", tags=["system"])


class Health(BaseModel):
    """Whether the endpoint is up and which machinery it runs on."""

    model_config = ConfigDict(
        frozen=True,
        json_schema_extra={
            "examples": [
                {
                    "status": "ok",
                    "version": "0.1.0",
                    "vault_id": "3f9c2a71b0de",
                    "schema_version": 1,
                    "llm_engine": "simple",
                    "embedder": "hashing-v1-384",
                    "vector_backend": "sqlite-vec",
                    "queue_depth": 0,
                }
            ]
        },
    )

    status: Literal["ok"] = Field(description="Always 'ok' when answered (a closing vault answers 503).")
    version: str = Field(description="Cairn's version.")
    vault_id: str = Field(
        description="The served vault's stable id: random, made when the vault is first opened (never its path). "
        "Two endpoints with the same id serve the same vault.",
    )
    schema_version: int = Field(description="Schema version of the vault database.")
    llm_engine: str = Field(description="'ollama:<model>' or 'simple' (the rule path).")
    embedder: str = Field(description="Identity of the embedding model in use.")
    vector_backend: str = Field(
        description="What searches vectors: 'sqlite-vec' (inside vault.db) or 'chroma' (a Chroma collection kept "
        "in step with vault.db).",
    )
    queue_depth: int = Field(description="Background jobs waiting or running.")


@router.get("/health", summary="Is the endpoint up (no token needed)")
def health(vault: VaultDep) -> Health:
    """Version and machinery; nothing personal."""
    return Health(
        status="ok",
        version=__version__,
        vault_id=vault.vault_id(),
        schema_version=vault.schema_version,
        llm_engine=vault.llm_engine,
        embedder=vault.embedder.model_id,
        vector_backend=vault.settings.vectors.backend,
        queue_depth=vault.jobs.queue_depth(),
    )


@router.get("/jobs", summary="Background job queue")
def jobs(vault: VaultDep) -> JobsOut:
    """Queued, running and parked jobs, by kind, and the parked failures with their errors; the embedder with a
    re-embedding's progress and the vectors waiting for it; the language model and its last error."""
    stats = vault.jobs.stats()
    vectors = vault.vector_status().as_dict()
    return JobsOut(
        queue_depth=stats.queued + stats.running,
        queued=stats.queued,
        running=stats.running,
        parked=stats.parked,
        by_kind=dict(stats.by_kind),
        failures=[JobOut.of(job) for job in stats.failures],
        vectors=VectorsOut.model_validate(vectors),
        model=ModelOut.model_validate(vault.model_status()),
    )


@router.post("/jobs/retry", summary="Retry failed jobs")
def retry_jobs(vault: VaultDep, body: RetryBody | None = None) -> RetryOut:
    """Requeue parked jobs (the given ids, or all of them) with a fresh attempt budget."""
    job_ids = body.job_ids if body is not None else None
    return RetryOut(requeued=vault.jobs.retry(job_ids))
