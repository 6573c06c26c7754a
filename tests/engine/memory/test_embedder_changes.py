"""Models come and go without losing anything: switching embedders re-embeds in the open, an embedder outage degrades
and queues instead of failing, and every vector comes back.

Real vaults in temp folders, the real Ollama client against the fake Ollama server (real HTTP on loopback), the job
runner doing the re-embedding.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.plugins import build_plugin_manager
from engine import Vault
from engine.doctor import check_open_vault
from engine.events import EventIn
from engine.recall.types import RecallRequest
from tests.engine.memory.support import check_invariants
from tests.fakes.ollama import FakeOllama

EMBED_MODEL = "nomic-embed-text:latest"
TURNS = [
    "I live in Hanoi with my wife Mai.",
    "I work as a pastry chef at a small bakery.",
    "My daughter Linh plays the violin.",
]
NOTE = "# Sourdough\n\nFeed the starter at 9pm. Bake at 250 degrees for 40 minutes.\n"


def open_vault(path: Path, settings: Any, *, start_workers: bool = True) -> Vault:
    """A vault with the built-in parser plugins (documents are part of what must stay findable)."""
    return Vault.open(
        path, settings=settings, plugins=build_plugin_manager(load_entry_points=False), start_workers=start_workers
    )


def spaces(vault: Vault) -> dict[str, int]:
    """Vectors per recorded space."""
    rows = vault.store.query(
        "SELECT s.model_id, COUNT(e.object_id) FROM vector_spaces s LEFT JOIN embeddings e ON e.space_id = s.id "
        "GROUP BY s.id"
    )
    return {str(m): int(n) for m, n in rows}


def vectorised(vault: Vault) -> set[int]:
    return {int(r[0]) for r in vault.store.query("SELECT object_id FROM embeddings")}


def fill(vault: Vault) -> None:
    for i, text in enumerate(TURNS):
        vault.events.ingest(EventIn(conversation_id="c", content=text, external_id=str(i)))
    vault.documents.upload(text=NOTE, name="sourdough.md")
    assert vault.jobs.wait_idle(120)


def nearest(vault: Vault, text: str, k: int = 50) -> set[int]:
    query = vault.embedder.embed([text])[0]
    return {h.object_id for h in vault.vectors.search(query, k)}


def test_auto_finding_ollama_re_embeds_everything_and_nothing_is_invisible_meanwhile(
    tmp_path: Path, fake_ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAIRN_MODELS_DIR", str(tmp_path / "no-models"))
    fake_ollama.remove_model(EMBED_MODEL)  # Ollama has no embedding model yet: auto takes the built-in one
    settings = fake_ollama.settings({"llm.provider": "simple", "embedder.provider": "auto", "jobs.backoff_s": 0.02})
    with open_vault(tmp_path / "v", settings) as vault:
        assert vault.embedder.model_id == "hashing-v1-384"
        fill(vault)
        before = vectorised(vault)
        assert spaces(vault) == {"hashing-v1-384": len(before)} and len(before) >= 8

    fake_ollama.add_model(EMBED_MODEL)  # pulled: auto finds it at the next start, says so, and migrates
    with open_vault(tmp_path / "v", settings, start_workers=False) as vault:
        assert vault.embedder.model_id == "ollama:nomic-embed-text"
        status = vault.vector_status()
        assert status.migration is not None and status.migration.from_model == "hashing-v1-384"
        assert status.remaining == status.migration.total == len(before)
        assert any("re-embedding" in w for w in vault.info().warnings)
        (finding,) = [f for f in check_open_vault(vault).findings if f.check == "embedder"]
        assert finding.status == "warn" and f"0 of {len(before)} done" in finding.detail
        jobs = _jobs_json(vault)
        assert jobs["vectors"]["migration"]["remaining"] == len(before)
        assert jobs["vectors"]["migration"]["from_model"] == "hashing-v1-384"
        # nothing re-embedded yet, and nothing invisible: the old space answers for what it still holds
        assert before <= nearest(vault, "violin bakery Hanoi sourdough starter")
        answer = vault.recall(RecallRequest(conversation_id="asker", query="Where do I live?"))
        assert any("Hanoi" in b.content for b in answer.answer_facts) and not answer.routing.degraded

    with open_vault(tmp_path / "v", settings) as vault:  # resumed where it stopped
        assert vault.jobs.wait_idle(120)
        status = vault.vector_status()
        assert status.migration is None and status.remaining == 0
        assert spaces(vault) == {"ollama:nomic-embed-text": len(before)}  # the old space is dropped
        assert vectorised(vault) == before
        tables = {str(r[0]) for r in vault.store.query("SELECT name FROM sqlite_master WHERE name LIKE 'vec_%'")}
        assert not any(t.startswith("vec_1") for t in tables)
        assert before <= nearest(vault, "violin bakery Hanoi sourdough starter")
        embedded = {t for r in fake_ollama.requests_to("/api/embed") for t in r.texts()}
        assert set(TURNS) <= embedded  # really re-embedded with the new model
        check_invariants(vault)


def test_an_explicit_change_of_embedder_migrates_and_recall_keeps_working_during_it(tmp_path: Path) -> None:
    first = {"llm.provider": "simple", "embedder.provider": "hashing", "embedder.hashing_dim": 384}
    with open_vault(tmp_path / "v", _settings(first)) as vault:
        fill(vault)
        before = vectorised(vault)
    second = {**first, "embedder.hashing_dim": 256, "jobs.backoff_s": 0.02}
    with open_vault(tmp_path / "v", _settings(second), start_workers=False) as vault:
        assert vault.embedder.model_id == "hashing-v1-256"
        assert vault.vector_status().remaining == len(before)
        result = vault.recall(RecallRequest(conversation_id="asker", query="What instrument does Linh play?"))
        assert any("violin" in b.content for b in [*result.answer_facts, *result.supporting_facts])
    with open_vault(tmp_path / "v", _settings(second)) as vault:
        assert vault.jobs.wait_idle(120)
        assert spaces(vault) == {"hashing-v1-256": len(before)}
        check_invariants(vault)


def test_an_embedder_outage_degrades_queues_and_catches_up(tmp_path: Path, fake_ollama: FakeOllama) -> None:
    settings = fake_ollama.settings({"llm.provider": "simple", "embedder.provider": "ollama", "jobs.backoff_s": 0.05})
    with open_vault(tmp_path / "v", settings) as vault:
        assert vault.embedder.model_id == "ollama:nomic-embed-text"
        fake_ollama.stop()
        # enrichment keeps the rules' facts; nothing is parked
        result = vault.events.ingest(EventIn(conversation_id="c", content="I live in Hanoi."))
        assert vault.jobs.wait_idle(120)
        facts = vault.facts(limit=10)
        assert [(f.predicate, f.object_text) for f in facts] == [("lives_in", "Hanoi")]
        assert vault.jobs.stats().parked == 0
        assert vault.conversations.event(result.event_id).status == "enriched"
        # recall answers from the channels that work, and says what was missing
        answer = vault.recall(RecallRequest(conversation_id="asker", query="Where do I live?"))
        assert answer.routing.degraded and any("embedder unavailable" in n for n in answer.routing.notes)
        assert any("Hanoi" in b.content for b in [*answer.answer_facts, *answer.supporting_facts])
        # documents and extract answer as usual
        upload = vault.documents.upload(text=NOTE, name="sourdough.md")
        assert upload.status in ("processing", "ready")
        dry = vault.events.extract("I work as a nurse.")
        assert [d["object"] for d in dry.decisions] == ["nurse"]
        assert any("embedder unavailable" in w for w in dry.warnings)
        assert vault.jobs.wait_idle(120)
        status = vault.vector_status()
        assert status.queued >= 3 and status.last_error is not None  # fact, event, spans wait for their vectors
        (finding,) = [f for f in check_open_vault(vault).findings if f.check == "embedder"]
        assert (
            finding.status == "warn" and "wait for their vectors" in finding.detail and "last error" in finding.detail
        )
        assert _jobs_json(vault)["vectors"]["queued"] == status.queued
        waiting = {int(r[0]) for r in vault.store.query("SELECT object_id FROM vector_backlog")}
        assert not waiting & vectorised(vault)

        fake_ollama.start()  # back: the fill job's next try embeds what waited
        assert _until(lambda: vault.vector_status().queued == 0, vault)
        assert waiting <= vectorised(vault)
        assert vault.vector_status().last_error is None
        answer = vault.recall(RecallRequest(conversation_id="asker", query="Where do I live?"))
        assert not answer.routing.degraded
        check_invariants(vault)


def _settings(values: dict[str, Any]) -> Any:
    from engine.config import Settings

    return Settings().updated(values)


def _until(condition: Any, vault: Vault, timeout: float = 30.0) -> bool:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        vault.jobs.wait_idle(1)
        time.sleep(0.05)
    return bool(condition())


def _jobs_json(vault: Vault) -> Any:
    """``GET /v6/jobs`` over real HTTP on loopback, as a client sees it."""
    import httpx

    from engine.api.app import create_app
    from engine.api.server import EndpointServer

    token = vault.endpoint_token()
    server = EndpointServer(lambda port: create_app(vault, token=token, port=port), 0)
    server.start()
    try:
        with httpx.Client(trust_env=False, timeout=10) as http:
            response = http.get(f"{server.address}/v6/jobs", headers={"Authorization": f"Bearer {token}"})
    finally:
        server.stop()
    assert response.status_code == 200, response.text
    return response.json()
