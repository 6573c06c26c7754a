"""An OpenAI-compatible server as the vault's model and embedder (DESIGN §7), against the fake server over real HTTP.

The model's facts are kept and labelled with it; its vectors are the vault's space; junk answers and a server that
goes away fall back to the rule path with a warning and lose nothing; switching to it re-embeds in the open; and a
vault whose chosen server is down opens anyway, keeping its space and queueing vectors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import Settings, Vault
from engine.events import EventIn
from engine.recall.types import RecallRequest
from tests.engine.memory.support import ChangeLog, check_invariants, every_fact, one, open_vault
from tests.fakes.openai_server import DEFAULT_MODELS, FakeOpenAI

CHAT, EMBED = DEFAULT_MODELS
ZORB = "Every Sunday I play zorbball with Quentin."


def openai_settings(fake: FakeOpenAI, **changes: Any) -> Settings:
    return Settings().updated(
        {
            "llm.provider": "openai",
            "llm.openai_base_url": fake.url,
            "llm.openai_model": CHAT,
            "llm.timeout_s": 5.0,
            "embedder.provider": "openai",
            "embedder.openai_model": EMBED,
            "jobs.backoff_s": 0.02,
            **changes,
        }
    )


def zorbball(request: dict[str, Any]) -> Any:
    """The model's answer: a zorbball fact for the message that says so, nothing otherwise."""
    system = str(request["messages"][0]["content"])
    said = " ".join(str(m["content"]) for m in request["messages"])
    if system.startswith("You extract durable, personal facts") and f"<<<\n{ZORB}\n>>>" in said:
        return {"facts": [{"subject": "user", "predicate": "plays_sport", "object": "zorbball", "evidence": ZORB}]}
    return {"facts": []} if system.startswith("You extract") else None


def test_the_model_and_the_embedder_of_an_openai_server_are_the_vaults(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.on_chat(lambda r: zorbball(r) or _minimal(r))
    with open_vault(tmp_path / "v", openai_settings(fake_openai)) as vault:
        assert vault.llm_engine == f"openai:{CHAT}" and vault.embedder.model_id == f"openai:{EMBED}"
        vault.events.ingest(EventIn(conversation_id="c", content=ZORB))
        vault.events.ingest(EventIn(conversation_id="c", content="I live in Hanoi."))
        assert vault.jobs.wait_idle(120)
        fact = one(every_fact(vault), "plays_sport", "zorbball")
        assert fact.extractor == f"openai:{CHAT}"
        assert one(every_fact(vault), "lives_in", "Hanoi").extractor == "rules"
        spaces = {str(r[0]) for r in vault.store.query("SELECT model_id FROM vector_spaces")}
        assert spaces == {f"openai:{EMBED}"}
        embedded = {t for r in fake_openai.requests_to("/v1/embeddings") for t in r.body["input"]}
        assert ZORB in embedded
        answer = vault.recall(RecallRequest(conversation_id="asker", query="What sport do I play?"))
        assert any("zorbball" in b.content for b in answer.answer_facts) and not answer.routing.degraded
        assert vault.model_status()["engine"] == f"openai:{CHAT}" and vault.model_status()["last_error"] is None
        check_invariants(vault)
    assert fake_openai.errors == []


@pytest.mark.parametrize(
    "junk",
    [{"facts": [{"subject": "user"}]}, ["not", "an", "object"], "Sure! You live in Hanoi.", "stop"],
    ids=["wrong shape", "a list", "not json", "server gone"],
)
def test_junk_answers_and_a_vanished_server_lose_nothing(tmp_path: Path, fake_openai: FakeOpenAI, junk: Any) -> None:
    settings = openai_settings(fake_openai, **{"embedder.provider": "hashing"})
    with open_vault(tmp_path / "v", settings) as vault:
        if junk == "stop":
            fake_openai.stop()
        else:
            fake_openai.on_chat(lambda request: junk)
        feed = ChangeLog(vault)
        result = vault.events.ingest(EventIn(conversation_id="c", content="I live in Hanoi."))
        assert vault.jobs.wait_idle(120)
        fact = one(every_fact(vault), "lives_in", "Hanoi")
        assert fact.extractor == "rules" and fact.event_id == result.event_id
        assert vault.jobs.stats().parked == 0 and feed.of("job.failed") == []
        assert vault.conversations.event(result.event_id).status == "enriched"
        (warning,) = [c for c in feed.of("job.warning") if c.data["kind"] == "enrich"]
        assert "rule path" in warning.data["warnings"][0] or "not usable" in warning.data["warnings"][0]
        status = vault.model_status()
        if junk in ("stop", "Sure! You live in Hanoi."):
            assert status["last_error"] and status["last_error_at"]
        answer = vault.recall(RecallRequest(conversation_id="asker", query="Where do I live?"))
        assert any("Hanoi" in b.content for b in answer.answer_facts)
        check_invariants(vault)


def test_switching_to_the_servers_embedder_re_embeds_and_its_outage_keeps_the_space(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    offline = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    with open_vault(tmp_path / "v", offline) as vault:
        for i, text in enumerate([ZORB, "I live in Hanoi.", "My daughter Linh plays the violin."]):
            vault.events.ingest(EventIn(conversation_id="c", content=text, external_id=str(i)))
        assert vault.jobs.wait_idle(120)
        before = {int(r[0]) for r in vault.store.query("SELECT object_id FROM embeddings")}

    chosen = openai_settings(fake_openai, **{"llm.provider": "simple"})
    with open_vault(tmp_path / "v", chosen) as vault:
        assert vault.embedder.model_id == f"openai:{EMBED}"
        assert any("re-embedding" in w for w in vault.info().warnings)
        assert vault.jobs.wait_idle(120) and _until(lambda: vault.vector_status().migration is None, vault)
        rows = vault.store.query(
            "SELECT s.model_id, COUNT(e.object_id) FROM vector_spaces s JOIN embeddings e ON e.space_id = s.id "
            "GROUP BY s.id"
        )
        assert {(str(m), int(n)) for m, n in rows} == {(f"openai:{EMBED}", len(before))}

    fake_openai.stop()  # the chosen server is down at the next start: the vault opens on its own space anyway
    with open_vault(tmp_path / "v", chosen) as vault:
        assert vault.embedder.model_id == f"openai:{EMBED}"
        assert vault.vector_status().migration is None
        vault.events.ingest(EventIn(conversation_id="c", content="I work as a nurse."))
        assert vault.jobs.wait_idle(120)
        assert one(every_fact(vault), "works_as", "nurse").status == "active"
        assert vault.vector_status().queued >= 1
        answer = vault.recall(RecallRequest(conversation_id="asker", query="What is my job?"))
        assert answer.routing.degraded and any("nurse" in b.content for b in answer.answer_facts)
        fake_openai.start()
        assert _until(lambda: vault.vector_status().queued == 0, vault)
        check_invariants(vault)


def _minimal(request: dict[str, Any]) -> Any:
    """What the fake would answer by default: a minimal instance of the asked schema."""
    from tests.fakes.ollama import example_for_schema

    response_format = request.get("response_format") or {}
    schema = (response_format.get("json_schema") or {}).get("schema") or response_format.get("schema") or {}
    return example_for_schema(schema)


def _until(condition: Any, vault: Vault, timeout: float = 30.0) -> bool:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        vault.jobs.wait_idle(1)
        time.sleep(0.05)
    return bool(condition())
